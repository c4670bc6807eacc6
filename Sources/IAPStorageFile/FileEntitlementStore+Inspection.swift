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
import IAPCore

extension FileEntitlementStore {
    /// What ``inspect(directory:)`` found in a store directory, without changing anything.
    public struct Inspection: Sendable {
        /// Everything found: damage (what an open refuses, or what is wrong in a file an open does not read) and
        /// notes (what an open repairs by itself), in file order.
        public var findings: [Finding]
        /// What an open would repair.
        public var recovery: RecoveryReport
        /// A read-only store over every record that verifies: the ledger an open gives when nothing is damaged, and
        /// what a repair would keep when something is.
        public var store: FileEntitlementStore
        /// How many records of the signed-transaction file were read and checked.
        public var signedRecordsChecked: Int

        /// Whether an open would succeed: nothing is damaged.
        public var opens: Bool {
            !findings.contains { $0.severity == .damage }
        }
    }

    /// Reads a store directory without changing anything, and reports what it holds, what is damaged, and what an
    /// open would do: the work of `iap ledger check`.
    ///
    /// It takes no lock, so it may run while another process holds the store (a record being written then shows as
    /// a torn last line). Unlike an open, it goes on past damage, keeping every record that verifies, and it reads
    /// the whole signed-transaction file, checking every record and that each snapshot entry's reference leads to
    /// that transaction's record.
    ///
    /// - Parameter directory: The store's directory.
    /// - Returns: The findings and a read-only store over what verifies.
    /// - Throws: ``IAPError`` with code `notFound` when the directory holds no ledger, `unsafeFile` for a
    ///   symbolic link where a store file belongs, `storageFailure` when a file cannot be read.
    public static func inspect(directory: URL) throws -> Inspection {
        let files = StoreFiles(directory: path(of: directory))
        guard SystemFile.exists(files.directory) else {
            throw IAPError(.notFound, "there is no ledger at \(files.directory)")
        }
        var loader = StoreLoader(files: files, fsync: false, mode: .scan)
        var loaded = try loader.load()
        let checked = try checkSignedFile(files: files, loaded: &loaded)
        let store = FileEntitlementStore(
            directory: directory,
            options: .init(access: .readOnly),
            files: files,
            lock: nil,
            loaded: loaded
        )
        return Inspection(
            findings: loaded.findings,
            recovery: loaded.recovery,
            store: store,
            signedRecordsChecked: checked
        )
    }

    /// Reads the committed part of the signed-transaction file: every record must verify, every `signed` record
    /// must name a `header` record before it, and every snapshot reference must lead to its transaction's record.
    /// References that do not are reported and dropped from `loaded`.
    ///
    /// - Returns: How many records were read.
    private static func checkSignedFile(files: StoreFiles, loaded: inout StoreLoader.Loaded) throws -> Int {
        guard let signed = loaded.manifest.signed, SystemFile.exists(files.signed(signed.generation)) else {
            return 0
        }
        var check = SignedFileCheck(
            name: StoreFiles.signedName(signed.generation),
            // References by offset, walked together with the file's lines, which come in offset order.
            references: loaded.references.sorted { $0.reference.offset < $1.reference.offset }
        )
        _ = try RecordFileReader.read(path: files.signed(signed.generation), upTo: signed.bytes) { lines in
            for line in lines {
                let record = check.read(line)
                check.passReferences(before: line)
                check.matchReferences(at: line, record: record)
            }
        }
        check.finish(expectedRecords: signed.records)
        loaded.findings += check.findings
        for transactionId in check.bad {
            if let entry = loaded.state.entry(transactionId: transactionId),
                let position = Int(exactly: entry.sequence - 1),
                loaded.signed.indices.contains(position)
            {
                loaded.signed[position] = .none
            }
        }
        return check.records
    }
}

/// The walk of ``FileEntitlementStore``'s signed-transaction file: its records in order, and the snapshot's
/// references to them, met by offset.
private struct SignedFileCheck {
    let name: String
    let references: [(transactionId: String, reference: JournalOperation.SignedReference)]
    var next = 0
    var headers: Set<UInt64> = []
    var records = 0
    var expectedSeq: UInt64 = 1
    /// The transactions whose signed record is damaged or not where the snapshot says.
    var bad: Set<String> = []
    var findings: [FileEntitlementStore.Finding] = []

