#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPStorageFile
import IAPTestSupport
import Testing

@Suite struct FileEntitlementStoreRecoveryTests {
    /// Writes three entries and closes the store; returns the journal's bytes.
    private func writeThree(in directory: TemporaryDirectory) async throws -> [UInt8] {
        let store = try FileEntitlementStore(directory: directory.url)
        for index in 1...3 {
            try await Fixture.insert(Fixture.entry("t-\(index)", user: "user-1", second: Int64(index)), into: store)
        }
        await store.close()
        return Array(try Data(contentsOf: directory.file("journal-1.jsonl")))
    }

    /// The byte offsets where each line of `bytes` starts.
    private func lineOffsets(_ bytes: [UInt8]) -> [Int] {
        var offsets = [0]
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") && index + 1 < bytes.count {
            offsets.append(index + 1)
        }
        return offsets
    }

    private func write(_ bytes: [UInt8], to directory: TemporaryDirectory) throws {
        try Data(bytes).write(to: directory.file("journal-1.jsonl"))
    }

    private func storedIds(_ store: FileEntitlementStore) async throws -> [String] {
        try await store.history(userId: "user-1", cursor: nil, limit: 100).entries.map(\.transactionId).reversed()
    }

    @Test func reopeningRestoresEverything() async throws {
        try await withTemporaryDirectory { directory in
            let token = "1B4E28BA-2FA1-11D2-883F-0016D3CCA427"
            let keys = LedgerDump.Keys(
                transactionIds: (1...40).map { "t-\($0)" } + ["family-1", "missing"],
                users: ["user-0", "user-1", "user-2", "user-moved"],
                tokens: [token, token.lowercased(), "unbound"],
                notifications: ["n-1", "n-2", "n-unknown"]
            )
            let store = try FileEntitlementStore(directory: directory.url)
            for index in 1...40 {
                let original = index % 4 == 0 ? "family-1" : nil
                let stored = try await Fixture.insert(
                    Fixture.entry("t-\(index)", user: "user-\(index % 3)", original: original, second: Int64(index)),
                    into: store
                )
                var next = stored
                switch index % 5 {
                case 0:
                    next.deliveryState = .delivered
                    next.deliveredAt = Fixture.date(Int64(index) + 1)
                case 1:
                    next.deliveryState = .retrying
                    next.deliveryAttempts = 2
                    next.nextAttemptAt = Fixture.date(Int64(index) * 60)
                    next.lastError = "hook failed: \"timeout\""
                case 2:
                    next.deliveryState = .deadLettered
                case 3:
                    next.userId = "user-moved"
                    next.revokedAt = Fixture.date(500)
                default:
                    continue
                }
                #expect(try await store.replace(next, ifRevision: stored.revision))
            }
            #expect(try await store.bind(appAccountToken: token, to: "user-1") == .bound)
            #expect(try await store.storeRenewalInfo(Fixture.renewalInfo("t-1", signedAt: 10)))
            #expect(try await store.storeRenewalInfo(Fixture.renewalInfo("t-1", signedAt: 20)))
            #expect(try await store.markNotificationProcessed("n-1", at: Fixture.date(7)))
            #expect(try await store.markNotificationProcessed("n-2", at: Fixture.date(8)))
            let before = try await LedgerDump.take(of: store, keys: keys)
            await store.close()

            let reopened = try FileEntitlementStore(directory: directory.url)
            let after = try await LedgerDump.take(of: reopened, keys: keys)
            #expect(after == before)
            #expect(reopened.recovery.droppedTail == nil)
            #expect(reopened.recovery.journalRecords == 40 + 32 + 5)
            #expect(try await reopened.renewalInfo(originalTransactionId: "t-1")?.signedDate == Fixture.date(20))
            // Sequences go on where they stopped.
            let next = try await Fixture.insert(Fixture.entry("t-41", user: "user-1"), into: reopened)
            #expect(next.sequence == 41)
            await reopened.close()
        }
    }

    @Test func aCallOnAClosedStoreThrowsAndCloseIsIdempotent() async throws {
        try await withTemporaryDirectory { directory in
            let store = try FileEntitlementStore(directory: directory.url)
            await store.close()
            await store.close()
            await #expect(throws: IAPError(.storageFailure)) {
                try await store.insert(Fixture.entry("t-1", user: "user-1"))
            }
            await #expect(throws: IAPError(.storageFailure)) { try await store.statistics() }
        }
    }

    @Test func aTornLastLineWithoutNewlineIsDroppedAndReported() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try await writeThree(in: directory)
            let garbage = Array("{\"v\":2,\"seq\":4,\"crc\":\"0000".utf8)
            try write(journal + garbage, to: directory)

            let store = try FileEntitlementStore(directory: directory.url)
            #expect(try await storedIds(store) == ["t-1", "t-2", "t-3"])
            let dropped = try #require(store.recovery.droppedTail)
            #expect(dropped.file == "journal-1.jsonl")
            #expect(dropped.offset == journal.count)
            #expect(dropped.length == garbage.count)
            // The journal was cut back, and the next write lands after the last good record.
            #expect(Array(try Data(contentsOf: directory.file("journal-1.jsonl"))) == journal)
            try await Fixture.insert(Fixture.entry("t-4", user: "user-1"), into: store)
            await store.close()

            let reopened = try FileEntitlementStore(directory: directory.url)
            #expect(try await storedIds(reopened) == ["t-1", "t-2", "t-3", "t-4"])
            #expect(reopened.recovery.droppedTail == nil)
            await reopened.close()
        }
    }

    @Test func aRecordTornAfterTheLastAcknowledgedOneIsDropped() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try await writeThree(in: directory)
            let offsets = lineOffsets(journal)
            // A fourth record whose write was cut by a crash: its first 40 bytes reached the file.
            let record = Array(journal[offsets[3]...])
            try write(journal + record.prefix(40), to: directory)

            let store = try FileEntitlementStore(directory: directory.url)
            #expect(try await storedIds(store) == ["t-1", "t-2", "t-3"])
            #expect(store.recovery.droppedTail?.offset == journal.count)
            #expect(store.recovery.droppedTail?.length == 40)
            await store.close()
        }
    }

    @Test func aJournalCutShortBelowWhatWasDurableIsCorruption() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try await writeThree(in: directory)
            let offsets = lineOffsets(journal)
            // The store closed with every record durable; a journal cut inside record 3 lost an acknowledged write.
            try write(Array(journal[..<(offsets[3] + 40)]), to: directory)

            let error = try #require(throws: IAPError.self) {
                try FileEntitlementStore(directory: directory.url)
            }
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("journal-1.jsonl"))
            #expect(error.message.contains("manifest records \(journal.count) durable bytes"))
            #expect(
                Array(try Data(contentsOf: directory.file("journal-1.jsonl"))) == Array(journal[..<(offsets[3] + 40)])
            )
        }
    }

    @Test func aCompleteLastLineWithABadChecksumIsCorruptionNotATornWrite() async throws {
        try await withTemporaryDirectory { directory in
            var journal = try await writeThree(in: directory)
            let offsets = lineOffsets(journal)
            // Flip a byte inside the last record's operation: the line was written whole, so this is damage to an
            // acknowledged record, which must never be cut away quietly.
            journal[journal.count - 20] ^= 0x01
            try write(journal, to: directory)

            let error = try #require(throws: IAPError.self) {
                try FileEntitlementStore(directory: directory.url)
            }
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("journal-1.jsonl"))
            #expect(error.message.contains("bad checksum"))
            #expect(error.message.contains("at byte offset \(offsets[3]) (line 4)"))
        }
    }

    @Test func aCrashAsACompactionStartedLeavesATornJournalBeforeAnEmptyOneThatStillOpens() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try await writeThree(in: directory)
            let garbage = Array("{\"v\":2,\"seq\":4,\"crc\":\"0000".utf8)
            try write(journal + garbage, to: directory)
            try Data().write(to: directory.file("journal-2.jsonl"))

            let store = try FileEntitlementStore(directory: directory.url)
            #expect(try await storedIds(store) == ["t-1", "t-2", "t-3"])
            #expect(store.recovery.droppedTail?.file == "journal-1.jsonl")
            await store.close()
        }
    }

    @Test func aDamagedLineFollowedByGoodOnesIsCorruptionNamingFileAndOffset() async throws {
        try await withTemporaryDirectory { directory in
            var journal = try await writeThree(in: directory)
            let offsets = lineOffsets(journal)
            // Line 1 is the journal's header; record 1 is line 2.
            journal[offsets[1] + 120] ^= 0x01
            try write(journal, to: directory)

            let error = try #require(throws: IAPError.self) {
                try FileEntitlementStore(directory: directory.url)
            }
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("journal-1.jsonl"))
            #expect(error.message.contains("bad checksum"))
            #expect(error.message.contains("at byte offset \(offsets[1]) (line 2)"))
            // Nothing was cut: the damaged file is left for a person to look at.
            #expect(Array(try Data(contentsOf: directory.file("journal-1.jsonl"))) == journal)
        }
    }

    @Test func aWrongChecksumFieldIsCorruption() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try await writeThree(in: directory)
            let start = lineOffsets(journal)[1]
            var damaged = journal
            // Record 1 starts `{"v":2,"seq":1,"crc":"`: its eight hex digits follow 22 bytes in.
            #expect(Array(journal[start..<(start + 22)]) == Array(#"{"v":2,"seq":1,"crc":""#.utf8))
            damaged.replaceSubrange((start + 22)..<(start + 30), with: Array("deadbeef".utf8))
            #expect(damaged != journal)
            try write(damaged, to: directory)

            let error = try #require(throws: IAPError.self) {
                try FileEntitlementStore(directory: directory.url)
            }
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("journal-1.jsonl: bad checksum (stored deadbeef"))
            #expect(error.message.contains("at byte offset \(start) (line 2)"))
        }
    }

    @Test func anUnknownFormatVersionIsAClearError() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try await writeThree(in: directory)
            let offsets = lineOffsets(journal)
            var changed = journal
            // `{"v":2` → `{"v":9` on the last line: a whole record from another version, never a torn write.
            changed[offsets[3] + 5] = UInt8(ascii: "9")
            try write(changed, to: directory)

            let error = try #require(throws: IAPError.self) {
                try FileEntitlementStore(directory: directory.url)
            }
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("unsupported format version 9 (this build reads versions 1 to 4)"))
            #expect(error.message.contains("journal-1.jsonl"))
            #expect(error.message.contains("(line 4)"))
        }
    }

    @Test func aMissingRecordIsCorruption() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try await writeThree(in: directory)
            let offsets = lineOffsets(journal)
            try write(Array(journal[..<offsets[2]] + journal[offsets[3]...]), to: directory)

            let error = try #require(throws: IAPError.self) {
                try FileEntitlementStore(directory: directory.url)
            }
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("record 3 follows record 1"))
        }
    }

    @Test func aDamagedSnapshotIsCorruption() async throws {
        try await withTemporaryDirectory { directory in
            let store = try FileEntitlementStore(directory: directory.url)
            for index in 1...3 {
                try await Fixture.insert(Fixture.entry("t-\(index)", user: "user-1"), into: store)
            }
            try await store.compact()
            await store.close()
            let snapshot = directory.file("snapshot-2.json")
            var bytes = Array(try Data(contentsOf: snapshot))
            // The snapshot's end record is its last line; cutting it leaves an incomplete snapshot.
            bytes.removeLast(3)
            try Data(bytes).write(to: snapshot)

            let error = try #require(throws: IAPError.self) {
                try FileEntitlementStore(directory: directory.url)
            }
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("snapshot-2.json"))
        }
    }
}
