import IAPCore

extension FileEntitlementStore {
    /// How the manifest changes.
    enum ManifestChange {
        /// The current journal's watermark moves to its durable size.
        case watermark
        /// A new journal is listed after the current one (before any record goes to it).
        case listJournal(generation: UInt64, bytes: Int)
        /// A compaction published its snapshot: only the current journal remains.
        case commit(snapshot: StoreManifest.Snapshot, signed: StoreManifest.Signed?)
    }

    /// Writes the manifest with one change, after any other manifest write of this store finished.
    func writeManifest(_ change: ManifestChange) async throws {
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
    func writeWatermark() async throws {
        try await writeManifest(.watermark)
    }
}
