/// What the delivery pipeline did with a transaction.
///
/// An app finishes its StoreKit transaction only when ``shouldFinishTransaction`` is `true`.
public enum DeliveryOutcome: Sendable, Hashable {
    /// Recorded and granted now.
    case delivered(LedgerEntry)
    /// Recorded and granted before; nothing was done again.
    case alreadyDelivered(LedgerEntry)
    /// Recorded; another deliverer is granting it right now. Ask again shortly.
    case pending(LedgerEntry)
    /// Recorded, but the fulfillment hook failed; a retry is scheduled (``LedgerEntry/nextAttemptAt``),
    /// or, in state ``DeliveryState/deadLettered``, it waits for a person. Nothing is lost.
    case deferred(LedgerEntry, IAPError)
    /// Recorded; the App Store revoked it (refund, family sharing ended), so nothing is granted and
    /// anything granted before is taken back.
    case revoked(LedgerEntry)
    /// Not recorded: the signed data did not verify, names an unknown product, belongs to another user,
    /// or the store failed (then ``IAPError/isRetryable`` is `true`: submit again later).
    case rejected(IAPError)

    /// Whether the app may finish its StoreKit transaction: the server holds the purchase durably and
    /// will never need it again.
    public var shouldFinishTransaction: Bool {
        switch self {
        case .delivered, .alreadyDelivered, .revoked: true
        case .pending, .deferred, .rejected: false
        }
    }

    /// The ledger entry, when the transaction was recorded.
    public var entry: LedgerEntry? {
        switch self {
        case .delivered(let entry), .alreadyDelivered(let entry), .pending(let entry), .deferred(let entry, _),
            .revoked(let entry):
            entry
        case .rejected:
            nil
        }
    }

    /// A short stable name: `delivered`, `alreadyDelivered`, `pending`, `deferred`, `revoked` or `rejected`.
    public var name: String {
        switch self {
        case .delivered: "delivered"
        case .alreadyDelivered: "alreadyDelivered"
        case .pending: "pending"
        case .deferred: "deferred"
        case .revoked: "revoked"
        case .rejected: "rejected"
        }
    }
}
