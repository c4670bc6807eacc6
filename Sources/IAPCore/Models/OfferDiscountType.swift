/// The payment mode of a subscription offer.
///
/// Mirrors Apple's `OfferDiscountType`, the type of the `offerDiscountType` field of signed transactions and
/// renewal information.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct OfferDiscountType: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A free trial (`FREE_TRIAL`).
    public static let freeTrial = OfferDiscountType(rawValue: "FREE_TRIAL")
    /// A discounted price paid each period (`PAY_AS_YOU_GO`).
    public static let payAsYouGo = OfferDiscountType(rawValue: "PAY_AS_YOU_GO")
    /// A discounted price paid once for the whole offer (`PAY_UP_FRONT`).
    public static let payUpFront = OfferDiscountType(rawValue: "PAY_UP_FRONT")
    /// A one-time offer (`ONE_TIME`).
    public static let oneTime = OfferDiscountType(rawValue: "ONE_TIME")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [OfferDiscountType] = [
        .freeTrial,
        .payAsYouGo,
        .payUpFront,
        .oneTime,
    ]
}