    init(name: String, references: [(transactionId: String, reference: JournalOperation.SignedReference)]) {
        self.name = name
        self.references = references
    }

    mutating func damage(_ line: RecordFileReader.Line?, _ message: String, transactionId: String? = nil) {
        findings.append(
            .init(
                severity: .damage,
                file: name,
                line: line?.number,
                offset: line?.offset,
                message: message,
                transactionId: transactionId
            )
        )
    }

    /// Reads one record: in sequence, a header or a signed record after its header.
    mutating func read(_ line: RecordFileReader.Line) -> JournalRecord.Decoded? {
        records += 1
        var record: JournalRecord.Decoded?
        switch line.result {
        case .success(let decoded):
            record = decoded
            if decoded.seq != expectedSeq {
                damage(line, "record \(decoded.seq) where \(expectedSeq) belongs")
            }
        case .failure(let problem):
            damage(line, problem.reason)
        }
        expectedSeq += 1
        switch record?.operation {
        case .header?:
            headers.insert(UInt64(line.offset))
        case .signed(let signedRecord)?:
            if !headers.contains(signedRecord.header) {
                damage(
                    line,
                    "the signed transaction of \(signedRecord.transactionId) refers to a header at byte "
                        + "\(signedRecord.header) that is not a header record before it",
                    transactionId: signedRecord.transactionId
                )
                bad.insert(signedRecord.transactionId)
            }
        case nil:
            break
        case let other?:
            damage(line, "a \(other.kind) record does not belong in a signed-transaction file")
        }
        return record
    }

    /// References to offsets before this line, where no record starts.
    mutating func passReferences(before line: RecordFileReader.Line) {
        while next < references.count, references[next].reference.offset < UInt64(line.offset) {
            let missed = references[next]
            damage(
                nil,
                "the signed transaction of \(missed.transactionId) is referred to at byte "
                    + "\(missed.reference.offset), where no record starts",
                transactionId: missed.transactionId
            )
            bad.insert(missed.transactionId)
            next += 1
        }
    }

    /// References to this line: each must lead to its transaction's signed record, whole.
    mutating func matchReferences(at line: RecordFileReader.Line, record: JournalRecord.Decoded?) {
        while next < references.count, references[next].reference.offset == UInt64(line.offset) {
            let reference = references[next]
            let matches: Bool
            if case .signed(let signedRecord)? = record?.operation {
                matches =
                    signedRecord.transactionId == reference.transactionId
                    && Int(reference.reference.length) == line.length
            } else {
                matches = false
            }
            if !matches {
                damage(
                    line,
                    "the snapshot's reference for the signed transaction of \(reference.transactionId) does "
                        + "not lead to it",
                    transactionId: reference.transactionId
                )
                bad.insert(reference.transactionId)
            }
            next += 1
        }
    }

    /// References past the last record, and the count the manifest records.
    mutating func finish(expectedRecords: UInt64) {
        for missed in references[next...] {
            damage(
                nil,
                "the signed transaction of \(missed.transactionId) is referred to at byte \(missed.reference.offset), "
                    + "past the last record",
                transactionId: missed.transactionId
            )
            bad.insert(missed.transactionId)
        }
        if UInt64(records) != expectedRecords {
            damage(nil, "the committed part holds \(records) records, the manifest records \(expectedRecords)")
        }
    }
}

extension FileEntitlementStore {
    /// What ``repair(directory:options:)`` did.
    public struct RepairReport: Sendable {
        /// What the repair found: the damage it dropped (each record that did not verify, each file that was
        /// missing or cut short), and the notes an open handles by itself.
        public var findings: [Finding]
        /// Whether anything was damaged and rewritten. `false` when nothing was: then the store was only opened,
        /// which cuts a torn last record and removes leftovers (see ``findings``), and closed.
        public var repaired: Bool
        /// The directory, inside the store's, where the damaged files were moved (copied, then removed from the
        /// store): `damaged-<milliseconds>`. Nothing in it is ever read or deleted by the store.
        public var damagedDirectory: String?
        /// The files moved there.
        public var movedFiles: [String]
        /// The entries the store holds after the repair.
        public var entries: Int
        /// How many of them kept their signed transaction.
        public var signedTransactions: Int
        /// What was dropped: the damage among ``findings``.
        public var dropped: [Finding] {
            findings.filter { $0.severity == .damage }
        }
    }

