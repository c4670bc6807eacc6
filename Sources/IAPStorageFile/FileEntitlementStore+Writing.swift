#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
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
    /// What a record does to where an entry's signed transaction is.
    enum SignedChange {
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
    func append(
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
    func answer<Value>(_ value: Value) async throws -> Value {
        try await waitUntilDurable(lastLSN)
        return value
    }

    /// Waits until the record `lsn` is durable.
    ///
    /// - Throws: ``IAPError`` with code `storageFailure` if its flush failed (it was then undone).
    func waitUntilDurable(_ lsn: UInt64) async throws {
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

    func startFlushing() {
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
            // The callers just resumed mostly write again at once (a delivery's delivered mark follows its insert):
            // let them, so that their records join the next batch instead of waiting for a flush of their own.
            await Task.yield()
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
}
