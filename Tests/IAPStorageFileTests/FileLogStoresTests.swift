import Foundation
import IAPCore
import IAPStorageFile
import Testing

@Suite("File logs: checkpoints and renewal extensions")
struct FileLogStoresTests {
    static func path(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).jsonl").path
    }

    @Test func checkpointsSurviveAReopenAndTheLastOneWins() async throws {
        let path = Self.path("checkpoints")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let at = Date(millisecondsSince1970: 1_767_225_600_000)
        do {
            let store = try FileReconciliationCheckpointStore(path: path)
            try await store.saveCheckpoint(
                .init(customerKey: "1", historyRevision: "h1", refundRevision: nil, reconciledAt: at)
            )
            try await store.saveCheckpoint(
                .init(customerKey: "1", historyRevision: "h2", refundRevision: "r", reconciledAt: at)
            )
            try await store.saveCheckpoint(
                .init(customerKey: "2", historyRevision: "x", refundRevision: nil, reconciledAt: at)
            )
            await #expect(throws: IAPError(.invalidArgument)) {
                try await store.saveCheckpoint(
                    .init(customerKey: "", historyRevision: nil, refundRevision: nil, reconciledAt: at)
                )
            }
            await store.close()
        }
        let reopened = try FileReconciliationCheckpointStore(path: path)
        #expect(await reopened.checkpoint(customerKey: "1")?.historyRevision == "h2")
        #expect(await reopened.checkpoint(customerKey: "1")?.refundRevision == "r")
        #expect(await reopened.checkpoint(customerKey: "2")?.historyRevision == "x")
        #expect(await reopened.checkpoint(customerKey: "3") == nil)
    }

    @Test func extensionRecordsSurviveAReopenAndKeepTheLimit() async throws {
        let path = Self.path("extensions")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let start = Date(millisecondsSince1970: 1_767_225_600_000)
        func record(_ id: String, day: Double) -> RenewalExtensionRecord {
            RenewalExtensionRecord(
                requestIdentifier: id,
                originalTransactionId: "1000",
                extendByDays: 10,
                reasonCode: 1,
                requestedAt: start.addingTimeInterval(day * 86_400)
            )
        }
        do {
            let store = try FileRenewalExtensionStore(path: path)
            guard case .started(var first) = try await store.begin(record("a", day: 0), limit: 2, since: .distantPast)
            else {
                Issue.record("the first extension was not started")
                return
            }
            first.state = .succeeded
            try await store.complete(first)
            _ = try await store.begin(record("b", day: 1), limit: 2, since: .distantPast)
            await store.close()
        }
        let store = try FileRenewalExtensionStore(path: path)
        #expect(await store.record(requestIdentifier: "a")?.state == .succeeded)
        #expect(await store.record(requestIdentifier: "b")?.state == .requested)
        let third = try await store.begin(record("c", day: 2), limit: 2, since: start.addingTimeInterval(-86_400))
        guard case .limitReached(let live) = third else {
            Issue.record("a third extension was not refused: \(third)")
            return
        }
        #expect(live.map(\.requestIdentifier) == ["a", "b"])
        let repeated = try await store.begin(record("a", day: 3), limit: 2, since: .distantPast)
        #expect(repeated == .existing(try #require(await store.record(requestIdentifier: "a"))))
        await #expect(throws: IAPError(.notFound)) { try await store.complete(record("zzz", day: 0)) }
    }
}
