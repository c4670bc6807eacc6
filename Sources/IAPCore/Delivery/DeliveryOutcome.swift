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
    /// Recorded, but nobody can be named as its owner yet (the App Store told the server before the app did, and
    /// no user is bound to its appAccountToken): nothing is granted until its owner presents it
    /// (state ``DeliveryState/awaitingOwner``).
    case awaitingOwner(LedgerEntry)
    /// Recorded, but the fulfillment hook failed; a retry is scheduled (``LedgerEntry/nextAttemptAt``),
    /// or, in state ``DeliveryState/deadLettered``, it waits for a person; or, in state
    /// ``DeliveryState/unknownProduct`` (error code `unknownProduct`), it is parked until the catalog names its
    /// product. Nothing is lost.
    case deferred(LedgerEntry, IAPError)
    /// Recorded; the App Store revoked it (refund, family sharing ended), so nothing is granted and
    /// anything granted before is taken back.
    case revoked(LedgerEntry)
    /// Not recorded: the signed data did not verify, belongs to another user (or environment),
    /// comes from an environment the pipeline refuses, or the store failed (then ``IAPError/isRetryable`` is
    /// `true`: submit again later).
    case rejected(IAPError)

    /// Whether the app may finish its StoreKit transaction: the server holds the purchase durably, has given it
    /// to its owner (or recorded it revoked), and will never need it again.
    public var shouldFinishTransaction: Bool {
        switch self {
        case .delivered, .alreadyDelivered, .revoked: true
        case .pending, .awaitingOwner, .deferred, .rejected: false
        }
    }

    /// The ledger entry, when the transaction was recorded.
    public var entry: LedgerEntry? {
        switch self {
        case .delivered(let entry), .alreadyDelivered(let entry), .pending(let entry), .awaitingOwner(let entry),
            .deferred(let entry, _), .revoked(let entry):
            entry
        case .rejected:
            nil
        }
    }

    /// A short stable name: `delivered`, `alreadyDelivered`, `pending`, `awaitingOwner`, `deferred`, `revoked` or
    /// `rejected`.
    public var name: String {
        switch self {
        case .delivered: "delivered"
        case .alreadyDelivered: "alreadyDelivered"
        case .pending: "pending"
        case .awaitingOwner: "awaitingOwner"
        case .deferred: "deferred"
        case .revoked: "revoked"
        case .rejected: "rejected"
        }
    }
}

extension DeliveryOutcome: CustomStringConvertible {
    /// One line for logs: the outcome, then the entry or the error, such as
    /// `delivered: transaction 2000000000000001 (coins.100) of alice, Production, delivered` or
    /// `rejected: ownershipConflict: ...`.
    public var description: String {
        switch self {
        case .deferred(let entry, let error):
            "\(name): \(entry) (\(error))"
        case .rejected(let error):
            "\(name): \(error)"
        case .delivered(let entry), .alreadyDelivered(let entry), .pending(let entry), .awaitingOwner(let entry),
            .revoked(let entry):
            "\(name): \(entry)"
        }
    }
}
