/// Why the App Store refunded or revoked a transaction.
///
/// Mirrors Apple's `RevocationReason`, the type of the `revocationReason` field of a signed transaction.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct RevocationReason: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: Int32

    /// Creates a value from its wire form, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The customer reported an actual or perceived issue with the app (`1`).
    public static let refundedDueToIssue = RevocationReason(rawValue: 1)
    /// The App Store refunded the transaction for another reason (`0`).
    public static let refundedForOtherReason = RevocationReason(rawValue: 0)

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [RevocationReason] = [
        .refundedDueToIssue,
        .refundedForOtherReason,
    ]
}
