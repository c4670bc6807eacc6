#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// An ``EntitlementStore`` that answers every ``EntitlementStore`` call with the store it wraps, and adds a role of
/// its own, such as a ``TransactionalFulfillmentStore`` that carries out deliveries in the wrapped store's writes.
///
/// A conforming type names the wrapped store as ``ForwardingEntitlementStore/store``; this protocol's extension writes every
/// ``EntitlementStore`` requirement as the same call of ``ForwardingEntitlementStore/store``'s, so the wrapper declares only what it adds.
/// `InMemoryTransactionalFulfillmentStore` (IAPInMemory) and `PostgresTransactionalFulfillmentStore`
/// (IAPStoragePostgres) are two.
///
/// ## Implementation requirements
/// - ``ForwardingEntitlementStore/store`` is the ledger every forwarded call reaches; the wrapper keeps the wrapped store's contract (it is
///   the same ledger), and its own writes go to ``ForwardingEntitlementStore/store`` too.
/// - A wrapper may still implement a requirement itself; its implementation then takes the place of the forwarding
///   one.
public protocol ForwardingEntitlementStore: EntitlementStore {
    /// The type of the wrapped store.
    associatedtype Base: EntitlementStore

    /// The store every ``EntitlementStore`` call is forwarded to.
    var store: Base { get }
}

extension ForwardingEntitlementStore {
    /// The wrapped store's ``EntitlementStore/insert(_:signedTransaction:)``.
    public func insert(_ entry: LedgerEntry, signedTransaction: String?) async throws -> InsertOutcome {
        try await store.insert(entry, signedTransaction: signedTransaction)
    }

    /// The wrapped store's ``EntitlementStore/entry(transactionId:)``.
    public func entry(transactionId: String) async throws -> LedgerEntry? {
        try await store.entry(transactionId: transactionId)
    }

    /// The wrapped store's ``EntitlementStore/replace(_:ifRevision:)``.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64) async throws -> Bool {
        try await store.replace(entry, ifRevision: revision)
    }

    /// The wrapped store's ``EntitlementStore/replace(_:ifRevision:signedTransaction:)``.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64, signedTransaction: String?) async throws
        -> Bool
    {
        try await store.replace(entry, ifRevision: revision, signedTransaction: signedTransaction)
    }

    /// The wrapped store's ``EntitlementStore/signedTransaction(transactionId:)``.
    public func signedTransaction(transactionId: String) async throws -> String? {
        try await store.signedTransaction(transactionId: transactionId)
    }

    /// The wrapped store's ``EntitlementStore/entries(originalTransactionId:)``.
    public func entries(originalTransactionId: String) async throws -> [LedgerEntry] {
        try await store.entries(originalTransactionId: originalTransactionId)
    }

    /// The wrapped store's ``EntitlementStore/entries(appTransactionId:)``.
    public func entries(appTransactionId: String) async throws -> [LedgerEntry] {
        try await store.entries(appTransactionId: appTransactionId)
    }

    /// The wrapped store's ``EntitlementStore/history(userId:cursor:limit:)``.
    public func history(userId: String, cursor: String?, limit: Int) async throws -> LedgerPage {
        try await store.history(userId: userId, cursor: cursor, limit: limit)
    }

    /// The wrapped store's ``EntitlementStore/dueDeliveries(at:limit:)``.
    public func dueDeliveries(at instant: Date, limit: Int) async throws -> [LedgerEntry] {
        try await store.dueDeliveries(at: instant, limit: limit)
    }

    /// The wrapped store's ``EntitlementStore/parkedEntries(limit:)``.
    public func parkedEntries(limit: Int) async throws -> [LedgerEntry] {
        try await store.parkedEntries(limit: limit)
    }

    /// The wrapped store's ``EntitlementStore/bind(appAccountToken:to:)``.
    public func bind(appAccountToken: String, to userId: String) async throws -> BindingOutcome {
        try await store.bind(appAccountToken: appAccountToken, to: userId)
    }

    /// The wrapped store's ``EntitlementStore/user(forAppAccountToken:)``.
    public func user(forAppAccountToken appAccountToken: String) async throws -> String? {
        try await store.user(forAppAccountToken: appAccountToken)
    }

    /// The wrapped store's ``EntitlementStore/storeRenewalInfo(_:)``.
    public func storeRenewalInfo(_ renewalInfo: RenewalInfoPayload) async throws -> Bool {
        try await store.storeRenewalInfo(renewalInfo)
    }

    /// The wrapped store's ``EntitlementStore/renewalInfo(originalTransactionId:)``.
    public func renewalInfo(originalTransactionId: String) async throws -> RenewalInfoPayload? {
        try await store.renewalInfo(originalTransactionId: originalTransactionId)
    }

    /// The wrapped store's ``EntitlementStore/markNotificationProcessed(_:at:)``.
    public func markNotificationProcessed(_ notificationUUID: String, at instant: Date) async throws -> Bool {
        try await store.markNotificationProcessed(notificationUUID, at: instant)
    }

    /// The wrapped store's ``EntitlementStore/isNotificationProcessed(_:)``.
    public func isNotificationProcessed(_ notificationUUID: String) async throws -> Bool {
        try await store.isNotificationProcessed(notificationUUID)
    }

    /// The wrapped store's ``EntitlementStore/statistics()``.
    public func statistics() async throws -> LedgerStatistics {
        try await store.statistics()
    }

    /// The wrapped store's ``EntitlementStore/originalTransactionIds(cursor:limit:)``.
    public func originalTransactionIds(cursor: String?, limit: Int) async throws -> OriginalTransactionIdPage {
        try await store.originalTransactionIds(cursor: cursor, limit: limit)
    }
}
