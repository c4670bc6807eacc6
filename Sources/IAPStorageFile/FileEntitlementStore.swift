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
/// Opening a directory takes an advisory lock (one open store per directory, across processes), reads the
/// manifest (what the directory must hold), loads the snapshot it names and replays the journals after it. Only
/// a last journal line without its newline — a write torn by a crash, whose call never returned — is cut away
/// and reported in ``recovery``. A complete line that fails its checksum or does not decode, anywhere, a journal
/// shorter than the manifest records, or a missing file throws ``IAPError`` with code `storageCorrupted` naming
/// the file and line: the store never skips a record silently. ``repair(directory:options:)`` (`iap ledger
/// repair`) then keeps every record that verifies and moves the damaged files aside;
/// ``inspect(directory:)`` (`iap ledger check`) reports all of it without changing anything. A read-only open
/// (``Options-swift.struct/Access/readOnly``) creates and repairs nothing and takes no lock. Files are created
/// private (0600, directories 0700) and never opened through a symbolic link. `Documentation/FileStore.md`
/// describes the format.
///
/// The store keeps each transaction's signed JWS (``signedTransaction(transactionId:)``) on disk only: in the
/// journal record that wrote it, then, after a compaction, in the signed-transaction file (certificate chains
/// written once); in memory it holds only where each one is.
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
    /// What opening the directory found and repaired (for a read-only open: what an open would repair).
    public nonisolated let recovery: RecoveryReport

    private let files: StoreFiles
    /// The directory's lock; `nil` for a read-only store, which takes none.
    private let lock: DirectoryLock?
    private let encoder = RecordEncoder()
    /// The thread that writes and flushes the journal, so that a flush waiting for the disk holds neither the
    /// actor nor a thread of the concurrency pool.
    private let flusher = JournalFlusher()
    /// Serial queue for writing snapshots.
    private let compactionQueue = DispatchQueue(label: "swift-iap.file-store.compaction")
    /// Serial queue for writing the manifest, in the order the actor asks.
    private let manifestQueue = DispatchQueue(label: "swift-iap.file-store.manifest")

    /// The ledger, including writes whose records are not durable yet.
    private var state: LedgerState
    /// Where each entry's signed transaction is, by position (as ``state``'s entries).
    private var signed: [SignedLocation]
    /// The signed transactions of the records in ``pending``: the entry's position, where its line starts in
    /// ``pending`` and its length, and the JWS (until the record is handed to the journal).
    private var pendingSigned: [(position: Int, lineStart: Int, lineLength: Int, jws: String)] = []
    /// The journal being appended to (`nil` when read-only), its generation, and its durable size.
    private var journal: SystemFile?
    private var generation: UInt64
    private var journalBytes: Int
    /// Where in the journal the next record handed to ``pending`` will be: its durable size, plus the batch in flight
    /// and what is pending.
    private var journalEnd: Int
    /// The protected headers the current journal holds as `header` records (durable, in flight or pending), by the
    /// byte offset of their record: a signed transaction written to this journal refers to its header there.
    /// A few at most (one per signing certificate in use), so a scan comparing bytes beats hashing 4 KB.
    private var journalHeaders: [(header: String, offset: UInt64)]
    /// A compaction waiting for the flush loop to start the new journal between two batches.
    private var rotation: JournalRotation?

    /// A new journal a compaction waits to switch to, and the compaction's continuation.
    private struct JournalRotation {
        var journal: SystemFile
        var generation: UInt64
        var bytes: Int
        var done: CheckedContinuation<Void, any Error>
    }
    /// The manifest as last written.
    private var manifest: StoreManifest
    /// Headers already in the signed-transaction file, by the offset of their record.
    private var signedHeaders: [String: UInt64] = [:]
    private var isWritingWatermark = false
    /// The background write of a watermark, if one runs; `close()` waits for it before it lets go of the lock.
    private var watermarkTask: Task<Void, Never>?
    /// Encoded records waiting for the next flush.
    private var pending: [UInt8] = []
    /// The log sequence number of the last record handed to the journal, and of the last durable one.
    private var lastLSN: UInt64
    private var durableLSN: UInt64
    /// How to undo each record after `durableLSN`, oldest first.
    private var undoLog: [(state: LedgerState.Undo, signed: SignedUndo?)] = []
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

    /// How to undo a record's change of where a signed transaction is.
    private enum SignedUndo {
        /// An insert appended a location.
        case appended
        /// A replace changed the location at a position.
        case replaced(position: Int, previous: SignedLocation)
    }

    /// How far the journal may grow past the manifest's watermark before the manifest is written again.
    static let watermarkInterval = 1 << 20

    /// Opens (or creates) the store in `directory`.
    ///
    /// Read-write (the default): creates the directory if needed (mode 0700), takes its lock, loads the snapshot
    /// and replays the journals, cuts a torn last record, and writes the manifest. Read-only
    /// (``Options-swift.struct/access``): creates, locks and changes nothing, and throws `notFound` when the
    /// directory holds no ledger (as a read-write open does with ``Options-swift.struct/createIfMissing`` off). This reads the whole ledger, so it takes a while for a large one (see
    /// `Documentation/FileStore.md`).
    ///
    /// - Parameters:
    ///   - directory: The store's directory (a file URL).
    ///   - options: How to open, write and compact.
    /// - Throws: ``IAPError`` with code `storageLocked` naming the holder if another open store holds the
    ///   directory; `storageCorrupted` naming the file and line of a damaged record or a missing file; `notFound`
    ///   for a read-only open of a directory without a ledger; `unsafeFile` for a symbolic link where a store file
    ///   belongs; `storageFailure` if the directory cannot be read or written.
    public init(directory: URL, options: Options = .init()) throws {
        let files = StoreFiles(directory: Self.path(of: directory))
        let lock: DirectoryLock?
        let loaded: StoreLoader.Loaded
        switch options.access {
        case .readWrite:
            if !options.createIfMissing, try !SystemFile.exists(files.directory) || !files.list().holdsLedger {
                throw IAPError(.notFound, "there is no ledger in \(files.directory)")
            }
            try SystemFile.createDirectory(files.directory)
            lock = try DirectoryLock(directory: files.directory, clock: options.clock)
            do {
                var loader = StoreLoader(files: files, fsync: options.fsync, mode: .open)
                loaded = try loader.load()
            } catch {
                lock?.release()
                throw error
            }
        case .readOnly:
            lock = nil
            loaded = try Self.loadReadOnly(files)
        }
        self.init(directory: directory, options: options, files: files, lock: lock, loaded: loaded)
    }

    /// A store over what a loader read.
    init(
        directory: URL,
        options: Options,
        files: StoreFiles,
        lock: DirectoryLock?,
        loaded: StoreLoader.Loaded
    ) {
        self.directory = directory
        self.options = options
        self.files = files
        self.lock = lock
        state = loaded.state
        signed = loaded.signed
        journal = loaded.journal
        generation = loaded.generation
        journalBytes = loaded.journalBytes
        journalEnd = loaded.journalBytes
        journalHeaders = loaded.journalHeaders.sorted { $0.value < $1.value }.map { ($0.key, $0.value) }
        manifest = loaded.manifest
        lastLSN = loaded.lsn
        durableLSN = loaded.lsn
        recovery = loaded.recovery
    }

    /// The directory's path without a trailing slash.
    static func path(of directory: URL) -> String {
        let path = directory.path(percentEncoded: false)
        return path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// Loads without writing; tried again when a writer's compaction changed the files under it.
    private static func loadReadOnly(_ files: StoreFiles) throws -> StoreLoader.Loaded {
        var attempt = 0
        while true {
            let before = try? StoreManifest.read(files)
            do {
                var loader = StoreLoader(files: files, fsync: false, mode: .readOnly)
                return try loader.load()
            } catch let error as IAPError where error.code == .storageFailure || error.code == .storageCorrupted {
                attempt += 1
                guard attempt < 3, (try? StoreManifest.read(files)) != before else {
                    throw error
                }
            }
        }
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
        await watermarkTask?.value
        if lock != nil, failure == nil {
            // Records the journal's final size: emptying or cutting it later is noticed.
            try? await writeWatermark()
        }
        journal?.close()
        lock?.release()
        flusher.stop()
    }

    deinit {
        flusher.stop()
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
        return try await answer(state.entries)
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

    /// Entries parked for an unknown product, oldest first.
    ///
    /// - Parameter limit: The most entries to return (at least 1).
    /// - Returns: The parked entries.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a `limit` below 1, or `storageFailure` once closed.
    public func parkedEntries(limit: Int) async throws -> [LedgerEntry] {
        try checkOpen()
        return try await answer(try state.parked(limit: limit))
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

    // MARK: The support audit's head

    /// The support audit's head as the journal last recorded it, once durable; `nil` when it never recorded one.
    func auditHead() async throws -> LedgerState.AuditHead? {
        try checkOpen()
        return try await answer(state.auditHead)
    }

    /// Records the support audit's head in the journal (an `auditHead` record), durably; without `resealing`, a head
    /// with no more entries than the recorded one writes nothing.
    func recordAuditHead(_ head: LedgerState.AuditHead, resealing: Bool) async throws {
        try checkOpen()
        if !resealing, let recorded = state.auditHead, recorded.entries >= head.entries {
            return try await answer(())
        }
        let lsn = try append(.auditHead(head)) { $0.recordAuditHead(head) }
        try await waitUntilDurable(lsn)
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

    /// What a record does to where an entry's signed transaction is.
    private enum SignedChange {
        /// Nothing (a replace that keeps it, or a record of another kind).
        case keep
        /// An insert, with the entry's signed transaction or none.
        case insert(String?)
        /// A replace that stores this signed transaction, or removes it.
        case set(String?)
    }

    /// Encodes a record, applies its mutation to the state, and queues the record for the next flush.
    ///
    /// A signed transaction goes to the journal without its protected header (Apple's certificate chain, 5 KB of
    /// its 6), which the journal holds once as a `header` record that the entry record refers to: written before
    /// it, in the same batch, the first time this journal needs it. Nothing changes if encoding fails. The caller
    /// must then wait for the returned log sequence number.
    private func append(
        _ operation: JournalOperation,
        signed change: SignedChange = .keep,
        position: Int? = nil,
        apply: (inout LedgerState) -> LedgerState.Undo?
    ) throws -> UInt64 {
        try checkWritable()
        let lsn = lastLSN + 1
        let (operation, headerLine) = try splittingHeader(of: operation)
        let line = try JournalRecord.line(operation, seq: lsn, encoder: encoder)
        let entryPosition = position ?? state.entries.count
        guard let undo = apply(&state) else {
            throw IAPError(.internalError, "the \(operation.kind) record does not fit the ledger; nothing was written")
        }
        if let headerLine {
            if journalHeaders.count >= Self.journalHeaderLimit {
                journalHeaders.removeFirst()
            }
            journalHeaders.append((headerLine.header, UInt64(journalEnd)))
            pending += headerLine.line
            journalEnd += headerLine.line.count
        }
        func location(of jws: String?) -> SignedLocation {
            guard let jws else { return .none }
            pendingSigned.append((entryPosition, pending.count, line.count - 1, jws))
            return .pending(pendingSigned.count - 1)
        }
        var signedUndo: SignedUndo?
        switch change {
        case .keep:
            break
        case .insert(let jws):
            signed.append(location(of: jws))
            signedUndo = .appended
        case .set(let jws):
            signedUndo = .replaced(position: entryPosition, previous: signed[entryPosition])
            signed[entryPosition] = location(of: jws)
        }
        lastLSN = lsn
        pending += line
        journalEnd += line.count
        undoLog.append((undo, signedUndo))
        return lsn
    }

    /// How many protected headers the store remembers for its journal; past it, the oldest is written again when
    /// needed.
    static let journalHeaderLimit = 16

    /// `operation` with its signed transaction referring to its protected header in the journal, and the `header`
    /// record to write first when the journal does not hold that header yet.
    private func splittingHeader(
        of operation: JournalOperation
    ) throws -> (JournalOperation, (header: String, line: [UInt8])?) {
        switch operation {
        case .insert(let entry, .jws(let jws)):
            return try splitting(jws) { .insert(entry, signed: $0) } ?? (operation, nil)
        case .replace(let entry, .jws(let jws)):
            return try splitting(jws) { .replace(entry, signed: $0) } ?? (operation, nil)
        default:
            return (operation, nil)
        }
    }

    /// The record `record` makes of `jws` split from its header, and the `header` record to write first if any;
    /// `nil` for a JWS without a header.
    private func splitting(
        _ jws: String,
        into record: (JournalOperation.SignedField) -> JournalOperation
    ) throws -> (JournalOperation, (header: String, line: [UInt8])?)? {
        var whole = jws
        guard let (header, rest) = whole.withUTF8({ Self.splitHeader($0) }) else {
            return nil
        }
        if let known = journalHeaders.last(where: { $0.header == header }) {
            return (record(.split(header: known.offset, rest: rest)), nil)
        }
        let line = try JournalRecord.line(.header(header), seq: 0, encoder: encoder)
        return (record(.split(header: UInt64(journalEnd), rest: rest)), (header, line))
    }

    /// A compact JWS's protected header and the rest (`<payload>.<signature>`), or `nil` if it has no header.
    private static func splitHeader(_ bytes: UnsafeBufferPointer<UInt8>) -> (header: String, rest: String)? {
        guard let dot = bytes.firstIndex(of: UInt8(ascii: ".")), dot > 0 else {
            return nil
        }
        return (
            String(decoding: UnsafeBufferPointer(rebasing: bytes[..<dot]), as: UTF8.self),
            String(decoding: UnsafeBufferPointer(rebasing: bytes[(dot + 1)...]), as: UTF8.self)
        )
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
        while !pending.isEmpty, failure == nil, let file = journal {
            let batch = pending
            pending = []
            pending.reserveCapacity(batch.count)
            // The batch goes to the end of the current journal: from here on its signed transactions are there.
            let base = journalBytes
            for (index, item) in pendingSigned.enumerated() where signed[item.position] == .pending(index) {
                signed[item.position] = .journal(generation, offset: base + item.lineStart, length: item.lineLength)
            }
            pendingSigned.removeAll()
            if let next = rotation {
                // A compaction starts the new journal here, between two batches: what was encoded for this journal
                // (its records refer to its header records by offset) goes to it whole.
                rotation = nil
                startJournal(next.journal, generation: next.generation, bytes: next.bytes)
                next.done.resume()
            }
            let upTo = lastLSN
            let startLength = journalBytes
            let sync = options.fsync
            let breakFile = failNextFlush
            failNextFlush = false
            do {
                try await flusher.run {
                    try Self.writeBatch(batch, to: file, sync: sync, breakingFile: breakFile)
                }
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
            } else if compaction == nil, !isWritingWatermark, !isClosed,
                journalBytes - (manifest.current?.bytes ?? 0) >= Self.watermarkInterval
            {
                isWritingWatermark = true
                watermarkTask = Task {
                    try? await self.writeWatermark()
                    self.watermarkWritten()
                }
            }
        }
        isFlushing = false
    }

    private func watermarkWritten() {
        isWritingWatermark = false
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
            state.undo(undo.state)
            switch undo.signed {
            case .appended?: signed.removeLast()
            case .replaced(let position, let previous)?: signed[position] = previous
            case nil: break
            }
        }
        undoLog.removeAll()
        pending.removeAll()
        pendingSigned.removeAll()
        lastLSN = durableLSN
        // The store refuses writes from here on; nothing refers to these again until it is reopened.
        journalEnd = journalBytes
        journalHeaders.removeAll()
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
            try await flusher.run {
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
        if let next = rotation {
            rotation = nil
            next.done.resume(throwing: failure)
        }
    }

    // MARK: Manifest

    private var isWritingManifest = false
    private var manifestWaiters: [CheckedContinuation<Void, Never>] = []

    /// How the manifest changes.
    private enum ManifestChange {
        /// The current journal's watermark moves to its durable size.
        case watermark
        /// A new journal is listed after the current one (before any record goes to it).
        case listJournal(generation: UInt64, bytes: Int)
        /// A compaction published its snapshot: only the current journal remains.
        case commit(snapshot: StoreManifest.Snapshot, signed: StoreManifest.Signed?)
    }

    /// Writes the manifest with one change, after any other manifest write of this store finished.
    private func writeManifest(_ change: ManifestChange) async throws {
        while isWritingManifest {
            await withCheckedContinuation { manifestWaiters.append($0) }
        }
        isWritingManifest = true
        defer {
            isWritingManifest = false
            if !manifestWaiters.isEmpty {
                manifestWaiters.removeFirst().resume()
            }
        }
        var updated = manifest
        let current = StoreManifest.Journal(generation: generation, bytes: journalBytes, lsn: durableLSN)
        updated.journals = updated.journals.map { $0.generation == generation ? current : $0 }
        if !updated.journals.contains(where: { $0.generation == generation }) {
            updated.journals.append(current)
        }
        switch change {
        case .watermark:
            break
        case .listJournal(let next, let bytes):
            updated.journals.append(.init(generation: next, bytes: bytes, lsn: durableLSN))
        case .commit(let snapshot, let signed):
            updated.snapshot = snapshot
            updated.signed = signed
            updated.journals = [current]
        }
        guard updated != manifest else {
            return
        }
        let files = self.files
        let sync = options.fsync
        let written = updated
        try await Self.run(on: manifestQueue) {
            try written.write(to: files, sync: sync)
        }
        manifest = written
    }

    /// Records the current journal's durable size and last record in the manifest.
    private func writeWatermark() async throws {
        try await writeManifest(.watermark)
    }

    // MARK: Compaction

    /// Starts a compaction unless one is running: a task that starts a new journal, then snapshots the
    /// ledger as of the switch.
    private func startCompaction() {
        guard compaction == nil, failure == nil, !isClosed, lock != nil else {
            return
        }
        compaction = Task { await self.compactNow() }
    }

    private func compactNow() async {
        let next = generation + 1
        let files = self.files
        let sync = options.fsync
        do {
            guard next <= SignedLocation.maximumGeneration else {
                throw IAPError(.storageFailure, "the journal generation reached its limit (\(next))")
            }
            let newJournal = try await flusher.run {
                try StoreLoader.createJournal(next, files: files, sync: sync)
            }
            let bytes = try newJournal.size()
            // The manifest lists the new journal before any record goes to it.
            try await writeManifest(.listJournal(generation: next, bytes: bytes))
            if pending.isEmpty {
                startJournal(newJournal, generation: next, bytes: bytes)
            } else {
                // The records pending were encoded for the current journal: the flush loop switches after it took
                // them.
                try await withCheckedThrowingContinuation { continuation in
                    rotation = JournalRotation(journal: newJournal, generation: next, bytes: bytes, done: continuation)
                    startFlushing()
                }
            }
            // From here on, records go to the new journal; the snapshot holds everything up to `lastLSN`.
            let snapshot = state
            let locations = signed
            let pendingJWS = pendingSigned.map(\.jws)
            let lsn = lastLSN
            try await writeSnapshot(
                snapshot,
                locations: locations,
                pendingJWS: pendingJWS,
                lsn: lsn,
                generation: next
            )
        } catch {
            compactionFailed(error)
        }
        compaction = nil
    }

    /// Makes `file`, just created with `bytes` bytes, the journal that records go to.
    private func startJournal(_ file: SystemFile, generation next: UInt64, bytes: Int) {
        journal = file
        generation = next
        journalBytes = bytes
        journalEnd = bytes
        journalHeaders.removeAll()
    }

    /// What a compaction moved into the signed-transaction file.
    private struct MovedSignatures: Sendable {
        var signedFile: StoreManifest.Signed?
        var headers: [String: UInt64]
        /// Entries whose signed transaction was in a journal, and where it is now.
        var moved: [(position: Int, from: SignedLocation, to: JournalOperation.SignedReference)]
    }

    private func writeSnapshot(
        _ snapshot: LedgerState,
        locations: [SignedLocation],
        pendingJWS: [String],
        lsn: UInt64,
        generation: UInt64
    ) async throws {
        let files = self.files
        let sync = options.fsync
        let temporary = files.temporarySnapshot(generation)
        let committed = manifest.signed
        let headers = signedHeaders
        do {
            // Every record the snapshot holds must be written before the journals are read back: a batch may still
            // be on its way to the old journal.
            try await waitUntilDurable(lsn)
            let result = try await Self.run(on: compactionQueue) {
                try Self.writeSnapshotFiles(
                    snapshot,
                    locations: locations,
                    pendingJWS: pendingJWS,
                    lsn: lsn,
                    generation: generation,
                    committed: committed,
                    headers: headers,
                    files: files,
                    sync: sync
                )
            }
            try await Self.run(on: compactionQueue) {
                try SystemFile.rename(temporary, to: files.snapshot(generation))
                if sync {
                    try SystemFile.syncDirectory(files.directory)
                }
            }
            // The commit: the manifest names the new snapshot; the older files are leftovers from here on.
            try await writeManifest(
                .commit(snapshot: .init(generation: generation, lsn: lsn), signed: result.signedFile)
            )
            signedHeaders = result.headers
            for move in result.moved where signed.indices.contains(move.position) && signed[move.position] == move.from
            {
                signed[move.position] = .signedFile(move.to)
            }
            // A write undone later must not bring back a place in a journal that is about to go.
            let movedFrom = Dictionary(result.moved.map { ($0.from, $0.to) }, uniquingKeysWith: { first, _ in first })
            undoLog = undoLog.map { undo in
                guard case .replaced(let position, let previous)? = undo.signed, let to = movedFrom[previous] else {
                    return undo
                }
                return (undo.state, .replaced(position: position, previous: .signedFile(to)))
            }
            try await Self.run(on: compactionQueue) {
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
            throw error
        }
    }

    /// Moves the signed transactions the journals hold into the signed-transaction file, then writes the snapshot
    /// that refers to them (both flushed); runs on the compaction queue.
    private static func writeSnapshotFiles(
        _ snapshot: LedgerState,
        locations: [SignedLocation],
        pendingJWS: [String],
        lsn: UInt64,
        generation: UInt64,
        committed: StoreManifest.Signed?,
        headers: [String: UInt64],
        files: StoreFiles,
        sync: Bool
    ) throws -> MovedSignatures {
        let signedGeneration = committed?.generation ?? generation
        var appender: SignedFileAppender?
        let reader = SignedTransactionReader(files: files, signedGeneration: signedGeneration)
        var result = MovedSignatures(signedFile: committed, headers: headers, moved: [])
        var references = [JournalOperation.SignedReference?](repeating: nil, count: locations.count)
        for (position, location) in locations.enumerated() {
            let transactionId = snapshot.entries[position].transactionId
            let jws: String
            switch location.kind {
            case .none:
                continue
            case .signedFile(let reference):
                references[position] = reference
                continue
            case .pending(let index):
                jws = pendingJWS[index]
            case .journal:
                guard let read = try reader.read(location, transactionId: transactionId) else { continue }
                jws = read
            }
            if appender == nil {
                appender = try SignedFileAppender(
                    path: files.signed(signedGeneration),
                    committed: (committed?.bytes ?? 0, committed?.records ?? 0),
                    headers: headers
                )
            }
            guard var open = appender else { continue }
            let reference = try open.append(jws, transactionId: transactionId)
            appender = open
            references[position] = reference
            if case .journal = location.kind {
                result.moved.append((position, location, reference))
            }
        }
        if var open = appender {
            try open.finish(sync: sync)
            result.signedFile = .init(generation: signedGeneration, bytes: open.bytes, records: open.records)
            result.headers = open.headers
        }
        try SnapshotWriter.write(
            snapshot,
            references: { references[$0] },
            lsn: lsn,
            generation: generation,
            signedGeneration: result.signedFile?.generation,
            to: files.temporarySnapshot(generation),
            fsync: sync
        )
        return result
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
        guard lock != nil else {
            throw IAPError(
                .unsupportedOperation,
                "the store in \(files.directory) was opened read-only; open it read-write to change it"
            )
        }
        if let failure {
            throw failure
        }
    }

    /// What the store holds, for a repair to write again.
    func loadedForRepair() -> (
        state: LedgerState, signed: [SignedLocation], lsn: UInt64, signedGeneration: UInt64?, signedFrom: Int64
    ) {
        (state, signed, lastLSN, manifest.signed?.generation, manifest.signedFrom)
    }

    /// Test hook: makes the next flush fail after its records were written, by closing the journal.
    func breakNextFlush() {
        failNextFlush = true
    }

    /// Appends a batch to the journal and flushes it; runs on the ``flusher``'s thread.
    ///
    /// A flush blocks for as long as the disk takes to answer its `fsync`. On a thread of the concurrency pool (one
    /// per core) it kept that core from verifying and encoding while the disk worked; handing it to the store's own
    /// thread and back costs two thread wake-ups, a few microseconds next to the `fsync` (see
    /// `Documentation/FileStore.md`).
    private nonisolated static func writeBatch(
        _ batch: [UInt8],
        to file: SystemFile,
        sync: Bool,
        breakingFile: Bool
    ) throws {
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
