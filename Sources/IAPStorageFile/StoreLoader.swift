#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import IAPCore

/// Opens a store directory: loads the newest snapshot, replays the journals after it, repairs a torn last
/// record, and removes what an interrupted compaction left behind.
struct StoreLoader {
    /// A loaded store, ready to append to.
    struct Loaded {
        var state: LedgerState
        /// The log sequence number of the last record.
        var lsn: UInt64
        /// The generation of the journal to append to.
        var generation: UInt64
        /// The journal to append to, opened with `O_APPEND`.
        var journal: SystemFile
        /// Its size.
        var journalBytes: Int
        var recovery: FileEntitlementStore.RecoveryReport
    }

    let files: StoreFiles
    let fsync: Bool

    private var state = LedgerState()
    private var lsn: UInt64 = 0
    private var recovery = FileEntitlementStore.RecoveryReport(
        snapshotGeneration: nil,
        snapshotRecords: 0,
        journalRecords: 0,
        droppedTail: nil,
        removedFiles: []
    )

    init(files: StoreFiles, fsync: Bool) {
        self.files = files
        self.fsync = fsync
    }

    /// Loads the directory.
    ///
    /// - Throws: ``IAPError`` with code `storageCorrupted` naming the file and byte offset of a damaged record
    ///   anywhere but at the very end of the last journal, or `storageFailure` if a file cannot be read.
    mutating func load() throws -> Loaded {
        let listing = try files.list()
        let snapshotGeneration = listing.snapshots.last
        if let snapshotGeneration {
            try loadSnapshot(snapshotGeneration)
        }
        let base = snapshotGeneration ?? 0
        let journals = listing.journals.filter { $0 >= base }
        // The last journal that holds anything is the one a crash may have torn: a compaction that died right
        // after creating its new journal leaves that one empty behind the torn one.
        let lastWritten = journals.lastIndex { generation in
            var status = stat()
            return stat(files.journal(generation), &status) != 0 || status.st_size > 0
        }
        for (index, generation) in journals.enumerated() {
            try replay(generation, isLast: index >= (lastWritten ?? journals.count - 1))
        }
        // Leftovers of an interrupted compaction: journals and snapshots the newest snapshot covers, and
        // snapshots that were never renamed into place.
        var removed: [String] = listing.temporaries
        removed += listing.journals.filter { $0 < base }.map(StoreFiles.journalName)
        removed += listing.snapshots.filter { $0 < base }.map(StoreFiles.snapshotName)
        for name in removed {
            try SystemFile.remove(files.directory + "/" + name)
        }
        recovery.removedFiles = removed
        let generation = journals.last ?? max(base, 1)
        let path = files.journal(generation)
        let journal = try SystemFile.open(path, flags: O_WRONLY | O_CREAT | O_APPEND)
        if journals.isEmpty || !removed.isEmpty || recovery.droppedTail != nil {
            if fsync {
                try journal.sync()
                try SystemFile.syncDirectory(files.directory)
            }
        }
        return Loaded(
            state: state,
            lsn: lsn,
            generation: generation,
            journal: journal,
            journalBytes: try journal.size(),
            recovery: recovery
        )
    }

    // MARK: Snapshot

    private mutating func loadSnapshot(_ generation: UInt64) throws {
        let path = files.snapshot(generation)
        let name = StoreFiles.snapshotName(generation)
        var header: JournalOperation.SnapshotHeader?
        var records = 0
        var ended = false
        let tail = try RecordFileReader.read(path: path) { lines in
            for line in lines {
                let record: JournalRecord.Decoded
                switch line.result {
                case .success(let decoded):
                    record = decoded
                case .failure(let problem):
                    throw corrupted(name, line, problem.reason)
                }
                guard !ended else {
                    throw corrupted(name, line, "a record after the end record")
                }
                guard record.seq == UInt64(records + 1) else {
                    throw corrupted(name, line, "record number \(record.seq) where \(records + 1) belongs")
                }
                if header == nil {
                    guard case .snapshot(let found) = record.operation, found.generation == generation else {
                        throw corrupted(name, line, "the first record is not the header of snapshot \(generation)")
                    }
                    header = found
                    lsn = found.lsn
                    // Room for the snapshot's entries and some growth, allocated once.
                    if let count = Int(exactly: found.lastSequence), count > 0 {
                        state.reserveCapacity(count + count / 16)
                    }
                    records += 1
                    continue
                }
                switch record.operation {
                case .entry(let entry):
                    guard state.insert(entry) != nil else {
                        throw corrupted(
                            name,
                            line,
                            "entry \(entry.transactionId) with sequence \(entry.sequence) does not follow sequence "
                                + "\(state.lastSequence) or repeats an id"
                        )
                    }
                case .bind(let token, let userId):
                    guard state.bind(token: token, to: userId) != nil else {
                        throw corrupted(name, line, "appAccountToken \(token) bound twice")
                    }
                case .renewal(let info):
                    guard let original = info.originalTransactionId, !original.isEmpty else {
                        throw corrupted(name, line, "renewal info without an originalTransactionId")
                    }
                    _ = state.storeRenewalInfo(info, for: original)
                case .notification(let uuid, let at):
                    guard state.markNotification(uuid, at: at) != nil else {
                        throw corrupted(name, line, "notification \(uuid) recorded twice")
                    }
                case .end(let count):
                    guard count == records else {
                        throw corrupted(name, line, "the end record counts \(count) records, the file has \(records)")
                    }
                    ended = true
                case .insert, .replace, .snapshot:
                    throw corrupted(name, line, "a \(record.operation.kind) record does not belong in a snapshot")
                }
                records += 1
            }
        }
        guard tail.offset == tail.fileSize else {
            throw IAPError(
                .storageCorrupted,
                "\(name): ends in the middle of a record at byte offset \(tail.offset) (line \(tail.lineNumber)) "
                    + "in \(files.directory)"
            )
        }
        guard ended, let header else {
            throw IAPError(
                .storageCorrupted,
                "\(name): the snapshot is incomplete (no end record after \(records) records) in \(files.directory)"
            )
        }
        guard header.lastSequence == state.lastSequence else {
            throw IAPError(
                .storageCorrupted,
                "\(name): the header says the last sequence is \(header.lastSequence), the entries end at "
                    + "\(state.lastSequence) in \(files.directory)"
            )
        }
        recovery.snapshotGeneration = generation
        recovery.snapshotRecords = records
    }

