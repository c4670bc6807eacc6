/// Whether a transaction is a purchase or a subscription renewal.
///
/// Mirrors Apple's `TransactionReason`, the type of the `transactionReason` field of a signed transaction.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct TransactionReason: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The customer initiated the purchase (`PURCHASE`).
    public static let purchase = TransactionReason(rawValue: "PURCHASE")
    /// The App Store renewed an auto-renewable subscription (`RENEWAL`).
    public static let renewal = TransactionReason(rawValue: "RENEWAL")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [TransactionReason] = [
        .purchase,
        .renewal,
    ]
}
