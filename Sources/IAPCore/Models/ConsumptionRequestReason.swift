/// The reason the customer gave when asking for a refund.
///
/// Mirrors Apple's `ConsumptionRequestReason`, the type of the `consumptionRequestReason` field of the data of a
/// `CONSUMPTION_REQUEST` notification.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct ConsumptionRequestReason: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The customer did not mean to buy (`UNINTENDED_PURCHASE`).
    public static let unintendedPurchase = ConsumptionRequestReason(rawValue: "UNINTENDED_PURCHASE")
    /// The customer did not receive the content (`FULFILLMENT_ISSUE`).
    public static let fulfillmentIssue = ConsumptionRequestReason(rawValue: "FULFILLMENT_ISSUE")
    /// The customer is not satisfied with the purchase (`UNSATISFIED_WITH_PURCHASE`).
    public static let unsatisfiedWithPurchase = ConsumptionRequestReason(rawValue: "UNSATISFIED_WITH_PURCHASE")
    /// A legal reason (`LEGAL`).
    public static let legal = ConsumptionRequestReason(rawValue: "LEGAL")
    /// Another reason (`OTHER`).
    public static let other = ConsumptionRequestReason(rawValue: "OTHER")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [ConsumptionRequestReason] = [
        .unintendedPurchase,
        .fulfillmentIssue,
        .unsatisfiedWithPurchase,
        .legal,
        .other,
    ]
}
