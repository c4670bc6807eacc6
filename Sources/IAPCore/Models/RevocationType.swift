/// How a transaction was revoked.
///
/// Mirrors Apple's `RevocationType`, the type of the `revocationType` field of a signed transaction. Read it with
/// `revocationPercentage` for prorated refunds.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct RevocationType: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The whole purchase was refunded (`REFUND_FULL`).
    public static let refundFull = RevocationType(rawValue: "REFUND_FULL")
    /// Part of the purchase was refunded; see `revocationPercentage` (`REFUND_PRORATED`).
    public static let refundProrated = RevocationType(rawValue: "REFUND_PRORATED")
    /// Access through Family Sharing was withdrawn (`FAMILY_REVOKE`).
    public static let familyRevoke = RevocationType(rawValue: "FAMILY_REVOKE")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [RevocationType] = [
        .refundFull,
        .refundProrated,
        .familyRevoke,
    ]
}
