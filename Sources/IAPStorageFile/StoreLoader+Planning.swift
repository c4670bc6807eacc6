import IAPCore

extension StoreLoader {
    struct Plan {
        var snapshot: UInt64?
        var snapshotLSN: UInt64 = 0
        var journals: [UInt64] = []
        var signed: StoreManifest.Signed?
        var leftovers: [String] = []
    }

    /// Which files to read, and which are leftovers; reports the files the manifest lists that are missing.
    mutating func plan(_ listing: StoreFiles.Listing, manifest: StoreManifest?) throws -> Plan {
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
}
