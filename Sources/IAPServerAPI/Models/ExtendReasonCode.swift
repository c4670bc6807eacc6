public import IAPCore
/// Why a subscription renewal date is extended.
///
/// Mirrors Apple's `ExtendReasonCode`, the type of the `extendReasonCode` field of a renewal-date extension
/// request.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and ``isKnown`` is `false`
/// for it. Never `switch` exhaustively over the known values.
public struct ExtendReasonCode: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: Int32

    /// Creates a value from its wire form, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// No reason given (`0`).
    public static let undeclared = ExtendReasonCode(rawValue: 0)
    /// To keep the customer satisfied (`1`).
    public static let customerSatisfaction = ExtendReasonCode(rawValue: 1)
    /// Another reason (`2`).
    public static let other = ExtendReasonCode(rawValue: 2)
    /// Because of a service issue or outage (`3`).
    public static let serviceIssueOrOutage = ExtendReasonCode(rawValue: 3)

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [ExtendReasonCode] = [
        .undeclared,
        .customerSatisfaction,
        .other,
        .serviceIssueOrOutage,
    ]
}
