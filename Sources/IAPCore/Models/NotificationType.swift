/// The event an App Store Server Notification V2 reports.
///
/// Mirrors Apple's `NotificationTypeV2`, the type of the `notificationType` field of a decoded notification
/// payload. Read it together with ``NotificationSubtype``.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct NotificationType: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The customer subscribed to an auto-renewable subscription (`SUBSCRIBED`).
    public static let subscribed = NotificationType(rawValue: "SUBSCRIBED")
    /// The customer changed the subscription plan (`DID_CHANGE_RENEWAL_PREF`).
    public static let didChangeRenewalPref = NotificationType(rawValue: "DID_CHANGE_RENEWAL_PREF")
    /// The customer turned auto-renew on or off (`DID_CHANGE_RENEWAL_STATUS`).
    public static let didChangeRenewalStatus = NotificationType(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    /// The customer redeemed a promotional offer or offer code (`OFFER_REDEEMED`).
    public static let offerRedeemed = NotificationType(rawValue: "OFFER_REDEEMED")
    /// The subscription renewed (`DID_RENEW`).
    public static let didRenew = NotificationType(rawValue: "DID_RENEW")
    /// The subscription expired (`EXPIRED`).
    public static let expired = NotificationType(rawValue: "EXPIRED")
    /// The subscription failed to renew because of a billing issue (`DID_FAIL_TO_RENEW`).
    public static let didFailToRenew = NotificationType(rawValue: "DID_FAIL_TO_RENEW")
    /// The billing grace period ended without renewing (`GRACE_PERIOD_EXPIRED`).
    public static let gracePeriodExpired = NotificationType(rawValue: "GRACE_PERIOD_EXPIRED")
    /// The system informed the customer of a price increase (`PRICE_INCREASE`).
    public static let priceIncrease = NotificationType(rawValue: "PRICE_INCREASE")
    /// The App Store refunded a transaction (`REFUND`).
    public static let refund = NotificationType(rawValue: "REFUND")
    /// The App Store declined a refund request (`REFUND_DECLINED`).
    public static let refundDeclined = NotificationType(rawValue: "REFUND_DECLINED")
    /// The customer asked for a refund; Apple asks for consumption data (`CONSUMPTION_REQUEST`).
    public static let consumptionRequest = NotificationType(rawValue: "CONSUMPTION_REQUEST")
    /// The App Store extended the subscription renewal date (`RENEWAL_EXTENDED`).
    public static let renewalExtended = NotificationType(rawValue: "RENEWAL_EXTENDED")
    /// Family Sharing access to the purchase ended (`REVOKE`).
    public static let revoke = NotificationType(rawValue: "REVOKE")
    /// A test notification requested through the App Store Server API (`TEST`).
    public static let test = NotificationType(rawValue: "TEST")
    /// A mass renewal-date extension finished or failed (`RENEWAL_EXTENSION`).
    public static let renewalExtension = NotificationType(rawValue: "RENEWAL_EXTENSION")
    /// The App Store reversed a previously granted refund (`REFUND_REVERSED`).
    public static let refundReversed = NotificationType(rawValue: "REFUND_REVERSED")
    /// An external purchase token was not reported (`EXTERNAL_PURCHASE_TOKEN`).
    public static let externalPurchaseToken = NotificationType(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    /// The customer bought a consumable, non-consumable or non-renewing subscription (`ONE_TIME_CHARGE`).
    public static let oneTimeCharge = NotificationType(rawValue: "ONE_TIME_CHARGE")
    /// A parent or guardian withdrew consent for a child's app use (`RESCIND_CONSENT`).
    public static let rescindConsent = NotificationType(rawValue: "RESCIND_CONSENT")
    /// The metadata of an Advanced Commerce subscription changed (`METADATA_UPDATE`).
    public static let metadataUpdate = NotificationType(rawValue: "METADATA_UPDATE")
    /// A subscription migrated to Advanced Commerce (`MIGRATION`).
    public static let migration = NotificationType(rawValue: "MIGRATION")
    /// The price of an Advanced Commerce subscription changed (`PRICE_CHANGE`).
    public static let priceChange = NotificationType(rawValue: "PRICE_CHANGE")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [NotificationType] = [
        .subscribed,
        .didChangeRenewalPref,
        .didChangeRenewalStatus,
        .offerRedeemed,
        .didRenew,
        .expired,
        .didFailToRenew,
        .gracePeriodExpired,
        .priceIncrease,
        .refund,
        .refundDeclined,
        .consumptionRequest,
        .renewalExtended,
        .revoke,
        .test,
        .renewalExtension,
        .refundReversed,
        .externalPurchaseToken,
        .oneTimeCharge,
        .rescindConsent,
        .metadataUpdate,
        .migration,
        .priceChange,
    ]
}
