#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
@testable import IAPStorageFile
import IAPTestSupport
import Testing

/// The file store keeps each signed transaction on disk only: in its journal record, then in the signed file a
/// compaction moves it to. Every one must read back exactly through compactions, reopens and failed flushes.
@Suite("File store: signed transactions on disk")
struct FileSignedTransactionTests {
    /// Reads every signed transaction back and compares it with what each id was last given.
    private func expectSigned(
        _ store: FileEntitlementStore,
        _ expected: [String: String?],
        _ when: String
    ) async throws {
        for (id, jws) in expected {
            let read = try await store.signedTransaction(transactionId: id)
            #expect(read == jws, "\(id) \(when)")
        }
    }

    @Test func concurrentWritesThroughCompactionsKeepEverySignedTransaction() async throws {
        try await withTemporaryDirectory { directory in
            let options = FileEntitlementStore.Options(compactionThreshold: 64 * 1024, fsync: false)
            let store = try FileEntitlementStore(directory: directory.url, options: options)
            let expected = try await withThrowingTaskGroup(of: [String: String?].self) { group in
                for writer in 0..<6 {
                    group.addTask {
                        var mine: [String: String?] = [:]
                        for index in 0..<40 {
                            let id = "t-\(writer)-\(index)"
                            let jws = index % 7 == 3 ? nil : Fixture.signedTransaction(id)
                            let stored = try await Fixture.insert(
                                Fixture.entry(id, user: "user-\(writer)"),
                                signed: jws,
                                into: store
                            )
                            var next = stored
                            next.deliveryState = .delivered
                            next.deliveredAt = Fixture.date(1)
                            switch index % 3 {
                            case 0:  // keeps it
                                #expect(try await store.replace(next, ifRevision: stored.revision))
                                mine[id] = jws
                            case 1:  // newer signed data replaces it
                                let newer = Fixture.signedTransaction(id + "/refund", payloadBytes: 900)
                                #expect(try await store.replace(next, ifRevision: 1, signedTransaction: newer))
                                mine[id] = newer
                            default:  // newer data without one removes it
                                #expect(try await store.replace(next, ifRevision: 1, signedTransaction: nil))
                                mine[id] = .some(nil)
                            }
                        }
                        return mine
                    }
                }
                return try await group.reduce(into: [:]) { $0.merge($1) { first, _ in first } }
            }
            #expect(await store.journalGeneration > 3, "the writes should have compacted several times")
            try await expectSigned(store, expected, "before closing")
            try await store.compact()
            try await expectSigned(store, expected, "after a last compaction")
            await store.close()

            let reopened = try FileEntitlementStore(directory: directory.url, options: options)
            try await expectSigned(reopened, expected, "after reopening")
            #expect(await reopened.signedTransactionCount == expected.values.filter { $0 != nil }.count)
            await reopened.close()
            let inspection = try FileEntitlementStore.inspect(directory: directory.url)
            #expect(inspection.findings.isEmpty, "\(inspection.findings)")
            #expect(inspection.signedRecordsChecked > 0)
        }
    }

    @Test func eachCertificateChainIsWrittenOnceInTheSignedFile() async throws {
        try await withTemporaryDirectory { directory in
            let store = try FileEntitlementStore(directory: directory.url)
            for index in 0..<50 {
                try await Fixture.insert(
                    Fixture.entry("t-\(index)", user: "user-1"),
                    signed: Fixture.signedTransaction("t-\(index)"),
                    into: store
                )
            }
            try await store.compact()
            await store.close()
            let name = try #require(try directory.names().first { $0.hasPrefix("signed-") })
            let bytes = try Data(contentsOf: directory.file(name))
            let jws = Fixture.signedTransaction("t-0")
            // 50 payloads and signatures, one header: far less than 50 whole JWS.
            #expect(bytes.count < 50 * (jws.utf8.count - 3_000))
            let lines = bytes.split(separator: UInt8(ascii: "\n"))
            #expect(lines.count == 51)
            #expect(lines.filter { $0.firstRange(of: Array(#""op":{"header":"#.utf8)) != nil }.count == 1)
        }
    }

