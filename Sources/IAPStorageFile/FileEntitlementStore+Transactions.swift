#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

extension FileEntitlementStore {
    /// Records a new transaction with the signed JWS it was verified from, or returns the one already recorded with
    /// its id (whose signed transaction stays as it is).
    ///
    /// - Parameters:
    ///   - entry: The entry to record; its `sequence` and `revision` are assigned here.
    ///   - signedTransaction: The compact JWS the entry's transaction was verified from, or `nil`.
    /// - Returns: `.inserted` with the stored entry once it is durable, or `.existing` with the entry already there.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty `transactionId` or `userId` or a signed
    ///   transaction that is not a compact JWS, or `storageFailure` if the journal cannot be written (nothing was
    ///   recorded).
    public func insert(_ entry: LedgerEntry, signedTransaction: String?) async throws -> InsertOutcome {
        try checkOpen()
        try LedgerState.checkSignedTransaction(signedTransaction, of: entry.transactionId)
        let stored: LedgerEntry
        switch try state.planInsert(entry) {
        case .existing(let existing): return try await answer(.existing(existing))
        case .insert(let planned): stored = planned
        }
        let lsn = try append(
            .insert(stored, signed: signedTransaction.map { .jws($0) } ?? .unchanged),
            signed: .insert(signedTransaction)
        ) { $0.insert(stored) }
        try await waitUntilDurable(lsn)
        return .inserted(stored)
    }

    /// Every entry, by ascending sequence: for exports, backups and `iap ledger check`.
    ///
    /// - Throws: ``IAPError`` with code `storageFailure` after ``close()``.
    public func allEntries() async throws -> [LedgerEntry] {
        try checkOpen()
        return try await answer(Array(state.entries))
    }

    /// The entry for a transaction id, or `nil`.
    public func entry(transactionId: String) async throws -> LedgerEntry? {
        try checkOpen()
        return try await answer(state.entry(transactionId: transactionId))
    }

