#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import IAPCore

/// Reads a store directory: the manifest, the snapshot it names, the journals after it; checks that nothing the
/// manifest records is missing; and, when opening for writing, repairs what a crash may leave (a last record
/// without its newline, the leftovers of an interrupted compaction) and writes the manifest again.
///
/// Three modes:
/// - `open`: strict; repairs and writes (the store's read-write open);
/// - `readOnly`: strict; changes nothing and reports what an open would repair (read-only opens);
/// - `scan`: tolerant; changes nothing, keeps every record that verifies, and lists everything else as a
///   ``FileEntitlementStore/Finding`` (`iap ledger check` and `repair`).
struct StoreLoader {
    enum Mode {
        case open
        case readOnly
        case scan
    }

    /// A loaded store.
    struct Loaded {
        var state: LedgerState
        /// Where each entry's signed transaction is, by position.
        var signed: [SignedLocation]
        /// The log sequence number of the last record.
        var lsn: UInt64
        /// The generation of the journal to append to.
        var generation: UInt64
        /// The journal to append to, opened with `O_APPEND` (`open` mode only).
        var journal: SystemFile?
        /// Its size.
        var journalBytes: Int
        /// The manifest as it stands after the load (written in `open` mode).
        var manifest: StoreManifest
        var recovery: FileEntitlementStore.RecoveryReport
        /// Everything found (`scan`), or the notes (other modes: damage throws).
        var findings: [FileEntitlementStore.Finding]
        /// The snapshot's signed references, for a scan's check of the signed-transaction file.
        var references: [(transactionId: String, reference: JournalOperation.SignedReference)]
        /// The `header` records of the journal to append to: protected header → byte offset of its record.
        var journalHeaders: [String: UInt64]
    }

    let files: StoreFiles
    let fsync: Bool
    let mode: Mode

    var state = LedgerState()
    var signed: [SignedLocation] = []
    var lsn: UInt64 = 0
    var findings: [FileEntitlementStore.Finding] = []
    var references: [(transactionId: String, reference: JournalOperation.SignedReference)] = []
    var recovery = FileEntitlementStore.RecoveryReport(
        snapshotGeneration: nil,
        snapshotRecords: 0,
        journalRecords: 0,
        droppedTail: nil,
        removedFiles: []
    )
    /// The entries kept whose sequence (as recorded) is below the manifest's `signedFrom`.
    var entriesBeforeSignedFrom: Int64 = 0
    /// The manifest's `signedFrom`.
    var signedFrom: Int64 = 1
    /// Whether any file says it was written with a manifest (a journal header, a snapshot that names its signed
    /// file): then a missing manifest was deleted, not never written.
    var sawManifestEra = false
    /// The `header` records of each journal replayed: protected header → byte offset.
    var headersByGeneration: [UInt64: [String: UInt64]] = [:]
    /// The byte offsets of the `header` records of the journal being replayed.
    var headerOffsets: Set<UInt64> = []

    init(files: StoreFiles, fsync: Bool, mode: Mode) {
        self.files = files
        self.fsync = fsync
        self.mode = mode
        recovery.isPlanOnly = mode != .open
    }

    /// Loads the directory.
    ///
    /// - Throws: ``IAPError`` with code `notFound` when the directory holds no ledger (and the mode does not create
    ///   one); `storageCorrupted` naming the file and line of the first damage (strict modes); `unsafeFile` for a
    ///   link where a store file belongs; `storageFailure` when a file cannot be read or written.
    mutating func load() throws -> Loaded {
        guard SystemFile.exists(files.directory) else {
            throw IAPError(.notFound, "there is no ledger in \(files.directory): the directory does not exist")
        }
        let listing = try files.list()
        let manifest: StoreManifest?
        var manifestDamaged = false
        do {
            manifest = try StoreManifest.read(files)
        } catch let error as IAPError where error.code == .storageCorrupted && mode == .scan {
            report(.damage, file: StoreFiles.manifestName, error.message)
            manifest = nil
            manifestDamaged = true
        }
        guard manifest != nil || listing.holdsLedger else {
            guard mode == .open else {
                throw IAPError(.notFound, "there is no ledger in \(files.directory)")
            }
            return try create()
        }
        signedFrom = manifest?.signedFrom ?? Int64.max
        let plan = try self.plan(listing, manifest: manifest)
        try stopAtDamage()
        if let snapshot = plan.snapshot {
            try loadSnapshot(snapshot, manifest: manifest)
            try stopAtDamage()
        }
        var replayed: [Replayed] = []
        for journal in plan.journals {
            replayed.append(try replay(journal, expected: manifest?.journals.first { $0.generation == journal }))
        }
        let torn = try checkTail(replayed)
        try checkSignedFile(manifest, listing: listing)
        if manifest == nil, !manifestDamaged {
            if sawManifestEra || !listing.signed.isEmpty {
                report(
                    .damage,
                    file: StoreFiles.manifestName,
                    "the manifest is missing, though the ledger was written with one: it records which records the "
                        + "ledger must hold, so a journal cut short or deleted cannot be told from a complete one"
                )
            } else {
                report(
                    .note,
                    file: StoreFiles.manifestName,
                    "no manifest: the ledger was written by an earlier version; an open writes one from the files found"
                )
                recovery.createdManifest = true
            }
        }
        for leftover in plan.leftovers {
            report(.note, file: leftover, "left by an interrupted compaction; an open removes it")
        }
        recovery.removedFiles = plan.leftovers
        try stopAtDamage()

        let generation = plan.journals.last ?? max(plan.snapshot ?? 1, 1)
        var current = StoreManifest(
            snapshot: plan.snapshot.map { .init(generation: $0, lsn: plan.snapshotLSN) },
            journals: replayed.map { .init(generation: $0.generation, bytes: $0.durableBytes, lsn: $0.lastSeq) },
            signed: plan.signed,
            // A ledger of an earlier version kept no signed transactions: from here on it does. (Counted, not copied:
            // a scan that dropped an entry renumbered those after it.)
            signedFrom: manifest == nil ? state.lastSequence + 1 : entriesBeforeSignedFrom + 1
        )
        if current.journals.isEmpty {
            current.journals = [.init(generation: generation, bytes: 0, lsn: lsn)]
        }
        var journal: SystemFile?
        if mode == .open {
            journal = try repair(torn: torn, signed: plan.signed, leftovers: plan.leftovers, generation: generation)
            if current != manifest {
                try current.write(to: files, sync: fsync)
            }
        }
        return Loaded(
            state: state,
            signed: signed,
            lsn: lsn,
            generation: generation,
            journal: journal,
            journalBytes: current.journals.last?.bytes ?? 0,
            manifest: current,
            recovery: recovery,
            findings: findings,
            references: references,
            journalHeaders: headersByGeneration[generation] ?? [:]
        )
    }
}
