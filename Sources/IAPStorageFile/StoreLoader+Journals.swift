import IAPCore

extension StoreLoader {
    /// What replaying one journal found.
    struct Replayed {
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

    mutating func replay(_ generation: UInt64, expected: StoreManifest.Journal?) throws -> Replayed {
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
    mutating func checkTail(_ replayed: [Replayed]) throws -> (generation: UInt64, offset: Int, length: Int)? {
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
        let operation = try checkingHeaderReference(of: operation, file: file, line: line)
        switch operation {
        case .insert(let entry, let field):
            return try replayInsert(entry, field, generation: generation, file: file, line: line)
        case .replace(let entry, let field):
            return try replayReplace(entry, field, generation: generation, file: file, line: line)
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

    /// Where a journal record puts its entry's signed transaction: in this line of the journal, nowhere (removed), or
    /// `nil` to leave it where it is.
    private static func location(
        of field: JournalOperation.SignedField,
        generation: UInt64,
        line: RecordFileReader.Line
    ) -> SignedLocation? {
        switch field {
        case .unchanged: nil
        case .removed: SignedLocation.none
        case .jws, .split: .journal(generation, offset: line.offset, length: line.length)
        case .reference: nil
        }
    }

    /// An insert or replace whose signed transaction refers to a header record the journal does not hold before it:
    /// damage, which a strict mode stops at and a scan reports, keeping the entry without that signed transaction.
    /// Any other record as it is.
    private mutating func checkingHeaderReference(
        of operation: JournalOperation,
        file: String,
        line: RecordFileReader.Line
    ) throws -> JournalOperation {
        switch operation {
        case .insert(let entry, .split(let header, _)) where !headerOffsets.contains(header),
            .replace(let entry, .split(let header, _)) where !headerOffsets.contains(header):
            let reason =
                "the signed transaction of \(entry.transactionId) refers to a header record at byte \(header) that "
                + "the journal does not hold before it"
            guard mode == .scan else {
                // A strict mode throws here.
                try damaged(file, line, reason, transactionId: entry.transactionId)
                return operation
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
                return .insert(entry, signed: .unchanged)
            }
            return .replace(entry, signed: .unchanged)
        default:
            return operation
        }
    }

    /// Replays an `insert` record; `false` when a scan dropped it.
    private mutating func replayInsert(
        _ entry: LedgerEntry,
        _ field: JournalOperation.SignedField,
        generation: UInt64,
        file: String,
        line: RecordFileReader.Line
    ) throws -> Bool {
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
        let location = Self.location(of: field, generation: generation, line: line) ?? .none
        return try insert(entry, signed: location, file: file, line: line)
    }

    /// Replays a `replace` record: the next revision of a recorded entry (for a scan, any later one); `false` when a
    /// scan dropped it.
    private mutating func replayReplace(
        _ entry: LedgerEntry,
        _ field: JournalOperation.SignedField,
        generation: UInt64,
        file: String,
        line: RecordFileReader.Line
    ) throws -> Bool {
        var entry = entry
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
        if let moved = Self.location(of: field, generation: generation, line: line),
            let position = Int(exactly: current.sequence - 1)
        {
            signed[position] = moved
        }
        return true
    }

    /// Appends an entry; a scan renumbers it when a record before it was dropped.
    @discardableResult
    mutating func insert(
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
}
