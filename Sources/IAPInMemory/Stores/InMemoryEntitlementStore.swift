#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// An ``EntitlementStore`` that keeps the ledger in the memory of one process.
///
/// It keeps the whole contract of ``EntitlementStore`` except durability: its contents are gone when the
/// instance is released. That makes it a complete backend for previews, command-line tools, tests and
/// single-process servers that can afford to start empty, and the reference the conformance suite is
/// written against. Every call is atomic because the store is an actor that never suspends inside one.
///
/// It shares its ledger state, indexes and rules with `FileEntitlementStore` (entries indexed by transaction
/// id, by user, by original transaction id, and by delivery state, so ``dueDeliveries(at:limit:)`` only looks at
/// undelivered entries); the file store adds durability on top. `sequence` starts at 1 and grows by 1 per insert; `revision` is 1 after insert and grows by 1
/// per successful ``replace(_:ifRevision:)``. Statistics are kept up to date on every write.
///
/// ## History cursors
/// A cursor is `v1:` followed by the `sequence` of the last entry of the previous page, in decimal without
/// sign or leading zeros (for example `v1:42`); the next page holds the user's entries with a smaller
/// sequence. Any other string, including the empty one, is malformed and throws ``IAPError`` with code
/// `invalidArgument`. Treat cursors as opaque: the format may change with its version tag.
///
/// ```swift
/// let store = InMemoryEntitlementStore()
/// let outcome = try await store.insert(entry)
/// let page = try await store.history(userId: "user-1", cursor: nil, limit: 20)
/// ```
public actor InMemoryEntitlementStore: IdentifiedEntitlementStore {
    private var state = LedgerState()
    private let identity = LedgerIdentifier.random()
    /// The signed transaction of each entry that has one, by transaction id.
    private var signedTransactions: [String: String] = [:]

    /// Creates an empty store.
    public init() {}

    /// The ledger's identity: random, fixed when the store was created.
    public func ledgerIdentity() -> String {
        identity
    }

    /// Records a new transaction with its signed transaction, or returns the one already recorded with its id.
    ///
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty `transactionId` or `userId`, or a signed
    ///   transaction that is not a compact JWS.
    public func insert(_ entry: LedgerEntry, signedTransaction: String?) throws -> InsertOutcome {
        try LedgerState.checkSignedTransaction(signedTransaction, of: entry.transactionId)
        switch try state.planInsert(entry) {
        case .existing(let existing):
            return .existing(existing)
        case .insert(let stored):
            _ = state.insert(stored)
            signedTransactions[stored.transactionId] = signedTransaction
            return .inserted(stored)
        }
    }

    /// The entry for a transaction id, or `nil`.
    public func entry(transactionId: String) -> LedgerEntry? {
        state.entry(transactionId: transactionId)
    }

    /// Replaces an entry if its stored revision still equals `revision`; its signed transaction stays.
    ///
    /// - Throws: ``IAPError`` with code `invalidArgument` if the entry changes its `sequence` or `recordedAt`,
    ///   or has an empty `userId`.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64) throws -> Bool {
        switch try state.planReplace(entry, ifRevision: revision) {
        case .refuse:
            return false
        case .replace(let stored):
            _ = state.replace(with: stored)
            return true
        }
    }

    /// Replaces an entry and its signed transaction (`nil` removes it) if its stored revision still equals
    /// `revision`.
    ///
    /// - Throws: ``IAPError`` with code `invalidArgument` as ``replace(_:ifRevision:)``, or for a signed
    ///   transaction that is not a compact JWS.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64, signedTransaction: String?) throws -> Bool {
        try LedgerState.checkSignedTransaction(signedTransaction, of: entry.transactionId)
        guard try replace(entry, ifRevision: revision) else {
            return false
        }
        signedTransactions[entry.transactionId] = signedTransaction
        return true
    }

    /// The signed transaction kept with an entry, or `nil`.
    public func signedTransaction(transactionId: String) -> String? {
        signedTransactions[transactionId]
    }

    /// Every entry of a purchase family, by ascending `sequence`.
    public func entries(originalTransactionId: String) -> [LedgerEntry] {
        state.entries(originalTransactionId: originalTransactionId)
    }

    /// Every entry whose transaction carries an app transaction id, by ascending sequence.
    ///
    /// (Declared `async throws`, as the requirement is, so that it, not the protocol's default, is the witness.)
    public func entries(appTransactionId: String) async throws -> [LedgerEntry] {
        state.entries(appTransactionId: appTransactionId)
    }

    /// One page of a user's entries, newest first (see *History cursors*).
    ///
    /// - Throws: ``IAPError`` with code `invalidArgument` for a malformed cursor or a `limit` below 1.
    public func history(userId: String, cursor: String?, limit: Int) throws -> LedgerPage {
        try state.historyPage(userId: userId, cursor: cursor, limit: limit)
    }

    /// Entries whose delivery is due at `instant`, by `nextAttemptAt` (`nil` first) then `sequence`.
    ///
    /// - Throws: ``IAPError`` with code `invalidArgument` for a `limit` below 1.
    public func dueDeliveries(at instant: Date, limit: Int) throws -> [LedgerEntry] {
        try state.due(at: instant, limit: limit)
    }

    /// The claimed entries at `instant`, from the index of undelivered entries.
    public func claims(at instant: Date) -> ClaimCounts {
        state.claims(at: instant)
    }

    /// Entries parked for an unknown product, oldest first.
    ///
    /// - Throws: ``IAPError`` with code `invalidArgument` for a `limit` below 1.
    public func parkedEntries(limit: Int) throws -> [LedgerEntry] {
        try state.parked(limit: limit)
    }

    /// Binds an appAccountToken (compared case-insensitively) to a user, once and for good.
    ///
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty token or user id.
    public func bind(appAccountToken: String, to userId: String) throws -> BindingOutcome {
        switch try state.planBind(appAccountToken: appAccountToken, to: userId) {
        case .answer(let outcome):
            return outcome
        case .bind(let token):
            _ = state.bind(token: token, to: userId)
            return .bound
        }
    }

    /// The user an appAccountToken is bound to, or `nil`.
    public func user(forAppAccountToken appAccountToken: String) -> String? {
        state.user(forAppAccountToken: appAccountToken)
    }

    /// Stores a subscription's renewal info if its `signedDate` is later than the stored one's.
    ///
    /// - Throws: ``IAPError`` with code `invalidArgument` without an original transaction id.
    public func storeRenewalInfo(_ renewalInfo: RenewalInfoPayload) throws -> Bool {
        guard let originalTransactionId = try state.planRenewalInfo(renewalInfo) else {
            return false
        }
        _ = state.storeRenewalInfo(renewalInfo, for: originalTransactionId)
        return true
    }

    /// The latest renewal info of a subscription, or `nil`.
    public func renewalInfo(originalTransactionId: String) -> RenewalInfoPayload? {
        state.renewalInfos[originalTransactionId]
    }

    /// Records that a notification was processed; `true` the first time.
    ///
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty UUID.
    public func markNotificationProcessed(_ notificationUUID: String, at instant: Date) throws -> Bool {
        guard try state.planNotification(notificationUUID) else {
            return false
        }
        _ = state.markNotification(notificationUUID, at: instant)
        return true
    }

    /// Whether a notification was processed.
    public func isNotificationProcessed(_ notificationUUID: String) -> Bool {
        state.notifications[notificationUUID] != nil
    }

    /// The support audit's head as last recorded, or `nil`.
    func auditHead() -> LedgerState.AuditHead? {
        state.auditHead
    }

    /// Records the support audit's head; without `resealing`, only when it has more entries than the recorded one.
    func recordAuditHead(entries: Int, lastHash: String, resealing: Bool) {
        if !resealing, let recorded = state.auditHead, recorded.entries >= entries {
            return
        }
        _ = state.recordAuditHead(.init(entries: entries, lastHash: lastHash))
    }

    /// Counts over the whole ledger.
    public func statistics() -> LedgerStatistics {
        state.statistics
    }

    /// One page of the distinct original transaction ids, by the sequence of each family's first entry.
    public func originalTransactionIds(cursor: String?, limit: Int) throws -> OriginalTransactionIdPage {
        try state.originalTransactionIdPage(cursor: cursor, limit: limit)
    }

    /// Every entry, by ascending sequence.
    public func allEntries() -> [LedgerEntry] {
        Array(state.entries)
    }

    /// Up to `limit` entries with a sequence above `sequence`, by ascending sequence.
    ///
    /// - Throws: ``IAPError`` `invalidArgument` for a limit outside 1 to 10,000.
    public func entries(afterSequence sequence: Int64, limit: Int) throws -> [LedgerEntry] {
        try Self.checkPageLimit(limit)
        return state.entries(afterSequence: sequence, limit: limit)
    }

    /// ``insert(_:signedTransaction:)``, with `effect` run in the same step once the id is known to be free: when it
    /// throws, nothing is inserted. The actor does not suspend in between, so no other call sees one without the
    /// other.
    func insert(
        _ entry: LedgerEntry,
        signedTransaction: String?,
        with effect: @Sendable (LedgerEntry) throws -> Void
    ) throws -> InsertOutcome {
        try LedgerState.checkSignedTransaction(signedTransaction, of: entry.transactionId)
        switch try state.planInsert(entry) {
        case .existing(let existing):
            return .existing(existing)
        case .insert(let stored):
            try effect(stored)
            _ = state.insert(stored)
            signedTransactions[stored.transactionId] = signedTransaction
            return .inserted(stored)
        }
    }

    /// ``replace(_:ifRevision:)``, with `effect` run in the same step once the revision matched: when it throws,
    /// nothing is replaced.
    func replace(_ entry: LedgerEntry, ifRevision revision: Int64, with effect: @Sendable (LedgerEntry) throws -> Void)
        throws -> Bool
    {
        switch try state.planReplace(entry, ifRevision: revision) {
        case .refuse:
            return false
        case .replace(let stored):
            try effect(stored)
            _ = state.replace(with: stored)
            return true
        }
    }
}
