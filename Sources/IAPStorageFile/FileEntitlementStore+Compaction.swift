#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension FileEntitlementStore {
    /// Starts a compaction unless one is running: a task that starts a new journal, then snapshots the
    /// ledger as of the switch.
    func startCompaction() {
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
    func startJournal(_ file: SystemFile, generation next: UInt64, bytes: Int) {
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
}
