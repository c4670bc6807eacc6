/// The state of an auto-renewable subscription.
///
/// Mirrors Apple's `Status`, the type of the `status` field of notification data and of the subscription status
/// API.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct SubscriptionStatus: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: Int32

    /// Creates a value from its wire form, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The subscription is active (`1`).
    public static let active = SubscriptionStatus(rawValue: 1)
    /// The subscription expired (`2`).
    public static let expired = SubscriptionStatus(rawValue: 2)
    /// The App Store is retrying a failed renewal (`3`).
    public static let billingRetry = SubscriptionStatus(rawValue: 3)
    /// Renewal failed and the subscription is in its billing grace period (`4`).
    public static let billingGracePeriod = SubscriptionStatus(rawValue: 4)
    /// The App Store revoked the subscription (`5`).
    public static let revoked = SubscriptionStatus(rawValue: 5)

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [SubscriptionStatus] = [
        .active,
        .expired,
        .billingRetry,
        .billingGracePeriod,
        .revoked,
    ]
}
