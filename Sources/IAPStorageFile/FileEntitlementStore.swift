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

    let files: StoreFiles
    /// The directory's lock; `nil` for a read-only store, which takes none.
    let lock: DirectoryLock?
    let encoder = RecordEncoder()
    /// The thread that writes and flushes the journal, so that a flush waiting for the disk holds neither the
    /// actor nor a thread of the concurrency pool.
    let flusher = JournalFlusher()
    /// Serial queue for writing snapshots.
    let compactionQueue = DispatchQueue(label: "swift-iap.file-store.compaction")
    /// Serial queue for writing the manifest, in the order the actor asks.
    let manifestQueue = DispatchQueue(label: "swift-iap.file-store.manifest")

    /// The ledger, including writes whose records are not durable yet.
    var state: LedgerState
    /// Where each entry's signed transaction is, by position (as ``state``'s entries).
    var signed: [SignedLocation]
    /// The signed transactions of the records in ``pending``: the entry's position, where its line starts in
    /// ``pending`` and its length, and the JWS (until the record is handed to the journal).
    var pendingSigned: [(position: Int, lineStart: Int, lineLength: Int, jws: String)] = []
    /// The journal being appended to (`nil` when read-only), its generation, and its durable size.
    var journal: SystemFile?
    var generation: UInt64
    var journalBytes: Int
    /// Where in the journal the next record handed to ``pending`` will be: its durable size, plus the batch in flight
    /// and what is pending.
    var journalEnd: Int
    /// The protected headers the current journal holds as `header` records (durable, in flight or pending), by the
    /// byte offset of their record: a signed transaction written to this journal refers to its header there.
    /// A few at most (one per signing certificate in use), so a scan comparing bytes beats hashing 4 KB.
    var journalHeaders: [(header: String, offset: UInt64)]
    /// A compaction waiting for the flush loop to start the new journal between two batches.
    var rotation: JournalRotation?

    /// A new journal a compaction waits to switch to, and the compaction's continuation.
    struct JournalRotation {
        var journal: SystemFile
        var generation: UInt64
        var bytes: Int
        var done: CheckedContinuation<Void, any Error>
    }
    /// The manifest as last written.
    var manifest: StoreManifest
    /// Headers already in the signed-transaction file, by the offset of their record.
    var signedHeaders: [String: UInt64] = [:]
    var isWritingWatermark = false
    /// The background write of a watermark, if one runs; `close()` waits for it before it lets go of the lock.
    var watermarkTask: Task<Void, Never>?
    /// Encoded records waiting for the next flush.
    var pending: [UInt8] = []
    /// The log sequence number of the last record handed to the journal, and of the last durable one.
    var lastLSN: UInt64
    var durableLSN: UInt64
    /// How to undo each record after `durableLSN`, oldest first.
    var undoLog: [(state: LedgerState.Undo, signed: SignedUndo?)] = []
    /// Calls waiting for a record to become durable.
    var waiters: [(lsn: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    var isFlushing = false
    var compaction: Task<Void, Never>?
    /// The journal size at which compaction is tried again after it failed.
    var nextCompactionAttempt = 0
    /// Why the last compaction failed, if it did.
    var compactionError: IAPError?
    /// Set after a flush failed: the store then refuses writes.
    var failure: IAPError?
    var isClosed = false
    /// Test hook: close the journal after the next batch is written and before it is flushed.
    var failNextFlush = false
    /// Whether a manifest write runs, and the writes waiting for it to finish.
    var isWritingManifest = false
    var manifestWaiters: [CheckedContinuation<Void, Never>] = []

    /// How to undo a record's change of where a signed transaction is.
    enum SignedUndo {
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

    // MARK: Helpers

    func checkOpen() throws {
        if isClosed {
            throw IAPError(.storageFailure, "the store in \(files.directory) is closed")
        }
    }

    func checkWritable() throws {
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
    nonisolated static func writeBatch(
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
    static func run<Value: Sendable>(
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