    /// Repairs a damaged store: keeps every record that verifies, moves the damaged files aside, and writes the
    /// ledger again as a new snapshot with an empty journal — the work of `iap ledger repair`.
    ///
    /// It takes the store's lock (and refuses while another process holds the store). When nothing is damaged it
    /// only opens the store, which repairs what a crash leaves. Otherwise every file that holds damage is copied
    /// into `DIR/damaged-<milliseconds>/` (created 0700, never deleted by the store), the records that verify are
    /// written as snapshot `g+1` with their signed transactions in a new signed-transaction file and an empty
    /// journal, the manifest is switched to them in one atomic step, and the older files are removed. A crash at
    /// any point leaves the damaged store, or the repaired one.
    ///
    /// What is lost is what did not verify: the report names each dropped record, with its transaction when known.
    /// A record that depended on a dropped one (a replace of a transaction whose insert was damaged) is dropped too;
    /// entries after a dropped insert get new sequences.
    ///
    /// - Parameters:
    ///   - directory: The store's directory.
    ///   - options: `fsync` and the clock that names the damaged directory; other options are not used.
    /// - Returns: What was found, dropped and moved.
    /// - Throws: ``IAPError`` with code `notFound` without a ledger, `storageLocked` while another process holds it,
    ///   `unsafeFile` for a symbolic link where a store file belongs, `storageFailure` when writing fails (the
    ///   damaged store is then left as it was).
    public static func repair(directory: URL, options: Options = .init()) async throws -> RepairReport {
        let inspection = try inspect(directory: directory)
        let files = StoreFiles(directory: path(of: directory))
        guard !inspection.opens else {
            return try await openUndamaged(directory: directory, options: options, findings: inspection.findings)
        }
        let lock = try DirectoryLock(directory: files.directory, clock: options.clock)
        defer { lock.release() }
        // Read again under the lock: nobody writes now.
        let locked = try inspect(directory: directory)
        let loaded = await locked.store.loadedForRepair()
        let listing = try files.list()
        let generation = listing.newestGeneration + 1
        var findings = locked.findings

        // 1. The damaged files (and the manifest that described them), copied aside.
        let (damagedDirectory, damagedFiles) = try copyDamagedFiles(
            locked.findings,
            listing: listing,
            files: files,
            options: options
        )
        // 2. The ledger that verifies, as a new generation: signed file, snapshot, empty journal.
        let written = try writeVerified(
            loaded,
            generation: generation,
            files: files,
            sync: options.fsync,
            findings: &findings
        )
        // 3. The commit: the manifest names the new files.
        let manifest = StoreManifest(
            snapshot: .init(generation: generation, lsn: loaded.lsn),
            journals: [.init(generation: generation, bytes: written.journalBytes, lsn: loaded.lsn)],
            signed: written.signedFile,
            signedFrom: loaded.signedFrom
        )
        try manifest.write(to: files, sync: options.fsync)
        // 4. Everything older goes: the damaged files are kept aside, the rest is in the new snapshot.
        try removeOtherGenerations(keeping: generation, files: files, sync: options.fsync)
        return RepairReport(
            findings: findings,
            repaired: true,
            damagedDirectory: damagedDirectory,
            movedFiles: damagedFiles,
            entries: loaded.state.entries.count,
            signedTransactions: written.signedTransactions
        )
    }

    /// A repair of a store without damage: opens it (which repairs what a crash leaves) and closes it.
    private static func openUndamaged(
        directory: URL,
        options: Options,
        findings: [Finding]
    ) async throws -> RepairReport {
        let store = try FileEntitlementStore(directory: directory, options: options)
        let statistics = try await store.statistics()
        let signed = await store.signedTransactionCount
        await store.close()
        return RepairReport(
            findings: findings,
            repaired: false,
            damagedDirectory: nil,
            movedFiles: [],
            entries: statistics.transactions,
            signedTransactions: signed
        )
    }

