public import IAPCore
/// Whether the app delivered a consumable or non-consumable purchase, and why not.
///
/// Mirrors Apple's `DeliveryStatus`, the type of the `deliveryStatus` field of a consumption request (version 2).
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and ``isKnown`` is `false`
/// for it. Never `switch` exhaustively over the known values.
public struct DeliveryStatus: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The app delivered the purchase and it works (`DELIVERED`).
    public static let delivered = DeliveryStatus(rawValue: "DELIVERED")
    /// The app did not deliver it because of a quality issue (`UNDELIVERED_QUALITY_ISSUE`).
    public static let undeliveredQualityIssue = DeliveryStatus(rawValue: "UNDELIVERED_QUALITY_ISSUE")
    /// The app delivered the wrong item (`UNDELIVERED_WRONG_ITEM`).
    public static let undeliveredWrongItem = DeliveryStatus(rawValue: "UNDELIVERED_WRONG_ITEM")
    /// The app did not deliver it because of a server outage (`UNDELIVERED_SERVER_OUTAGE`).
    public static let undeliveredServerOutage = DeliveryStatus(rawValue: "UNDELIVERED_SERVER_OUTAGE")
    /// The app did not deliver it for another reason (`UNDELIVERED_OTHER`).
    public static let undeliveredOther = DeliveryStatus(rawValue: "UNDELIVERED_OTHER")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [DeliveryStatus] = [
        .delivered,
        .undeliveredQualityIssue,
        .undeliveredWrongItem,
        .undeliveredServerOutage,
        .undeliveredOther,
    ]
}
