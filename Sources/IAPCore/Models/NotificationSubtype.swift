/// The detail of the event a notification reports.
///
/// Mirrors Apple's `Subtype`, the type of the `subtype` field of a decoded notification payload. Many
/// notification types carry no subtype.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct NotificationSubtype: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The customer bought the subscription for the first time (`INITIAL_BUY`).
    public static let initialBuy = NotificationSubtype(rawValue: "INITIAL_BUY")
    /// The customer subscribed again to the same group (`RESUBSCRIBE`).
    public static let resubscribe = NotificationSubtype(rawValue: "RESUBSCRIBE")
    /// The customer downgraded; it takes effect at the next renewal (`DOWNGRADE`).
    public static let downgrade = NotificationSubtype(rawValue: "DOWNGRADE")
    /// The customer upgraded; it takes effect at once (`UPGRADE`).
    public static let upgrade = NotificationSubtype(rawValue: "UPGRADE")
    /// The customer turned auto-renew on (`AUTO_RENEW_ENABLED`).
    public static let autoRenewEnabled = NotificationSubtype(rawValue: "AUTO_RENEW_ENABLED")
    /// The customer or the App Store turned auto-renew off (`AUTO_RENEW_DISABLED`).
    public static let autoRenewDisabled = NotificationSubtype(rawValue: "AUTO_RENEW_DISABLED")
    /// The subscription expired after the customer turned auto-renew off (`VOLUNTARY`).
    public static let voluntary = NotificationSubtype(rawValue: "VOLUNTARY")
    /// The subscription expired after billing retry ended (`BILLING_RETRY`).
    public static let billingRetry = NotificationSubtype(rawValue: "BILLING_RETRY")
    /// The subscription expired because the customer did not consent to a price increase (`PRICE_INCREASE`).
    public static let priceIncrease = NotificationSubtype(rawValue: "PRICE_INCREASE")
    /// Renewal failed and the subscription is in its billing grace period (`GRACE_PERIOD`).
    public static let gracePeriod = NotificationSubtype(rawValue: "GRACE_PERIOD")
    /// The customer has not yet responded to a price increase (`PENDING`).
    public static let pending = NotificationSubtype(rawValue: "PENDING")
    /// The customer accepted a price increase, or none was needed (`ACCEPTED`).
    public static let accepted = NotificationSubtype(rawValue: "ACCEPTED")
    /// A previously failed renewal succeeded (`BILLING_RECOVERY`).
    public static let billingRecovery = NotificationSubtype(rawValue: "BILLING_RECOVERY")
    /// The subscription expired because the product was not for sale (`PRODUCT_NOT_FOR_SALE`).
    public static let productNotForSale = NotificationSubtype(rawValue: "PRODUCT_NOT_FOR_SALE")
    /// A mass renewal-date extension finished (`SUMMARY`).
    public static let summary = NotificationSubtype(rawValue: "SUMMARY")
    /// A renewal-date extension failed for a subscription (`FAILURE`).
    public static let failure = NotificationSubtype(rawValue: "FAILURE")
    /// An external purchase token was not reported (`UNREPORTED`).
    public static let unreported = NotificationSubtype(rawValue: "UNREPORTED")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [NotificationSubtype] = [
        .initialBuy,
        .resubscribe,
        .downgrade,
        .upgrade,
        .autoRenewEnabled,
        .autoRenewDisabled,
        .voluntary,
        .billingRetry,
        .priceIncrease,
        .gracePeriod,
        .pending,
        .accepted,
        .billingRecovery,
        .productNotForSale,
        .summary,
        .failure,
        .unreported,
    ]
}
