import IAPCore

extension StoreLoader {
    /// Where a snapshot's read has got to.
    private struct SnapshotProgress {
        let generation: UInt64
        let file: String
        /// The header record, once read.
        var header: JournalOperation.SnapshotHeader?
        /// The records read so far, damaged ones included.
        var records = 0
        /// Whether the end record was read.
        var ended = false
    }

    /// Loads a snapshot: its header, then its entries and other records, then its end record; then checks what the
    /// file says against what it held and what the manifest says.
    mutating func loadSnapshot(_ generation: UInt64, manifest: StoreManifest?) throws {
        var snapshot = SnapshotProgress(generation: generation, file: StoreFiles.snapshotName(generation))
        let tail = try RecordFileReader.read(path: files.snapshot(generation)) { lines in
            for index in lines.indices {
                let result = lines[index].takeResult()
                let line = lines[index]
                switch consume result {
                case .success(let decoded):
                    try readSnapshotRecord(decoded, line: line, into: &snapshot, manifest: manifest)
                case .failure(let problem):
                    try damaged(snapshot.file, line, problem.reason, guessing: true)
                    snapshot.records += 1
                }
            }
        }
        try finishSnapshot(snapshot, tail: tail, manifest: manifest)
    }

    /// Reads one record of a snapshot: the header first, then any other record until the end record.
    private mutating func readSnapshotRecord(
        _ record: consuming JournalRecord.Decoded,
        line: RecordFileReader.Line,
        into snapshot: inout SnapshotProgress,
        manifest: StoreManifest?
    ) throws {
        let name = snapshot.file
        if snapshot.ended {
            try damaged(name, line, "a record after the end record")
            return
        }
        if record.seq != UInt64(snapshot.records + 1) {
            try damaged(name, line, "record number \(record.seq) where \(snapshot.records + 1) belongs")
        }
        if snapshot.header == nil {
            try readSnapshotHeader(record.operation, line: line, into: &snapshot)
        } else {
            try applySnapshotRecord(record.operation, line: line, into: &snapshot, manifest: manifest)
        }
        snapshot.records += 1
    }

    /// Reads a snapshot's first record, its header, and makes room for the entries it announces.
    private mutating func readSnapshotHeader(
        _ operation: JournalOperation,
        line: RecordFileReader.Line,
        into snapshot: inout SnapshotProgress
    ) throws {
        guard case .snapshot(let found) = operation, found.generation == snapshot.generation else {
            try damaged(snapshot.file, line, "the first record is not the header of snapshot \(snapshot.generation)")
            return
        }
        snapshot.header = found
        lsn = found.lsn
        sawManifestEra = sawManifestEra || found.signedGeneration != nil
        // Room for the snapshot's entries and some growth, allocated once.
        if let count = Int(exactly: found.lastSequence), count > 0 {
            state.reserveCapacity(count + count / 16)
            signed.reserveCapacity(count + count / 16)
        }
    }

    /// Applies a snapshot record after its header: an entry, a binding, a renewal info, a notification, the audit's
    /// head, or the end record.
    private mutating func applySnapshotRecord(
        _ operation: consuming JournalOperation,
        line: RecordFileReader.Line,
        into snapshot: inout SnapshotProgress,
        manifest: StoreManifest?
    ) throws {
        let name = snapshot.file
        switch operation {
        case .entry(let entry, let field):
            let location = try snapshotLocation(of: entry, field, line: line, file: name, manifest: manifest)
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
            if count != snapshot.records {
                try damaged(name, line, "the end record counts \(count) records, the file has \(snapshot.records)")
            }
            snapshot.ended = true
        case .insert, .replace, .snapshot, .journal, .header, .signed:
            try damaged(name, line, "a \(operation.kind) record does not belong in a snapshot")
        }
    }

    /// Where a snapshot entry's signed transaction is: the place in the signed-transaction file its reference names,
    /// or none when the reference is damaged.
    private mutating func snapshotLocation(
        of entry: LedgerEntry,
        _ field: JournalOperation.SignedField,
        line: RecordFileReader.Line,
        file name: String,
        manifest: StoreManifest?
    ) throws -> SignedLocation {
        guard case .reference(let reference) = field else {
            if field != .unchanged {
                try damaged(name, line, "an entry of a snapshot carries its signed transaction itself")
            }
            return .none
        }
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
            return .none
        } else if manifest?.signed == nil && manifest != nil {
            try damaged(
                name,
                line,
                "entry \(entry.transactionId) refers to a signed-transaction file the manifest does "
                    + "not name",
                transactionId: entry.transactionId
            )
            return .none
        }
        return .signedFile(reference)
    }

    /// After a snapshot's last record: checks that it is complete and agrees with its header and the manifest, and
    /// records what was read.
    private mutating func finishSnapshot(
        _ snapshot: SnapshotProgress,
        tail: RecordFileReader.Tail,
        manifest: StoreManifest?
    ) throws {
        let name = snapshot.file
        let records = snapshot.records
        if tail.offset < tail.fileSize {
            try damaged(
                name,
                offset: tail.offset,
                line: tail.lineNumber,
                "the snapshot ends in the middle of a record (a snapshot is renamed into place only once complete)"
            )
        }
        if !snapshot.ended || snapshot.header == nil {
            report(.damage, file: name, "the snapshot is incomplete (no end record after \(records) records)")
        }
        if let header = snapshot.header, header.lastSequence != state.lastSequence, mode != .scan {
            report(
                .damage,
                file: name,
                "the header says the last sequence is \(header.lastSequence), the entries end at \(state.lastSequence)"
            )
        }
        if let expected = manifest?.snapshot, let header = snapshot.header, header.lsn != expected.lsn {
            report(
                .damage,
                file: name,
                "the snapshot holds records up to \(header.lsn), the manifest says \(expected.lsn)"
            )
            lsn = max(lsn, expected.lsn)
        } else if snapshot.header == nil, let expected = manifest?.snapshot {
            lsn = expected.lsn
        }
        if let header = snapshot.header, let named = header.signedGeneration, manifest != nil,
            named != manifest?.signed?.generation
        {
            report(
                .damage,
                file: name,
                "the snapshot refers to signed-transaction file \(named), the manifest names "
                    + (manifest?.signed.map { "\($0.generation)" } ?? "none")
            )
        }
        recovery.snapshotGeneration = snapshot.generation
        recovery.snapshotRecords = records
    }
}