    @Test func aJournalKeepsEachCertificateChainOnceAndRefusesAReferenceToAnythingElse() async throws {
        try await withTemporaryDirectory { directory in
            let store = try FileEntitlementStore(directory: directory.url)
            for id in ["t-1", "t-2"] {
                try await Fixture.insert(
                    Fixture.entry(id, user: "user-1"),
                    signed: Fixture.signedTransaction(id),
                    into: store
                )
            }
            await store.close()
            let path = directory.file("journal-1.jsonl")
            let bytes = Array(try Data(contentsOf: path))
            var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast().map(
                Array.init
            )
            let operations = try lines.map { line in
                guard case .success(let record) = JournalRecord.decode(line) else {
                    throw IAPError(.internalError, "a line does not decode")
                }
                return record
            }
            // The journal's header line, the chain once, then both inserts referring to it at its offset.
            #expect(operations.count == 4)
            guard case .header = operations[1].operation,
                case .insert(let entry, .split(let header, let rest)) = operations[3].operation,
                case .insert(_, .split(header, _)) = operations[2].operation
            else {
                Issue.record("unexpected records: \(operations.map(\.operation.kind))")
                return
            }
            #expect(header == UInt64(lines[0].count + 1))

            // The last insert re-encoded to refer to the journal's first line, which is no header record.
            lines[3] = try JournalRecord.line(
                .insert(entry, signed: .split(header: 0, rest: rest)),
                seq: operations[3].seq,
                encoder: RecordEncoder()
            ).dropLast()
            let forged = Array(lines.joined(separator: [UInt8(ascii: "\n")])) + [UInt8(ascii: "\n")]
            try Data(forged).write(to: path)
            let error = try #require(throws: IAPError.self) { try FileEntitlementStore(directory: directory.url) }
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("refers to a header record at byte 0"))
            #expect(error.message.contains("(line 4)"))
            #expect(Array(try Data(contentsOf: path)) == forged)
        }
    }

    @Test func aFailedFlushTakesBackTheSignedTransactionsItsWritesCarried() async throws {
        try await withTemporaryDirectory { directory in
            let store = try FileEntitlementStore(directory: directory.url)
            let first = try await Fixture.insert(
                Fixture.entry("t-1", user: "user-1"),
                signed: Fixture.signedTransaction("t-1"),
                into: store
            )
            await store.breakNextFlush()
            var next = first
            next.deliveryState = .delivered
            let replaced = next
            await #expect(throws: IAPError(.storageFailure)) {
                try await store.replace(replaced, ifRevision: 1, signedTransaction: Fixture.signedTransaction("other"))
            }
            #expect(try await store.signedTransaction(transactionId: "t-1") == Fixture.signedTransaction("t-1"))
            await store.close()
            let reopened = try FileEntitlementStore(directory: directory.url)
            #expect(try await reopened.signedTransaction(transactionId: "t-1") == Fixture.signedTransaction("t-1"))
            await reopened.close()
        }
    }

    @Test func aLedgerOfAnEarlierVersionOpensAndExpectsSignedTransactionsOnlyFromNowOn() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
            // Two records as version 1 wrote them: no journal header, no manifest, no signed transactions.
            let encoder = RecordEncoder()
            var journal: [UInt8] = []
            for (seq, id) in ["t-1", "t-2"].enumerated() {
                var entry = Fixture.entry(id, user: "user-1")
                entry.sequence = Int64(seq + 1)
                entry.revision = 1
                let body = try encoder.encode(.insert(entry, signed: .unchanged))
                journal += Array("{\"v\":1,\"seq\":\(seq + 1),\"crc\":\"".utf8) + CRC32C.hex(CRC32C.checksum(body))
                journal += Array("\",\"op\":".utf8) + body + Array("}\n".utf8)
            }
            try Data(journal).write(to: directory.file("journal-1.jsonl"))

            let readOnly = try FileEntitlementStore(directory: directory.url, options: .init(access: .readOnly))
            #expect(readOnly.recovery.createdManifest && readOnly.recovery.isPlanOnly)
            #expect(try directory.names() == ["journal-1.jsonl"])
            await readOnly.close()

            let store = try FileEntitlementStore(directory: directory.url)
            #expect(store.recovery.createdManifest)
            #expect(await store.signedTransactionsFromSequence == 3)
            try await Fixture.insert(
                Fixture.entry("t-3", user: "user-1"),
                signed: Fixture.signedTransaction("t-3"),
                into: store
            )
            await store.close()
            let reopened = try FileEntitlementStore(directory: directory.url)
            #expect(!reopened.recovery.createdManifest)
            #expect(await reopened.signedTransactionsFromSequence == 3)
            #expect(try await reopened.signedTransaction(transactionId: "t-1") == nil)
            #expect(try await reopened.signedTransaction(transactionId: "t-3") == Fixture.signedTransaction("t-3"))
            await reopened.close()
        }
    }
}
