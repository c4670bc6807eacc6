#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// A transaction as the simulated store keeps it: the payload without its `signedDate`, which is set at signing.
struct SimulatedTransactionRecord: Sendable {
    /// The transaction, unsigned.
    var payload: TransactionPayload
    /// The customer who owns the transaction.
    let account: String
    /// The order id, for a transaction the customer paid for.
    let orderId: String?
    /// For a family-shared copy: the purchaser's transaction it copies.
    let sharedFrom: String?
    /// The account's modification count at the transaction's last change.
    var sequence: UInt64
    /// Whether the app finished the transaction (the App Store Server API's Finish Transaction).
    var isFinished = false

    /// The transaction identifier.
    var id: String { payload.transactionId ?? "" }
}