    // MARK: Journal

    private mutating func replay(_ generation: UInt64, isLast: Bool) throws {
        let path = files.journal(generation)
        let name = StoreFiles.journalName(generation)
        // A damaged line is only forgiven if nothing follows it; hold it until the next line shows up.
        var damaged: (line: RecordFileReader.Line, reason: String)?
        var previousSeq: UInt64?
        let tail = try RecordFileReader.read(path: path) { lines in
            for line in lines {
                if let held = damaged {
                    throw corrupted(name, held.line, held.reason + ", and records follow it")
                }
                let record: JournalRecord.Decoded
                switch line.result {
                case .success(let decoded):
                    record = decoded
                case .failure(let problem):
                    guard isLast, problem.isTornCandidate else {
                        throw corrupted(name, line, problem.reason)
                    }
                    damaged = (line, problem.reason)
                    continue
                }
                if let previousSeq, record.seq != previousSeq + 1 {
                    throw corrupted(name, line, "record \(record.seq) follows record \(previousSeq)")
                }
                previousSeq = record.seq
                if record.seq <= lsn {
                    // Written to the new journal while the snapshot that already holds it was being taken.
                    continue
                }
                guard record.seq == lsn + 1 else {
                    throw corrupted(name, line, "record \(record.seq) follows record \(lsn): records are missing")
                }
                try apply(record.operation, file: name, line: line)
                lsn = record.seq
                recovery.journalRecords += 1
            }
        }
        var tornAt: (offset: Int, reason: String)?
        if let held = damaged {
            guard tail.offset == tail.fileSize else {
                throw corrupted(name, held.line, held.reason + ", and more bytes follow it")
            }
            tornAt = (held.line.offset, held.reason)
        } else if tail.offset < tail.fileSize {
            guard isLast else {
                throw IAPError(
                    .storageCorrupted,
                    "\(name): ends in the middle of a record at byte offset \(tail.offset) (line \(tail.lineNumber)) "
                        + "though a newer journal follows it, in \(files.directory)"
                )
            }
            tornAt = (tail.offset, "no newline at the end")
        }
        if let tornAt {
            let file = try SystemFile.open(path, flags: O_WRONLY)
            try file.truncate(to: tornAt.offset)
            if fsync {
                try file.sync()
            }
            recovery.droppedTail = FileEntitlementStore.RecoveryReport.DroppedTail(
                file: name,
                offset: tornAt.offset,
                length: tail.fileSize - tornAt.offset,
                reason: tornAt.reason
            )
        }
    }

    private mutating func apply(_ operation: JournalOperation, file: String, line: RecordFileReader.Line) throws {
        switch operation {
        case .insert(let entry):
            guard entry.revision == 1, state.insert(entry) != nil else {
                throw corrupted(
                    file,
                    line,
                    "insert of \(entry.transactionId) (sequence \(entry.sequence), revision \(entry.revision)) does "
                        + "not fit a ledger whose last sequence is \(state.lastSequence)"
                )
            }
        case .replace(let entry):
            guard let current = state.entry(transactionId: entry.transactionId),
                entry.revision == current.revision + 1,
                state.replace(with: entry) != nil
            else {
                throw corrupted(file, line, "replace of \(entry.transactionId) does not follow the stored revision")
            }
        case .bind(let token, let userId):
            guard state.bind(token: token, to: userId) != nil else {
                throw corrupted(file, line, "appAccountToken \(token) bound twice")
            }
        case .renewal(let info):
            guard let original = info.originalTransactionId, !original.isEmpty else {
                throw corrupted(file, line, "renewal info without an originalTransactionId")
            }
            _ = state.storeRenewalInfo(info, for: original)
        case .notification(let uuid, let at):
            guard state.markNotification(uuid, at: at) != nil else {
                throw corrupted(file, line, "notification \(uuid) recorded twice")
            }
        case .entry, .snapshot, .end:
            throw corrupted(file, line, "a \(operation.kind) record does not belong in a journal")
        }
    }

    private func corrupted(_ file: String, _ line: RecordFileReader.Line, _ reason: String) -> IAPError {
        if case .failure(let problem) = line.result, problem.isUnsupportedVersion {
            return IAPError(
                .storageCorrupted,
                "\(file): \(reason) at byte offset \(line.offset) (line \(line.number)) in \(files.directory); "
                    + "open it with the swift-iap version that wrote it"
            )
        }
        return IAPError(
            .storageCorrupted,
            "\(file): \(reason) at byte offset \(line.offset) (line \(line.number)) in \(files.directory)"
        )
    }
}
