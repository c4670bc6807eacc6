/// Where a product's entitlement stands at an instant.
///
/// Auto-renewable subscriptions use every state; non-consumables are `active` or `revoked`; non-renewing
/// subscriptions are `active`, `notStarted`, `expired` or `revoked`. ``ProductEntitlement/hasAccess`` is `true` exactly for
/// ``active``, ``willExpire`` and ``gracePeriod``.
public enum EntitlementState: String, Codable, Sendable, Hashable, CaseIterable {
    /// Owned, or subscribed and set to renew.
    case active
    /// Subscribed until the period ends, with automatic renewal turned off.
    case willExpire
    /// The renewal failed and the App Store is retrying; access continues until the grace period ends.
    case gracePeriod
    /// The renewal failed, the grace period (if any) is over, and the App Store is still retrying; no access.
    case billingRetry
    /// The subscription or the access period ended.
    case expired
    /// The App Store refunded or revoked the purchase.
    case revoked
    /// The purchase's access begins after the instant asked about: its purchase date is ahead of the server's clock
    /// by more than ``EntitlementEngine/clockSkewTolerance`` (a clock that is behind). Never reported as `expired`;
    /// no access until it starts.
    case notStarted

    /// Whether the state gives access to the product: `active`, `willExpire` or `gracePeriod`.
    public var grantsAccess: Bool {
        switch self {
        case .active, .willExpire, .gracePeriod: true
        case .billingRetry, .expired, .revoked, .notStarted: false
        }
    }
}
