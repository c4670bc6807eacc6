#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPStorageFile
import IAPTestSupport
import Testing

/// What an operator or an attacker can do to a file ledger's directory, and what `inspect` (`iap ledger check`)
/// says and an open does about each: nothing recorded is ever cut away or taken for complete.
@Suite("File store tampering: what inspect says, what open does")
struct FileStoreTamperTests {
    /// A store with three delivered transactions (each with its signed transaction), closed.
    private func writeThree(in directory: TemporaryDirectory) async throws {
        let store = try FileEntitlementStore(directory: directory.url)
        for index in 1...3 {
            let stored = try await Fixture.insert(
                Fixture.entry("t-\(index)", user: "user-1", second: Int64(index)),
                signed: Fixture.signedTransaction("t-\(index)"),
                into: store
            )
            var delivered = stored
            delivered.deliveryState = .delivered
            delivered.deliveredAt = Fixture.date(Int64(index) + 1)
            #expect(try await store.replace(delivered, ifRevision: stored.revision))
        }
        await store.close()
    }

    private func journal(_ directory: TemporaryDirectory, _ generation: Int = 1) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.file("journal-\(generation).jsonl")))
    }

    private func openFails(_ directory: TemporaryDirectory) throws -> IAPError {
        try #require(throws: IAPError.self) { try FileEntitlementStore(directory: directory.url) }
    }

    private func damage(_ inspection: FileEntitlementStore.Inspection) -> [FileEntitlementStore.Finding] {
        inspection.findings.filter { $0.severity == .damage }
    }

    @Test func aCompleteLastLineWhoseSeqWasChangedIsRefusedNotCut() async throws {
        try await withTemporaryDirectory { directory in
            try await writeThree(in: directory)
            var bytes = try journal(directory)
            // One changed character in the last record's seq: `"seq":6` becomes `"seq":x`.
            let lastLine = bytes[..<(bytes.count - 1)].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            let seq = try #require(bytes[lastLine...].firstRange(of: Array("\"seq\":".utf8))).upperBound
            bytes[seq] = UInt8(ascii: "x")
            try Data(bytes).write(to: directory.file("journal-1.jsonl"))

            let error = try openFails(directory)
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("journal-1.jsonl"))
            // Line 1 is the journal's header, line 2 the certificate chain the signed transactions share.
            #expect(error.message.contains("(line 8)"))
            // Nothing was cut: the delivered entry did not turn back into a pending one.
            #expect(try journal(directory) == bytes)

            let inspection = try FileEntitlementStore.inspect(directory: directory.url)
            #expect(!inspection.opens)
            #expect(damage(inspection).contains { $0.line == 8 && $0.transactionId == "t-3" })
            #expect(try journal(directory) == bytes)
        }
    }

    @Test func anEmptiedJournalIsDetected() async throws {
        try await withTemporaryDirectory { directory in
            try await writeThree(in: directory)
            try Data().write(to: directory.file("journal-1.jsonl"))

            let error = try openFails(directory)
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("recorded writes are lost"))
            let inspection = try FileEntitlementStore.inspect(directory: directory.url)
            #expect(!inspection.opens)
            #expect(damage(inspection).contains { $0.file == "journal-1.jsonl" })
        }
    }

    @Test func aDeletedJournalIsDetectedAndNotRecreated() async throws {
        try await withTemporaryDirectory { directory in
            try await writeThree(in: directory)
            try FileManager.default.removeItem(at: directory.file("journal-1.jsonl"))

            let error = try openFails(directory)
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("journal-1.jsonl: the journal is missing"))
            #expect(!FileManager.default.fileExists(atPath: directory.file("journal-1.jsonl").path))
            let inspection = try FileEntitlementStore.inspect(directory: directory.url)
            #expect(damage(inspection).map(\.file) == ["journal-1.jsonl"])
        }
    }

    @Test func aDeletedJournalAfterASnapshotIsDetected() async throws {
        try await withTemporaryDirectory { directory in
            let store = try FileEntitlementStore(directory: directory.url)
            for index in 1...200 {
                try await Fixture.insert(Fixture.entry("t-\(index)", user: "user-1"), into: store)
            }
            try await store.compact()
            for index in 201...203 {
                try await Fixture.insert(Fixture.entry("t-\(index)", user: "user-1"), into: store)
            }
            let generation = await store.journalGeneration
            await store.close()
            try FileManager.default.removeItem(at: directory.file("journal-\(generation).jsonl"))

            let error = try openFails(directory)
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("the journal is missing"))
            let inspection = try FileEntitlementStore.inspect(directory: directory.url)
            #expect(!inspection.opens)
            // What verifies is still there to read: the snapshot's 200 entries.
            #expect(try await inspection.store.statistics().transactions == 200)
        }
    }

    @Test func aJournalCutShortOfItsWatermarkIsDetected() async throws {
        try await withTemporaryDirectory { directory in
            try await writeThree(in: directory)
            let bytes = try journal(directory)
            // Cut at a line boundary: every remaining line is whole, so only the manifest can tell.
            let cut = try #require(bytes[..<(bytes.count - 1)].lastIndex(of: UInt8(ascii: "\n"))) + 1
            try Data(bytes[..<cut]).write(to: directory.file("journal-1.jsonl"))

            let error = try openFails(directory)
            #expect(error.message.contains("recorded writes are lost"))
        }
    }

    @Test func aTornTailAfterTheWatermarkIsANoteAndOnlyAnOpenCutsIt() async throws {
        try await withTemporaryDirectory { directory in
            try await writeThree(in: directory)
            let bytes = try journal(directory)
            let torn = bytes + Array("{\"v\":2,\"seq\":7,\"crc\":\"00".utf8)
            try Data(torn).write(to: directory.file("journal-1.jsonl"))

            let inspection = try FileEntitlementStore.inspect(directory: directory.url)
            #expect(inspection.opens)
            #expect(inspection.findings.map(\.severity) == [.note])
            #expect(inspection.recovery.isPlanOnly)
            #expect(inspection.recovery.droppedTail?.offset == bytes.count)
            // Inspecting changed nothing; opening cuts the tail.
            #expect(try journal(directory) == torn)
            let store = try FileEntitlementStore(directory: directory.url)
            #expect(store.recovery.droppedTail?.length == torn.count - bytes.count)
            #expect(try journal(directory) == bytes)
            await store.close()
        }
    }

    @Test func aMissingSnapshotAndADeletedManifestAreDetected() async throws {
        try await withTemporaryDirectory { directory in
            let store = try FileEntitlementStore(directory: directory.url)
            try await Fixture.insert(
                Fixture.entry("t-1", user: "user-1"),
                signed: Fixture.signedTransaction("t-1"),
                into: store
            )
            try await store.compact()
            await store.close()
            let snapshot = try #require(try directory.names().first { $0.hasPrefix("snapshot-") })
            let withoutSnapshot = TemporaryDirectory()
            defer { withoutSnapshot.remove() }
            try FileManager.default.copyItem(at: directory.url, to: withoutSnapshot.url)
            try FileManager.default.removeItem(at: withoutSnapshot.file(snapshot))
            #expect(try openFails(withoutSnapshot).message.contains("\(snapshot): the snapshot is missing"))

            try FileManager.default.removeItem(at: directory.file("MANIFEST"))
            #expect(try openFails(directory).message.contains("the manifest is missing"))
        }
    }

    @Test func readOnlyOpensCreateNothingAndAnswerNotFound() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
            let readOnly = FileEntitlementStore.Options(access: .readOnly)
            #expect(throws: IAPError(.notFound)) {
                try FileEntitlementStore(directory: directory.url, options: readOnly)
            }
            #expect(throws: IAPError(.notFound)) {
                try FileEntitlementStore(directory: directory.url, options: .init(createIfMissing: false))
            }
            #expect(throws: IAPError(.notFound)) { try FileEntitlementStore.inspect(directory: directory.url) }
            #expect(try directory.names().isEmpty)
            let missing = directory.url.appending(path: "nowhere")
            #expect(throws: IAPError(.notFound)) { try FileEntitlementStore(directory: missing, options: readOnly) }
            #expect(!FileManager.default.fileExists(atPath: missing.path))
        }
    }

    @Test func aReadOnlyStoreAndAnInspectionWorkWhileAnotherOpenHoldsTheStore() async throws {
        try await withTemporaryDirectory { directory in
            try await writeThree(in: directory)
            let writer = try FileEntitlementStore(directory: directory.url)
            let reader = try FileEntitlementStore(directory: directory.url, options: .init(access: .readOnly))
            #expect(try await reader.statistics().delivered == 3)
            #expect(try await reader.signedTransaction(transactionId: "t-2") == Fixture.signedTransaction("t-2"))
            await #expect(throws: IAPError(.unsupportedOperation)) {
                try await reader.insert(Fixture.entry("t-9", user: "user-1"))
            }
            #expect(try FileEntitlementStore.inspect(directory: directory.url).opens)
            await reader.close()
            await writer.close()
        }
    }

    @Test func aDamagedSharedHeaderFailsTheOpenAndARepairKeepsEveryEntryWithoutItsSignedTransaction() async throws {
        try await withTemporaryDirectory { directory in
            try await writeThree(in: directory)
            var bytes = try journal(directory)
            // Line 2 is the certificate chain the three signed transactions share (a `header` record).
            let lines = bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") }
            #expect(bytes[(lines[0] + 1)...].starts(with: Array(#"{"v":3,"seq":0,"crc":""#.utf8)))
            bytes[lines[0] + 200] ^= 0x01
            try Data(bytes).write(to: directory.file("journal-1.jsonl"))

            let error = try openFails(directory)
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("journal-1.jsonl"))
            #expect(error.message.contains("(line 2)"))
            #expect(try journal(directory) == bytes)

            let report = try await FileEntitlementStore.repair(directory: directory.url)
            #expect(report.repaired)
            #expect(report.entries == 3)
            #expect(report.signedTransactions == 0)
            let store = try FileEntitlementStore(directory: directory.url)
            for index in 1...3 {
                #expect(try await store.entry(transactionId: "t-\(index)")?.deliveryState == .delivered)
                #expect(try await store.signedTransaction(transactionId: "t-\(index)") == nil)
            }
            await store.close()
            #expect(try FileEntitlementStore.inspect(directory: directory.url).findings.isEmpty)
        }
    }

    @Test func repairKeepsWhatVerifiesMovesTheDamagedFileAsideAndSaysWhatItDropped() async throws {
        try await withTemporaryDirectory { directory in
            try await writeThree(in: directory)
            var bytes = try journal(directory)
            // Damage t-2's insert (line 5, after the journal's header and the shared certificate chain): its
            // delivered record (line 6) depends on it and goes too.
            let lines = bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") }
            bytes[lines[3] + 100] ^= 0x01
            try Data(bytes).write(to: directory.file("journal-1.jsonl"))

            let report = try await FileEntitlementStore.repair(directory: directory.url)
            #expect(report.repaired)
            #expect(report.entries == 2)
            #expect(report.signedTransactions == 2)
            #expect(report.dropped.contains { $0.line == 5 && $0.transactionId == "t-2" })
            #expect(report.dropped.contains { $0.line == 6 && $0.transactionId == "t-2" })
            let aside = try #require(report.damagedDirectory)
            #expect(report.movedFiles.contains("journal-1.jsonl"))
            #expect(Array(try Data(contentsOf: URL(filePath: aside + "/journal-1.jsonl"))) == bytes)

            let store = try FileEntitlementStore(directory: directory.url)
            #expect(try await store.entry(transactionId: "t-1")?.deliveryState == .delivered)
            #expect(try await store.entry(transactionId: "t-2") == nil)
            #expect(try await store.entry(transactionId: "t-3")?.deliveryState == .delivered)
            #expect(try await store.signedTransaction(transactionId: "t-3") == Fixture.signedTransaction("t-3"))
            let next = try await Fixture.insert(Fixture.entry("t-4", user: "user-1"), into: store)
            #expect(next.sequence == 3)
            await store.close()
            #expect(try FileEntitlementStore.inspect(directory: directory.url).findings.isEmpty)
            // The damaged copy stays where the repair put it.
            #expect(FileManager.default.fileExists(atPath: aside + "/journal-1.jsonl"))
        }
    }

    @Test func repairOfASoundStoreOnlyOpensIt() async throws {
        try await withTemporaryDirectory { directory in
            try await writeThree(in: directory)
            let before = try directory.names()
            let report = try await FileEntitlementStore.repair(directory: directory.url)
            #expect(!report.repaired)
            #expect(report.dropped.isEmpty)
            #expect(report.entries == 3)
            #expect(try directory.names() == before)
        }
    }

    @Test func aDamagedSignedTransactionRecordIsFoundByInspection() async throws {
        try await withTemporaryDirectory { directory in
            try await writeThree(in: directory)
            let store = try FileEntitlementStore(directory: directory.url)
            try await store.compact()
            await store.close()
            let signedFile = try #require(try directory.names().first { $0.hasPrefix("signed-") })
            var bytes = Array(try Data(contentsOf: directory.file(signedFile)))
            // The last record is t-3's signed transaction; damage its payload.
            bytes[bytes.count - 200] ^= 0x01
            try Data(bytes).write(to: directory.file(signedFile))

            let inspection = try FileEntitlementStore.inspect(directory: directory.url)
            #expect(damage(inspection).contains { $0.file == signedFile && $0.transactionId == "t-3" })
            // The store opens (the signed file is not read at open) and says so when asked for that transaction.
            let reopened = try FileEntitlementStore(directory: directory.url)
            await #expect(throws: IAPError(.storageCorrupted)) {
                try await reopened.signedTransaction(transactionId: "t-3")
            }
            #expect(try await reopened.signedTransaction(transactionId: "t-1") == Fixture.signedTransaction("t-1"))
            await reopened.close()
        }
    }
}
