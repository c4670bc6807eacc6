#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Dispatch
public import IAPCore

/// An ``EntitlementStore`` that keeps the ledger in a directory of JSON-lines files, durably.
///
/// Every mutation appends one checksummed record to a journal and returns only once the record is on the
/// device (`fsync`). Writes that arrive while a flush is in flight are written together and share the
/// next `fsync` (group commit), so many concurrent writers cost little more than one. When the journal
/// grows past ``Options-swift.struct/compactionThreshold``, the store writes a snapshot of the whole
/// ledger in the background (to a temporary file, flushed, then renamed) and starts a new journal;
/// writes go on meanwhile. The whole ledger is also held in memory with its indexes (by transaction id,
/// user, original transaction id, appAccountToken, due delivery, notification id), so reads never touch
/// the disk.
///
/// Opening a directory takes an advisory lock (one open store per directory, across processes), loads the
/// newest snapshot and replays the journal after it. A record torn by a crash in the middle of a write
/// can only be the last one; it is cut away and reported in ``recovery``. Damage anywhere else throws
/// ``IAPError`` with code `storageCorrupted` naming the file and byte offset: the store never skips a
/// record silently. `Documentation/FileStore.md` describes the format.
///
/// A call answers only what is durable: a read that saw a write still in flight waits for its flush.
/// If a flush fails (a full disk, an I/O error), every write not yet durable throws
/// ``IAPError/Code/storageFailure`` and is undone in memory, the journal is cut back to its last durable
/// record, and the store refuses further writes until it is reopened.
///
/// ## History cursors
/// As IAPInMemory's `InMemoryEntitlementStore`'s: `v1:` followed by the `sequence` of the last entry of the previous
/// page, in decimal without sign or leading zeros; the next page holds older entries. Any other string,
/// including the empty one, throws ``IAPError`` with code `invalidArgument`.
///
/// ```swift
/// let store = try FileEntitlementStore(directory: URL(filePath: "/var/lib/shop/ledger"))
/// let pipeline = DeliveryPipeline(verifier: verifier, catalog: catalog, store: store, hook: hook, clock: clock)
/// // …
/// try await store.close()
/// ```
public actor FileEntitlementStore: EntitlementStore {
    /// The store's directory.
    public nonisolated let directory: URL
    /// How the store writes and compacts.
    public nonisolated let options: Options
    /// What opening the directory found and repaired.
    public nonisolated let recovery: RecoveryReport

    private let files: StoreFiles
    private let lock: DirectoryLock
    private let encoder = RecordEncoder()
    /// Serial queue for journal writes and flushes, so blocking I/O never holds the actor or a task thread.
    private let journalQueue = DispatchQueue(label: "swift-iap.file-store.journal")
    /// Serial queue for writing snapshots.
    private let compactionQueue = DispatchQueue(label: "swift-iap.file-store.compaction")

    /// The ledger, including writes whose records are not durable yet.
    private var state: LedgerState
    /// The journal being appended to, its generation, and its durable size.
    private var journal: SystemFile
    private var generation: UInt64
    private var journalBytes: Int
    /// Encoded records waiting for the next flush.
    private var pending: [UInt8] = []
    /// The log sequence number of the last record handed to the journal, and of the last durable one.
    private var lastLSN: UInt64
    private var durableLSN: UInt64
    /// How to undo each record after `durableLSN`, oldest first.
    private var undoLog: [LedgerState.Undo] = []
    /// Calls waiting for a record to become durable.
    private var waiters: [(lsn: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var isFlushing = false
    private var compaction: Task<Void, Never>?
    /// The journal size at which compaction is tried again after it failed.
    private var nextCompactionAttempt = 0
    /// Why the last compaction failed, if it did.
    private var compactionError: IAPError?
    /// Set after a flush failed: the store then refuses writes.
    private var failure: IAPError?
    private var isClosed = false
    /// Test hook: close the journal after the next batch is written and before it is flushed.
    private var failNextFlush = false

    /// Opens (or creates) the store in `directory`.
    ///
    /// Creates the directory if needed, takes its lock, loads the newest snapshot and replays the journal.
    /// This reads the whole ledger, so it takes a while for a large one (see `Documentation/FileStore.md`).
    ///
    /// - Parameters:
    ///   - directory: The store's directory (a file URL).
    ///   - options: How to write and compact.
    /// - Throws: ``IAPError`` with code `storageLocked` naming the holder if another open store holds the
    ///   directory; `storageCorrupted` naming the file and offset of a damaged record; `storageFailure` if
    ///   the directory cannot be read or written.
    public init(directory: URL, options: Options = .init()) throws {
        let path = directory.path(percentEncoded: false)
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        try SystemFile.createDirectory(trimmed)
        let files = StoreFiles(directory: trimmed)
        let lock = try DirectoryLock(directory: trimmed, clock: options.clock)
        do {
            var loader = StoreLoader(files: files, fsync: options.fsync)
            let loaded = try loader.load()
            self.state = loaded.state
            self.journal = loaded.journal
            self.generation = loaded.generation
            self.journalBytes = loaded.journalBytes
            self.lastLSN = loaded.lsn
            self.durableLSN = loaded.lsn
            self.recovery = loaded.recovery
        } catch {
            lock.release()
            throw error
        }
        self.directory = directory
        self.options = options
        self.files = files
        self.lock = lock
    }

    /// Flushes what is in flight, waits for a running compaction, and releases the directory's lock.
    ///
    /// Closing twice does nothing; any other call on a closed store throws ``IAPError`` with code
    /// `storageFailure`.
    public func close() async {
        guard !isClosed else {
            return
        }
        isClosed = true
        try? await waitUntilDurable(lastLSN)
        await compaction?.value
        journal.close()
        lock.release()
    }

    /// Writes a snapshot now and starts a new journal, then removes the older files.
    ///
    /// The store compacts on its own past ``Options-swift.struct/compactionThreshold``; call this to do it
    /// at a time of your choosing (before a backup, for example). Writes go on while it runs.
    ///
    /// - Throws: ``IAPError`` with code `storageFailure` if the snapshot cannot be written; the store keeps
    ///   working on its journal.
    public func compact() async throws {
        try checkWritable()
        while let running = compaction {
            await running.value
        }
        compactionError = nil
        startCompaction()
        if let running = compaction {
            await running.value
        }
        if let compactionError {
            throw compactionError
        }
    }

    /// The current journal generation (the number in `journal-<generation>.jsonl`).
    public var journalGeneration: UInt64 {
        generation
    }

    // MARK: Transactions

    /// Records a new transaction, or returns the one already recorded with its id.
    ///
    /// - Parameter entry: The entry to record; its `sequence` and `revision` are assigned here.
    /// - Returns: `.inserted` with the stored entry once it is durable, or `.existing` with the entry already there.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty `transactionId` or `userId`, or
    ///   `storageFailure` if the journal cannot be written (nothing was recorded).
    public func insert(_ entry: LedgerEntry) async throws -> InsertOutcome {
        try checkOpen()
        let stored: LedgerEntry
        switch try state.planInsert(entry) {
        case .existing(let existing): return try await answer(.existing(existing))
        case .insert(let planned): stored = planned
        }
        let lsn = try append(.insert(stored)) { $0.insert(stored) }
        try await waitUntilDurable(lsn)
        return .inserted(stored)
    }

    /// Every entry, by ascending sequence: for exports, backups and `iap ledger check`.
    ///
    /// - Throws: ``IAPError`` with code `storageFailure` after ``close()``.
    public func allEntries() async throws -> [LedgerEntry] {
        try checkOpen()
        return try await answer(state.entries)
    }

    /// The entry for a transaction id, or `nil`.
    public func entry(transactionId: String) async throws -> LedgerEntry? {
        try checkOpen()
        return try await answer(state.entry(transactionId: transactionId))
    }

    /// Replaces an entry if its stored revision still equals `revision`.
    ///
    /// - Parameters:
    ///   - entry: The new state of the entry.
    ///   - revision: The revision the caller read.
    /// - Returns: `true` once the new state is durable, `false` if the revision differs or the entry does not exist.
    /// - Throws: ``IAPError`` with code `invalidArgument` if the entry changes its `sequence` or
    ///   `recordedAt`, or has an empty `userId`; `storageFailure` if the journal cannot be written.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64) async throws -> Bool {
        try checkOpen()
        let stored: LedgerEntry
        switch try state.planReplace(entry, ifRevision: revision) {
        case .refuse: return try await answer(false)
        case .replace(let planned): stored = planned
        }
        let lsn = try append(.replace(stored)) { $0.replace(with: stored) }
        try await waitUntilDurable(lsn)
        return true
    }

    /// Every entry of a purchase family, by ascending `sequence`.
    public func entries(originalTransactionId: String) async throws -> [LedgerEntry] {
        try checkOpen()
        return try await answer(state.entries(originalTransactionId: originalTransactionId))
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

    // MARK: Bindings

    /// Binds an appAccountToken to a user, once and for good.
    ///
    /// - Parameters:
    ///   - appAccountToken: The token, compared case-insensitively.
    ///   - userId: The user.
    /// - Returns: `.bound`, `.alreadyBound`, or `.conflict` with the user the token belongs to.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty token or user id, or `storageFailure`.
    public func bind(appAccountToken: String, to userId: String) async throws -> BindingOutcome {
        try checkOpen()
        let token: String
        switch try state.planBind(appAccountToken: appAccountToken, to: userId) {
        case .answer(let outcome): return try await answer(outcome)
        case .bind(let planned): token = planned
        }
        let lsn = try append(.bind(token: token, userId: userId)) { $0.bind(token: token, to: userId) }
        try await waitUntilDurable(lsn)
        return .bound
    }

    /// The user an appAccountToken is bound to, or `nil`.
    public func user(forAppAccountToken appAccountToken: String) async throws -> String? {
        try checkOpen()
        return try await answer(state.user(forAppAccountToken: appAccountToken))
    }

    // MARK: Renewal infos

    /// Stores a subscription's renewal info if its `signedDate` is later than the stored one's.
    ///
    /// - Parameter renewalInfo: The verified renewal info.
    /// - Returns: `true` if stored, `false` if an equally new or newer one was already there.
    /// - Throws: ``IAPError`` with code `invalidArgument` without an original transaction id, or `storageFailure`.
    public func storeRenewalInfo(_ renewalInfo: RenewalInfoPayload) async throws -> Bool {
        try checkOpen()
        guard let originalTransactionId = try state.planRenewalInfo(renewalInfo) else {
            return try await answer(false)
        }
        let lsn = try append(.renewal(renewalInfo)) {
            $0.storeRenewalInfo(renewalInfo, for: originalTransactionId)
        }
        try await waitUntilDurable(lsn)
        return true
    }

    /// The latest renewal info of a subscription, or `nil`.
    public func renewalInfo(originalTransactionId: String) async throws -> RenewalInfoPayload? {
        try checkOpen()
        return try await answer(state.renewalInfos[originalTransactionId])
    }

    // MARK: Notifications

    /// Records that a notification was processed.
    ///
    /// - Parameters:
    ///   - notificationUUID: The notification's `notificationUUID`.
    ///   - instant: When it was processed.
    /// - Returns: `true` the first time for this UUID, `false` after.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty UUID, or `storageFailure`.
    public func markNotificationProcessed(_ notificationUUID: String, at instant: Date) async throws -> Bool {
        try checkOpen()
        guard try state.planNotification(notificationUUID) else {
            return try await answer(false)
        }
        let lsn = try append(.notification(uuid: notificationUUID, at: instant)) {
            $0.markNotification(notificationUUID, at: instant)
        }
        try await waitUntilDurable(lsn)
        return true
    }

    /// Whether a notification was processed.
    public func isNotificationProcessed(_ notificationUUID: String) async throws -> Bool {
        try checkOpen()
        return try await answer(state.notifications[notificationUUID] != nil)
    }

    // MARK: Statistics

    /// Counts over the whole ledger.
    public func statistics() async throws -> LedgerStatistics {
        try checkOpen()
        return try await answer(state.statistics)
    }

    /// One page of the distinct original transaction ids, by the sequence of each family's first entry; the cursor
    /// is `f1:<count of entries examined>`.
    public func originalTransactionIds(cursor: String?, limit: Int) async throws -> OriginalTransactionIdPage {
        try checkOpen()
        return try await answer(try state.originalTransactionIdPage(cursor: cursor, limit: limit))
    }

    // MARK: Writing

    /// Encodes a record, applies its mutation to the state, and queues the record for the next flush.
    ///
    /// Nothing changes if encoding fails. The caller must then wait for the returned log sequence number.
    private func append(
        _ operation: JournalOperation,
        apply: (inout LedgerState) -> LedgerState.Undo?
    ) throws -> UInt64 {
        try checkWritable()
        let lsn = lastLSN + 1
        let line = try JournalRecord.line(operation, seq: lsn, encoder: encoder)
        guard let undo = apply(&state) else {
            throw IAPError(.internalError, "the \(operation.kind) record does not fit the ledger; nothing was written")
        }
        lastLSN = lsn
        pending += line
        undoLog.append(undo)
        return lsn
    }

    /// Returns `value` once every write it may have seen is durable.
    private func answer<Value>(_ value: Value) async throws -> Value {
        try await waitUntilDurable(lastLSN)
        return value
    }

    /// Waits until the record `lsn` is durable.
    ///
    /// - Throws: ``IAPError`` with code `storageFailure` if its flush failed (it was then undone).
    private func waitUntilDurable(_ lsn: UInt64) async throws {
        guard lsn > durableLSN else {
            return
        }
        if let failure {
            throw failure
        }
        try await withCheckedThrowingContinuation { continuation in
            waiters.append((lsn, continuation))
            startFlushing()
        }
    }

    private func startFlushing() {
        guard !isFlushing, !pending.isEmpty, failure == nil else {
            return
        }
        isFlushing = true
        Task { await self.flush() }
    }

    /// Writes and flushes batches until nothing is pending. Runs as one task at a time.
    private func flush() async {
        if options.groupCommitWindow > .zero {
            try? await Task.sleep(for: options.groupCommitWindow)
        }
        while !pending.isEmpty, failure == nil {
            let batch = pending
            pending = []
            pending.reserveCapacity(batch.count)
            let upTo = lastLSN
            let file = journal
            let startLength = journalBytes
            let sync = options.fsync
            let breakFile = failNextFlush
            failNextFlush = false
            do {
                try await Self.writeBatch(batch, to: file, sync: sync, breakingFile: breakFile)
            } catch {
                await failWrites(error, file: file, durableLength: startLength)
                break
            }
            if file === journal {
                journalBytes += batch.count
            }
            markDurable(upTo)
            if let threshold = options.compactionThreshold, compaction == nil,
                journalBytes >= max(threshold, nextCompactionAttempt)
            {
                startCompaction()
            }
        }
        isFlushing = false
    }

    /// Records that everything up to `lsn` is durable and resumes the calls waiting for it.
    private func markDurable(_ lsn: UInt64) {
        undoLog.removeFirst(Int(lsn - durableLSN))
        durableLSN = lsn
        var remaining: [(lsn: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        for waiter in waiters {
            if waiter.lsn <= lsn {
                waiter.continuation.resume()
            } else {
                remaining.append(waiter)
            }
        }
        waiters = remaining
    }

    /// After a failed flush: undoes every write that is not durable, fails its callers, cuts the journal
    /// back to its durable length, and refuses writes from now on.
    private func failWrites(_ error: any Error, file: SystemFile, durableLength: Int) async {
        for undo in undoLog.reversed() {
            state.undo(undo)
        }
        undoLog.removeAll()
        pending.removeAll()
        lastLSN = durableLSN
        var failure = IAPError(
            .storageFailure,
            "writing the journal \(file.path) failed, so the writes in flight were undone; the store refuses "
                + "further writes until it is reopened",
            underlying: error
        )
        self.failure = failure
        let path = file.path
        let sync = options.fsync
        do {
            try await Self.run(on: journalQueue) {
                let repair = try SystemFile.open(path, flags: O_WRONLY)
                try repair.truncate(to: durableLength)
                if sync {
                    try repair.sync()
                }
            }
        } catch {
            failure.message +=
                "; cutting the journal back to its last durable record at byte \(durableLength) "
                + "also failed (\(error)), so reopening may show the failed writes"
            self.failure = failure
        }
        let waiting = waiters
        waiters = []
        for waiter in waiting {
            waiter.continuation.resume(throwing: failure)
        }
    }

    // MARK: Compaction

    /// Starts a compaction unless one is running: a task that starts a new journal, then snapshots the
    /// ledger as of the switch.
    private func startCompaction() {
        guard compaction == nil, failure == nil, !isClosed else {
            return
        }
        compaction = Task { await self.compactNow() }
    }

    private func compactNow() async {
        let next = generation + 1
        let path = files.journal(next)
        let directory = files.directory
        let sync = options.fsync
        let newJournal: SystemFile
        do {
            newJournal = try await Self.run(on: journalQueue) {
                let file = try SystemFile.open(path, flags: O_WRONLY | O_CREAT | O_APPEND | O_TRUNC)
                if sync {
                    try SystemFile.syncDirectory(directory)
                }
                return file
            }
        } catch {
            compactionFailed(error)
            compaction = nil
            return
        }
        // From here on, records go to the new journal; the snapshot holds everything up to `lastLSN`.
        let snapshot = state
        let lsn = lastLSN
        journal = newJournal
        generation = next
        journalBytes = 0
        await writeSnapshot(snapshot, lsn: lsn, generation: next)
        compaction = nil
    }

    private func writeSnapshot(_ snapshot: LedgerState, lsn: UInt64, generation: UInt64) async {
        let files = self.files
        let sync = options.fsync
        let temporary = files.temporarySnapshot(generation)
        do {
            try await Self.run(on: compactionQueue) {
                try SnapshotWriter.write(snapshot, lsn: lsn, generation: generation, to: temporary, fsync: sync)
            }
            // The snapshot may include writes still in flight; publish it only once they are durable.
            try await waitUntilDurable(lsn)
            try await Self.run(on: compactionQueue) {
                try SystemFile.rename(temporary, to: files.snapshot(generation))
                if sync {
                    try SystemFile.syncDirectory(files.directory)
                }
                let listing = try files.list()
                for old in listing.journals where old < generation {
                    try SystemFile.remove(files.journal(old))
                }
                for old in listing.snapshots where old < generation {
                    try SystemFile.remove(files.snapshot(old))
                }
            }
        } catch {
            try? SystemFile.remove(temporary)
            compactionFailed(error)
        }
    }

    private func compactionFailed(_ error: any Error) {
        compactionError = IAPError(.storageFailure, "compaction failed; the journal keeps growing", underlying: error)
        nextCompactionAttempt = journalBytes + (options.compactionThreshold ?? 0)
    }

    // MARK: Helpers

    private func checkOpen() throws {
        if isClosed {
            throw IAPError(.storageFailure, "the store in \(files.directory) is closed")
        }
    }

    private func checkWritable() throws {
        try checkOpen()
        if let failure {
            throw failure
        }
    }

    /// Test hook: makes the next flush fail after its records were written, by closing the journal.
    func breakNextFlush() {
        failNextFlush = true
    }

    /// Appends a batch to the journal and flushes it, off the actor.
    ///
    /// This blocks the task's thread for one `write` and one `fsync` (a fraction of a millisecond on an
    /// SSD) instead of handing the work to a dispatch queue: on the machines measured, waking another
    /// thread and back cost three times the `fsync` itself (see `Documentation/FileStore.md`). The
    /// long-running work, writing snapshots, does go to a dispatch queue.
    private nonisolated static func writeBatch(
        _ batch: [UInt8],
        to file: SystemFile,
        sync: Bool,
        breakingFile: Bool
    ) async throws {
        try file.write(batch)
        if breakingFile {
            file.close()
        }
        if sync || breakingFile {
            try file.sync()
        }
    }

    /// Runs blocking I/O on `queue` and returns its result.
    private static func run<Value: Sendable>(
        on queue: DispatchQueue,
        _ body: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try body() })
            }
        }
    }
}
