/// How the customer pays for the next commitment period of a subscription.
///
/// Mirrors Apple's `RenewalBillingPlanType`, the type of the `renewalBillingPlanType` field of signed renewal
/// information and `commitmentRenewalBillingPlanType` of commitment information.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct RenewalBillingPlanType: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The whole commitment is billed at once (`BILLED_UPFRONT`).
    public static let billedUpfront = RenewalBillingPlanType(rawValue: "BILLED_UPFRONT")
    /// The commitment is billed monthly (`MONTHLY`).
    public static let monthly = RenewalBillingPlanType(rawValue: "MONTHLY")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [RenewalBillingPlanType] = [
        .billedUpfront,
        .monthly,
    ]
}