    /// Copies every file that holds damage, and the manifest, into a new `damaged-<milliseconds>` directory of the
    /// store's; returns its path and the names of the files copied.
    private static func copyDamagedFiles(
        _ findings: [Finding],
        listing: StoreFiles.Listing,
        files: StoreFiles,
        options: Options
    ) throws -> (directory: String, files: [String]) {
        let damagedName = "damaged-\(options.clock.now.millisecondsSince1970)"
        let damagedDirectory = files.path(damagedName)
        let damagedFiles = Set(findings.filter { $0.severity == .damage }.compactMap(\.file))
            .union(listing.hasManifest ? [StoreFiles.manifestName] : [])
            .filter { SystemFile.exists(files.path($0)) }
            .sorted()
        try SystemFile.createDirectory(damagedDirectory)
        for name in damagedFiles {
            try copy(files.path(name), to: damagedDirectory + "/" + name, sync: options.fsync)
        }
        if options.fsync {
            try SystemFile.syncDirectory(damagedDirectory)
        }
        return (damagedDirectory, damagedFiles)
    }

    /// What a repair wrote as the new generation.
    private struct RepairWrite {
        var signedFile: StoreManifest.Signed?
        var signedTransactions: Int
        var journalBytes: Int
    }

    /// Writes what verifies as generation `generation`: the signed transactions that read back (a damaged one is
    /// added to `findings` and dropped), the snapshot that refers to them, and an empty journal.
    private static func writeVerified(
        _ loaded: (
            state: LedgerState, signed: [SignedLocation], lsn: UInt64, signedGeneration: UInt64?, signedFrom: Int64
        ),
        generation: UInt64,
        files: StoreFiles,
        sync: Bool,
        findings: inout [Finding]
    ) throws -> RepairWrite {
        var signedCount = 0
        var references = [JournalOperation.SignedReference?](repeating: nil, count: loaded.state.entries.count)
        var appender: SignedFileAppender?
        let reader = SignedTransactionReader(files: files, signedGeneration: loaded.signedGeneration)
        for (position, location) in loaded.signed.enumerated() where location.exists {
            let transactionId = loaded.state.transactionId(at: position)
            let jws: String
            do {
                guard let read = try reader.read(location, transactionId: transactionId) else { continue }
                jws = read
            } catch let error as IAPError where error.code == .storageCorrupted {
                findings.append(
                    .init(
                        severity: .damage,
                        message: error.message + "; a repair drops it",
                        transactionId: transactionId
                    )
                )
                continue
            }
            if appender == nil {
                appender = try SignedFileAppender(path: files.signed(generation), committed: (0, 0), headers: [:])
            }
            guard var open = appender else { continue }
            references[position] = try open.append(jws, transactionId: transactionId)
            appender = open
            signedCount += 1
        }
        var signedFile: StoreManifest.Signed?
        if var open = appender {
            try open.finish(sync: sync)
            signedFile = .init(generation: generation, bytes: open.bytes, records: open.records)
        }
        try SnapshotWriter.write(
            loaded.state,
            references: { references[$0] },
            lsn: loaded.lsn,
            generation: generation,
            signedGeneration: signedFile?.generation,
            to: files.temporarySnapshot(generation),
            fsync: sync
        )
        try SystemFile.rename(files.temporarySnapshot(generation), to: files.snapshot(generation))
        let journal = try StoreLoader.createJournal(generation, files: files, sync: sync)
        let journalBytes = try journal.size()
        journal.close()
        return RepairWrite(signedFile: signedFile, signedTransactions: signedCount, journalBytes: journalBytes)
    }

    /// Removes the journals, snapshots and signed-transaction files of other generations than `generation`, and
    /// temporary files.
    private static func removeOtherGenerations(keeping generation: UInt64, files: StoreFiles, sync: Bool) throws {
        let old = try files.list()
        let leftovers =
            old.journals.filter { $0 != generation }.map(StoreFiles.journalName)
            + old.snapshots.filter { $0 != generation }.map(StoreFiles.snapshotName)
            + old.signed.filter { $0 != generation }.map(StoreFiles.signedName) + old.temporaries
        for name in leftovers {
            try SystemFile.remove(files.path(name))
        }
        if sync {
            try SystemFile.syncDirectory(files.directory)
        }
    }

    /// Copies a file, privately, and flushes the copy.
    private static func copy(_ source: String, to destination: String, sync: Bool) throws {
        let input = try SystemFile.open(source, flags: O_RDONLY)
        defer { input.close() }
        let output = try SystemFile.open(destination, flags: O_WRONLY | O_CREAT | O_EXCL)
        defer { output.close() }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try input.read(into: $0) }
            if count == 0 {
                break
            }
            try output.write(Array(buffer[..<count]))
        }
        if sync {
            try output.sync()
        }
    }
}
