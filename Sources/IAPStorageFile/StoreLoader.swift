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

    private var state = LedgerState()
    private var signed: [SignedLocation] = []
    private var lsn: UInt64 = 0
    private var findings: [FileEntitlementStore.Finding] = []
    private var references: [(transactionId: String, reference: JournalOperation.SignedReference)] = []
    private var recovery = FileEntitlementStore.RecoveryReport(
        snapshotGeneration: nil,
        snapshotRecords: 0,
        journalRecords: 0,
        droppedTail: nil,
        removedFiles: []
    )
    /// The entries kept whose sequence (as recorded) is below the manifest's `signedFrom`.
    private var entriesBeforeSignedFrom: Int64 = 0
    /// The manifest's `signedFrom`.
    private var signedFrom: Int64 = 1
    /// Whether any file says it was written with a manifest (a journal header, a snapshot that names its signed
    /// file): then a missing manifest was deleted, not never written.
    private var sawManifestEra = false
    /// The `header` records of each journal replayed: protected header → byte offset.
    private var headersByGeneration: [UInt64: [String: UInt64]] = [:]
    /// The byte offsets of the `header` records of the journal being replayed.
    private var headerOffsets: Set<UInt64> = []

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

    // MARK: Creating

    /// A new, empty store: `journal-1.jsonl` with its header line, and the manifest that lists it.
    private mutating func create() throws -> Loaded {
        let journal = try Self.createJournal(1, files: files, sync: fsync)
        let bytes = try journal.size()
        let manifest = StoreManifest(snapshot: nil, journals: [.init(generation: 1, bytes: bytes, lsn: 0)], signed: nil)
        try manifest.write(to: files, sync: fsync)
        return Loaded(
            state: state,
            signed: [],
            lsn: 0,
            generation: 1,
            journal: journal,
            journalBytes: bytes,
            manifest: manifest,
            recovery: recovery,
            findings: [],
            references: [],
            journalHeaders: [:]
        )
    }

    /// Creates `journal-<generation>.jsonl` holding its header line, flushed with its directory entry, and returns
    /// it opened for appending.
    static func createJournal(_ generation: UInt64, files: StoreFiles, sync: Bool) throws -> SystemFile {
        let file = try SystemFile.open(files.journal(generation), flags: O_WRONLY | O_CREAT | O_APPEND | O_TRUNC)
        try file.write(
            try JournalRecord.line(.journal(.init(generation: generation)), seq: 0, encoder: RecordEncoder())
        )
        if sync {
            try file.sync()
            try SystemFile.syncDirectory(files.directory)
        }
        return file
    }

    // MARK: Planning

    private struct Plan {
        var snapshot: UInt64?
        var snapshotLSN: UInt64 = 0
        var journals: [UInt64] = []
        var signed: StoreManifest.Signed?
        var leftovers: [String] = []
    }

    /// Which files to read, and which are leftovers; reports the files the manifest lists that are missing.
    private mutating func plan(_ listing: StoreFiles.Listing, manifest: StoreManifest?) throws -> Plan {
        var plan = Plan()
        plan.leftovers = listing.temporaries
        guard let manifest else {
            // An earlier version's ledger: the newest snapshot and the journals from its generation on.
            plan.snapshot = listing.snapshots.last
            let base = plan.snapshot ?? 0
            plan.journals = listing.journals.filter { $0 >= base }
            plan.leftovers += listing.journals.filter { $0 < base }.map(StoreFiles.journalName)
            plan.leftovers += listing.snapshots.filter { $0 < base }.map(StoreFiles.snapshotName)
            return plan
        }
        plan.snapshot = manifest.snapshot?.generation
        plan.snapshotLSN = manifest.snapshot?.lsn ?? 0
        plan.signed = manifest.signed
        if let snapshot = manifest.snapshot, !listing.snapshots.contains(snapshot.generation) {
            report(
                .damage,
                file: StoreFiles.snapshotName(snapshot.generation),
                "the snapshot is missing: the manifest names it, with every record up to \(snapshot.lsn)"
            )
            plan.snapshot = nil
        }
        plan.leftovers += listing.snapshots.filter { $0 != manifest.snapshot?.generation }.map(StoreFiles.snapshotName)
        let listed = manifest.journals.map(\.generation)
        for journal in manifest.journals where !listing.journals.contains(journal.generation) {
            report(
                .damage,
                file: StoreFiles.journalName(journal.generation),
                "the journal is missing: the manifest lists it"
                    + (journal.bytes > 0 ? ", with at least \(journal.bytes) bytes (records up to \(journal.lsn))" : "")
            )
        }
        plan.journals = listed.filter { listing.journals.contains($0) }
        for generation in listing.journals where !listed.contains(generation) {
            let name = StoreFiles.journalName(generation)
            if let first = listed.first, generation < first {
                plan.leftovers.append(name)
            } else if try holdsRecords(files.journal(generation)) {
                report(
                    .damage,
                    file: name,
                    "the journal holds records but the manifest does not list it (a journal is listed before any "
                        + "record goes to it)"
                )
            } else {
                plan.leftovers.append(name)
            }
        }
        plan.leftovers += listing.signed.filter { $0 != manifest.signed?.generation }.map(StoreFiles.signedName)
        return plan
    }

    /// Whether a journal holds anything but its header line.
    private func holdsRecords(_ path: String) throws -> Bool {
        var holds = false
        let tail = try RecordFileReader.read(path: path) { lines in
            for line in lines {
                if case .success(let record) = line.result, record.seq == 0, case .journal = record.operation {
                    continue
                }
                holds = true
            }
        }
        return holds || tail.offset < tail.fileSize
    }

    // MARK: Snapshot

    private mutating func loadSnapshot(_ generation: UInt64, manifest: StoreManifest?) throws {
        let name = StoreFiles.snapshotName(generation)
        var header: JournalOperation.SnapshotHeader?
        var records = 0
        var ended = false
        let tail = try RecordFileReader.read(path: files.snapshot(generation)) { lines in
            for index in lines.indices {
                let result = lines[index].takeResult()
                let line = lines[index]
                let record: JournalRecord.Decoded
                switch consume result {
                case .success(let decoded):
                    record = decoded
                case .failure(let problem):
                    try damaged(name, line, problem.reason, guessing: true)
                    records += 1
                    continue
                }
                if ended {
                    try damaged(name, line, "a record after the end record")
                    continue
                }
                if record.seq != UInt64(records + 1) {
                    try damaged(name, line, "record number \(record.seq) where \(records + 1) belongs")
                }
                if header == nil {
                    guard case .snapshot(let found) = record.operation, found.generation == generation else {
                        try damaged(name, line, "the first record is not the header of snapshot \(generation)")
                        records += 1
                        continue
                    }
                    header = found
                    lsn = found.lsn
                    sawManifestEra = sawManifestEra || found.signedGeneration != nil
                    // Room for the snapshot's entries and some growth, allocated once.
                    if let count = Int(exactly: found.lastSequence), count > 0 {
                        state.reserveCapacity(count + count / 16)
                        signed.reserveCapacity(count + count / 16)
                    }
                    records += 1
                    continue
                }
                switch record.operation {
                case .entry(let entry, let field):
                    var location = SignedLocation.none
                    if case .reference(let reference) = field {
                        location = .signedFile(reference)
                        if mode == .scan {
                            references.append((entry.transactionId, reference))
                        }
                        if let committed = manifest?.signed?.bytes,
                            reference.offset + UInt64(reference.length) >= UInt64(committed)
                        {
                            try damaged(
                                name,
                                line,
                                "the signed transaction of \(entry.transactionId) lies past the committed end of the "
                                    + "signed-transaction file (byte \(committed))",
                                transactionId: entry.transactionId
                            )
                            location = .none
                        } else if manifest?.signed == nil && manifest != nil {
                            try damaged(
                                name,
                                line,
                                "entry \(entry.transactionId) refers to a signed-transaction file the manifest does "
                                    + "not name",
                                transactionId: entry.transactionId
                            )
                            location = .none
                        }
                    } else if field != .unchanged {
                        try damaged(name, line, "an entry of a snapshot carries its signed transaction itself")
                    }
                    try insert(entry, signed: location, file: name, line: line)
                case .bind(let token, let userId):
                    if state.bind(token: token, to: userId) == nil {
                        try damaged(name, line, "appAccountToken \(token) bound twice")
                    }
                case .renewal(let info):
                    if let original = info.originalTransactionId, !original.isEmpty {
                        _ = state.storeRenewalInfo(info, for: original)
                    } else {
                        try damaged(name, line, "renewal info without an originalTransactionId")
                    }
                case .notification(let uuid, let at):
                    if state.markNotification(uuid, at: at) == nil {
                        try damaged(name, line, "notification \(uuid) recorded twice")
                    }
                case .auditHead(let head):
                    _ = state.recordAuditHead(head)
                case .end(let count):
                    if count != records {
                        try damaged(name, line, "the end record counts \(count) records, the file has \(records)")
                    }
                    ended = true
                case .insert, .replace, .snapshot, .journal, .header, .signed:
                    try damaged(name, line, "a \(record.operation.kind) record does not belong in a snapshot")
                }
                records += 1
            }
        }
        if tail.offset < tail.fileSize {
            try damaged(
                name,
                offset: tail.offset,
                line: tail.lineNumber,
                "the snapshot ends in the middle of a record (a snapshot is renamed into place only once complete)"
            )
        }
        if !ended || header == nil {
            report(.damage, file: name, "the snapshot is incomplete (no end record after \(records) records)")
        }
        if let header, header.lastSequence != state.lastSequence, mode != .scan {
            report(
                .damage,
                file: name,
                "the header says the last sequence is \(header.lastSequence), the entries end at \(state.lastSequence)"
            )
        }
        if let expected = manifest?.snapshot, let header, header.lsn != expected.lsn {
            report(
                .damage,
                file: name,
                "the snapshot holds records up to \(header.lsn), the manifest says \(expected.lsn)"
            )
            lsn = max(lsn, expected.lsn)
        } else if header == nil, let expected = manifest?.snapshot {
            lsn = expected.lsn
        }
        if let header, let named = header.signedGeneration, manifest != nil, named != manifest?.signed?.generation {
            report(
                .damage,
                file: name,
                "the snapshot refers to signed-transaction file \(named), the manifest names "
                    + (manifest?.signed.map { "\($0.generation)" } ?? "none")
            )
        }
        recovery.snapshotGeneration = generation
        recovery.snapshotRecords = records
    }

    // MARK: Journals

    /// What replaying one journal found.
    private struct Replayed {
        var generation: UInt64
        /// Whether it applied records (or holds any, header aside).
        var heldRecords: Bool
        /// Where a last line without its newline starts, and its length.
        var torn: (offset: Int, length: Int)?
        /// Its size, and the size without a torn last line: what was durable.
        var fileSize: Int
        var durableBytes: Int
        /// The log sequence number after it.
        var lastSeq: UInt64
    }

    private mutating func replay(_ generation: UInt64, expected: StoreManifest.Journal?) throws -> Replayed {
        let name = StoreFiles.journalName(generation)
        var previousSeq: UInt64?
        var held = false
        var headers: [String: UInt64] = [:]
        headerOffsets = []
        defer { headersByGeneration[generation] = headers }
        let tail = try RecordFileReader.read(path: files.journal(generation)) { lines in
            for line in lines {
                let record: JournalRecord.Decoded
                switch line.result {
                case .success(let decoded):
                    record = decoded
                case .failure(let problem):
                    held = true
                    try damaged(name, line, problem.reason, guessing: true)
                    continue
                }
                if record.seq == 0, line.number > 1, case .header(let header) = record.operation {
                    // A protected header the signed transactions after it refer to; not a change of the ledger.
                    held = true
                    headers[header] = headers[header] ?? UInt64(line.offset)
                    headerOffsets.insert(UInt64(line.offset))
                    continue
                }
                if record.seq == 0 {
                    guard line.number == 1, case .journal(let header) = record.operation,
                        header.generation == generation
                    else {
                        try damaged(name, line, "record number 0 is the journal's header line, its first")
                        continue
                    }
                    sawManifestEra = true
                    continue
                }
                held = true
                if let previousSeq, record.seq != previousSeq + 1 {
                    try damaged(name, line, "record \(record.seq) follows record \(previousSeq)")
                }
                previousSeq = record.seq
                if record.seq <= lsn {
                    // Written to the new journal while the snapshot that already holds it was being taken.
                    continue
                }
                if record.seq != lsn + 1 {
                    try damaged(name, line, "record \(record.seq) follows record \(lsn): records are missing")
                }
                if try apply(record.operation, generation: generation, file: name, line: line) {
                    recovery.journalRecords += 1
                }
                lsn = record.seq
            }
        }
        var replayed = Replayed(
            generation: generation,
            heldRecords: held,
            torn: nil,
            fileSize: tail.fileSize,
            durableBytes: tail.offset,
            lastSeq: lsn
        )
        if tail.offset < tail.fileSize {
            replayed.torn = (tail.offset, tail.fileSize - tail.offset)
            replayed.heldRecords = true
        }
        if let expected {
            if replayed.durableBytes < expected.bytes {
                report(
                    .damage,
                    file: name,
                    offset: replayed.durableBytes,
                    "the journal ends at byte \(replayed.durableBytes)"
                        + (replayed.torn == nil ? "" : " (then a torn record)")
                        + ", but the manifest records \(expected.bytes) durable bytes: recorded writes are lost"
                )
            }
            if lsn < expected.lsn {
                report(
                    .damage,
                    file: name,
                    "the records end at \(lsn), but the manifest records them durable up to \(expected.lsn): "
                        + "recorded writes are lost"
                )
            }
        }
        return replayed
    }

    /// Checks that only the last journal that holds records ends without a newline, and returns that torn tail.
    private mutating func checkTail(_ replayed: [Replayed]) throws -> (generation: UInt64, offset: Int, length: Int)? {
        let lastHolding = replayed.lastIndex { $0.heldRecords }
        var torn: (generation: UInt64, offset: Int, length: Int)?
        for (index, journal) in replayed.enumerated() {
            guard let tail = journal.torn else { continue }
            let name = StoreFiles.journalName(journal.generation)
            guard index == lastHolding else {
                report(
                    .damage,
                    file: name,
                    offset: tail.offset,
                    "the journal ends in the middle of a record though a newer journal holds records after it"
                )
                continue
            }
            report(
                .note,
                file: name,
                offset: tail.offset,
                "the last \(tail.length) bytes are a record without its newline: a write torn by a crash, whose call "
                    + "never returned; an open cuts them"
            )
            torn = (journal.generation, tail.offset, tail.length)
            recovery.droppedTail = .init(
                file: name,
                offset: tail.offset,
                length: tail.length,
                reason: "no newline at the end"
            )
        }
        return torn
    }

    /// Applies a journal record; `false` when a scan dropped it.
    private mutating func apply(
        _ operation: JournalOperation,
        generation: UInt64,
        file: String,
        line: RecordFileReader.Line
    ) throws -> Bool {
        func location(_ field: JournalOperation.SignedField) -> SignedLocation? {
            switch field {
            case .unchanged: nil
            case .removed: SignedLocation.none
            case .jws, .split: .journal(generation, offset: line.offset, length: line.length)
            case .reference: nil
            }
        }
        var operation = operation
        switch operation {
        case .insert(let entry, .split(let header, _)) where !headerOffsets.contains(header),
            .replace(let entry, .split(let header, _)) where !headerOffsets.contains(header):
            let reason =
                "the signed transaction of \(entry.transactionId) refers to a header record at byte \(header) that "
                + "the journal does not hold before it"
            guard mode == .scan else {
                return try damaged(file, line, reason, transactionId: entry.transactionId)
            }
            // The entry itself is intact: a repair keeps it (and a signed transaction it had before), not this one.
            report(
                .damage,
                file: file,
                offset: line.offset,
                line: line.number,
                reason + "; a repair keeps the entry without this signed transaction",
                transactionId: entry.transactionId
            )
            if case .insert = operation {
                operation = .insert(entry, signed: .unchanged)
            } else {
                operation = .replace(entry, signed: .unchanged)
            }
        default:
            break
        }
        switch operation {
        case .insert(let entry, let field):
            if case .reference = field {
                return try damaged(file, line, "an insert refers to its signed transaction by place only")
            }
            guard entry.revision == 1 else {
                return try damaged(
                    file,
                    line,
                    "insert of \(entry.transactionId) with revision \(entry.revision)",
                    transactionId: entry.transactionId
                )
            }
            return try insert(entry, signed: location(field) ?? .none, file: file, line: line)
        case .replace(var entry, let field):
            if case .reference = field {
                return try damaged(file, line, "a replace refers to its signed transaction by place only")
            }
            guard let current = state.entry(transactionId: entry.transactionId) else {
                return try damaged(
                    file,
                    line,
                    "replace of \(entry.transactionId), which is not recorded",
                    transactionId: entry.transactionId
                )
            }
            if mode == .scan {
                // What a dropped record renumbered.
                entry.sequence = current.sequence
                if entry.revision <= current.revision {
                    return try damaged(
                        file,
                        line,
                        "replace of \(entry.transactionId) to revision \(entry.revision), not after \(current.revision)",
                        transactionId: entry.transactionId
                    )
                }
            } else if entry.revision != current.revision + 1 {
                return try damaged(
                    file,
                    line,
                    "replace of \(entry.transactionId) does not follow the stored revision",
                    transactionId: entry.transactionId
                )
            }
            guard state.replace(with: entry) != nil else {
                return try damaged(
                    file,
                    line,
                    "replace of \(entry.transactionId) changes what never changes",
                    transactionId: entry.transactionId
                )
            }
            if let moved = location(field), let position = Int(exactly: current.sequence - 1) {
                signed[position] = moved
            }
            return true
        case .bind(let token, let userId):
            guard state.bind(token: token, to: userId) != nil else {
                return try damaged(file, line, "appAccountToken \(token) bound twice")
            }
        case .renewal(let info):
            guard let original = info.originalTransactionId, !original.isEmpty else {
                return try damaged(file, line, "renewal info without an originalTransactionId")
            }
            _ = state.storeRenewalInfo(info, for: original)
        case .notification(let uuid, let at):
            guard state.markNotification(uuid, at: at) != nil else {
                return try damaged(file, line, "notification \(uuid) recorded twice")
            }
        case .auditHead(let head):
            _ = state.recordAuditHead(head)
        case .entry, .snapshot, .end, .journal, .header, .signed:
            return try damaged(file, line, "a \(operation.kind) record does not belong in a journal")
        }
        return true
    }

    /// Appends an entry; a scan renumbers it when a record before it was dropped.
    @discardableResult
    private mutating func insert(
        _ entry: consuming LedgerEntry,
        signed location: SignedLocation,
        file: String,
        line: RecordFileReader.Line
    ) throws -> Bool {
        let recordedSequence = entry.sequence
        if mode == .scan, entry.sequence != state.lastSequence + 1,
            state.entry(transactionId: entry.transactionId) == nil
        {
            entry.sequence = state.lastSequence + 1
        }
        let transactionId = entry.transactionId
        let sequence = entry.sequence
        guard state.insert(consume entry) != nil else {
            return try damaged(
                file,
                line,
                "entry \(transactionId) with sequence \(sequence) does not follow sequence "
                    + "\(state.lastSequence) or repeats an id",
                transactionId: transactionId
            )
        }
        signed.append(location)
        if recordedSequence < signedFrom {
            entriesBeforeSignedFrom += 1
        }
        return true
    }

    // MARK: Signed file

    private mutating func checkSignedFile(_ manifest: StoreManifest?, listing: StoreFiles.Listing) throws {
        guard let expected = manifest?.signed else { return }
        let name = StoreFiles.signedName(expected.generation)
        guard listing.signed.contains(expected.generation) else {
            report(
                .damage,
                file: name,
                "the signed-transaction file is missing: the manifest names it, with \(expected.records) records"
            )
            return
        }
        try SystemFile.refuseLink(at: files.signed(expected.generation))
        var status = stat()
        guard stat(files.signed(expected.generation), &status) == 0 else {
            throw SystemFile.failure("stat", files.signed(expected.generation))
        }
        let size = Int(status.st_size)
        if size < expected.bytes {
            report(
                .damage,
                file: name,
                offset: size,
                "the signed-transaction file is \(size) bytes, shorter than the \(expected.bytes) the manifest commits"
            )
        } else if size > expected.bytes {
            report(
                .note,
                file: name,
                offset: expected.bytes,
                "\(size - expected.bytes) bytes after the committed end, appended by an interrupted compaction; an "
                    + "open cuts them"
            )
            recovery.cutSignedBytes = size - expected.bytes
        }
    }

    // MARK: Repairing

    /// Cuts a torn tail, the uncommitted end of the signed file and removes leftovers; opens the journal to append.
    private mutating func repair(
        torn: (generation: UInt64, offset: Int, length: Int)?,
        signed: StoreManifest.Signed?,
        leftovers: [String],
        generation: UInt64
    ) throws -> SystemFile {
        if let torn {
            let file = try SystemFile.open(files.journal(torn.generation), flags: O_WRONLY)
            try file.truncate(to: torn.offset)
            if fsync {
                try file.sync()
            }
        }
        if recovery.cutSignedBytes > 0, let expected = signed {
            let file = try SystemFile.open(files.signed(expected.generation), flags: O_WRONLY)
            try file.truncate(to: expected.bytes)
            if fsync {
                try file.sync()
            }
        }
        for name in leftovers {
            try SystemFile.remove(files.path(name))
        }
        let path = files.journal(generation)
        let journal: SystemFile
        if SystemFile.exists(path) {
            journal = try SystemFile.open(path, flags: O_WRONLY | O_APPEND)
        } else {
            journal = try Self.createJournal(generation, files: files, sync: fsync)
        }
        if fsync, torn != nil || !leftovers.isEmpty {
            try SystemFile.syncDirectory(files.directory)
        }
        return journal
    }

    // MARK: Findings

    /// In a strict mode, throws the first damage found.
    private func stopAtDamage() throws {
        if mode != .scan, let damage = findings.first(where: { $0.severity == .damage }) {
            throw IAPError(.storageCorrupted, "\(damage) in \(files.directory)")
        }
    }

    private mutating func report(
        _ severity: FileEntitlementStore.Finding.Severity,
        file: String,
        offset: Int? = nil,
        line: Int? = nil,
        _ message: String,
        transactionId: String? = nil
    ) {
        findings.append(
            .init(
                severity: severity,
                file: file,
                line: line,
                offset: offset,
                message: message,
                transactionId: transactionId
            )
        )
    }

    /// Reports damage at a line: strict modes stop here; a scan goes on without the record. Returns `false`.
    @discardableResult
    private mutating func damaged(
        _ file: String,
        _ line: RecordFileReader.Line,
        _ reason: String,
        transactionId: String? = nil,
        guessing: Bool = false
    ) throws -> Bool {
        var message = reason
        if case .failure(let problem) = line.result, problem.isUnsupportedVersion {
            message += "; open it with the swift-iap version that wrote it"
        }
        var transaction = transactionId
        if guessing, transaction == nil, let guessed = guessTransactionId(file: file, line: line) {
            transaction = guessed
            message += " (it looks like a record of transaction \(guessed))"
        }
        if mode == .scan {
            message += "; a repair drops it"
        }
        return try damaged(file, offset: line.offset, line: line.number, message, transactionId: transaction)
    }

    @discardableResult
    private mutating func damaged(
        _ file: String,
        offset: Int,
        line: Int,
        _ message: String,
        transactionId: String? = nil
    ) throws -> Bool {
        report(.damage, file: file, offset: offset, line: line, message, transactionId: transactionId)
        if mode != .scan {
            throw IAPError(
                .storageCorrupted,
                "\(file): \(message) at byte offset \(offset) (line \(line)) in \(files.directory)"
            )
        }
        return false
    }

    /// The first `"transactionId":"…"` of a damaged line, for the message.
    private func guessTransactionId(file: String, line: RecordFileReader.Line) -> String? {
        let path = files.path(file)
        guard let bytes = try? SignedTransactionReader.line(of: path, at: line.offset, length: line.length) else {
            return nil
        }
        let key = Array("\"transactionId\":\"".utf8)
        guard let start = bytes.firstRange(of: key)?.upperBound,
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")), end - start <= 64
        else { return nil }
        let id = String(decoding: bytes[start..<end], as: UTF8.self)
        return id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") } ? id : nil
    }
}