    /// Replaces an entry if its stored revision still equals `revision`; its signed transaction stays as it is.
    ///
    /// - Parameters:
    ///   - entry: The new state of the entry.
    ///   - revision: The revision the caller read.
    /// - Returns: `true` once the new state is durable, `false` if the revision differs or the entry does not exist.
    /// - Throws: ``IAPError`` with code `invalidArgument` if the entry changes its `sequence` or
    ///   `recordedAt`, or has an empty `userId`; `storageFailure` if the journal cannot be written.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64) async throws -> Bool {
        try await replace(entry, ifRevision: revision, signed: .keep)
    }

    /// Replaces an entry and its signed transaction if its stored revision still equals `revision`.
    ///
    /// - Parameters:
    ///   - entry: The new state of the entry.
    ///   - revision: The revision the caller read.
    ///   - signedTransaction: The JWS of the entry's new `transaction`, or `nil` to keep none.
    /// - Returns: `true` once the new state is durable, `false` if the revision differs or the entry does not exist.
    /// - Throws: ``IAPError`` with code `invalidArgument` if the entry changes its `sequence` or
    ///   `recordedAt`, has an empty `userId`, or the signed transaction is not a compact JWS; `storageFailure` if
    ///   the journal cannot be written.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64, signedTransaction: String?) async throws
        -> Bool
    {
        try await replace(entry, ifRevision: revision, signed: .set(signedTransaction))
    }

    private func replace(_ entry: LedgerEntry, ifRevision revision: Int64, signed change: SignedChange) async throws
        -> Bool
    {
        try checkOpen()
        let field: JournalOperation.SignedField
        switch change {
        case .keep, .insert:
            field = .unchanged
        case .set(let jws):
            try LedgerState.checkSignedTransaction(jws, of: entry.transactionId)
            field = jws.map { .jws($0) } ?? .removed
        }
        let stored: LedgerEntry
        switch try state.planReplace(entry, ifRevision: revision) {
        case .refuse: return try await answer(false)
        case .replace(let planned): stored = planned
        }
        let lsn = try append(.replace(stored, signed: field), signed: change, position: Int(stored.sequence - 1)) {
            $0.replace(with: stored)
        }
        try await waitUntilDurable(lsn)
        return true
    }

    /// The signed JWS an entry was recorded (or last updated) from, read back from the journal or the
    /// signed-transaction file, or `nil` when the entry has none or does not exist.
    ///
    /// - Parameter transactionId: The transaction id.
    /// - Throws: ``IAPError`` with code `storageCorrupted` when the file that holds it does not read back as that
    ///   transaction's signed data, `storageFailure` when it cannot be read.
    public func signedTransaction(transactionId: String) async throws -> String? {
        try checkOpen()
        try await waitUntilDurable(lastLSN)
        guard let entry = state.entry(transactionId: transactionId), let position = Int(exactly: entry.sequence - 1),
            signed.indices.contains(position)
        else {
            return nil
        }
        let reader = SignedTransactionReader(files: files, signedGeneration: manifest.signed?.generation)
        return try reader.read(signed[position], transactionId: transactionId)
    }

    /// The first entry sequence recorded by a version that keeps signed transactions: 1, or for a ledger an
    /// earlier version wrote, the sequence after its last entry when this version first opened it. Entries before
    /// it have no signed transaction and are not expected to.
    public var signedTransactionsFromSequence: Int64 {
        manifest.signedFrom
    }

    /// How many entries have a signed transaction.
    public var signedTransactionCount: Int {
        signed.reduce(0) { $0 + ($1.exists ? 1 : 0) }
    }

    /// Every entry of a purchase family, by ascending `sequence`.
    public func entries(originalTransactionId: String) async throws -> [LedgerEntry] {
        try checkOpen()
        return try await answer(state.entries(originalTransactionId: originalTransactionId))
    }

    /// Every entry whose transaction carries an app transaction id, by ascending `sequence` (an index kept in memory).
    public func entries(appTransactionId: String) async throws -> [LedgerEntry] {
        try checkOpen()
        return try await answer(state.entries(appTransactionId: appTransactionId))
    }

    /// One page of a user's entries, newest first.
    ///
    /// - Parameters:
    ///   - userId: The user.
    ///   - cursor: `nil` for the first page, or the previous page's `nextCursor` (see *History cursors*).
    ///   - limit: The most entries to return (at least 1).
    /// - Returns: The page; `nextCursor` is `nil` when no older entry exists.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a malformed cursor or a `limit` below 1.
    public func history(userId: String, cursor: String?, limit: Int) async throws -> LedgerPage {
        try checkOpen()
        return try await answer(try state.historyPage(userId: userId, cursor: cursor, limit: limit))
    }

    /// Entries whose delivery is due at `instant`.
    ///
    /// - Parameters:
    ///   - instant: Now.
    ///   - limit: The most entries to return (at least 1).
    /// - Returns: `retrying` entries with `nextAttemptAt <= instant` (or none) and `pending` entries whose claim
    ///   expired or was never taken, by `nextAttemptAt` (`nil` first) then `sequence`.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a `limit` below 1.
    public func dueDeliveries(at instant: Date, limit: Int) async throws -> [LedgerEntry] {
        try checkOpen()
        return try await answer(try state.due(at: instant, limit: limit))
    }

    /// The claimed entries at `instant`, from the index of undelivered entries.
    ///
    /// - Parameter instant: The instant the claims are judged at.
    /// - Returns: The counts.
    /// - Throws: ``IAPError`` `storageFailure` after ``close()``.
    public func claims(at instant: Date) async throws -> ClaimCounts {
        try checkOpen()
        return try await answer(state.claims(at: instant))
    }

    /// Entries parked for an unknown product, oldest first.
    ///
    /// - Parameter limit: The most entries to return (at least 1).
    /// - Returns: The parked entries.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a `limit` below 1, or `storageFailure` once closed.
    public func parkedEntries(limit: Int) async throws -> [LedgerEntry] {
        try checkOpen()
        return try await answer(try state.parked(limit: limit))
    }
}
