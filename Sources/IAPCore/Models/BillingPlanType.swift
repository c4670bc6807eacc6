/// How the customer pays for a subscription with a commitment.
///
/// Mirrors Apple's `BillingPlanType`, the type of the `billingPlanType` field of a signed transaction.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct BillingPlanType: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The whole commitment is billed at once (`BILLED_UPFRONT`).
    public static let billedUpfront = BillingPlanType(rawValue: "BILLED_UPFRONT")
    /// The commitment is billed monthly (`MONTHLY`).
    public static let monthly = BillingPlanType(rawValue: "MONTHLY")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [BillingPlanType] = [
        .billedUpfront,
        .monthly,
    ]
}
