#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A customer of the simulated store.
struct SimulatedAccountRecord: Sendable {
    /// The id the test names the customer by.
    let id: String
    /// The customer's app download transaction id (`appTransactionId`).
    let appTransactionId: String
    /// Counts every change to the customer's transactions; a transaction's ``SimulatedTransactionRecord/sequence``
    /// is the count at its last change, which orders the transaction history and its revisions.
    var modificationCounter: UInt64 = 0
    /// The family the customer belongs to, named by its organizer's account id.
    var familyId: String?
    /// When the customer first appeared: their first download of the app (`originalPurchaseDate` of the app
    /// transaction).
    var createdAt: Date?
}
