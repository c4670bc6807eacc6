#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import IAPCore
import IAPServerAPI
import IAPStorageFile
import Testing

@Suite("File logs: checkpoints and renewal extensions")
struct FileLogStoresTests {
    static let ledgerId = "0123456789abcdef0123456789abcdef"

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

    #if canImport(Glibc)
        /// A write that fails part way (the disk fills up) must leave nothing behind: a torn line glued to the next
        /// append would make the whole log unreadable, losing that next entry too. Run in its own process, as the
        /// file size limit applies to the whole process.
        @Test func anAppendThatFailsPartWayLeavesNoTornLineForTheNextOne() async {
            await #expect(processExitsWith: .success) {
                await FileLogStoresTests.appendPastTheFileSizeLimitThenAppendAgain()
            }
        }

        /// Exits 0 when the log reads back exactly the appends that returned; another status names the failed step.
        static func appendPastTheFileSizeLimitThenAppendAgain() async {
            signal(SIGXFSZ, SIG_IGN)  // a write past the limit fails with EFBIG instead of killing the process
            let path = Self.path("audit-limit")
            defer {
                try? FileManager.default.removeItem(atPath: path)
                try? FileManager.default.removeItem(atPath: FileSupportAuditLog.headPath(for: path))
            }
            func entry(_ action: String, outcomes: Int) -> SupportAuditEntry {
                SupportAuditEntry(
                    at: Date(millisecondsSince1970: 1_767_225_600_000),
                    actor: "agent-7",
                    action: action,
                    orderId: "MK5TTTVWJH",
                    userId: nil,
                    outcomes: (0..<outcomes).map {
                        .init(transactionId: "\(2_000_000_000_000_000 + $0)", outcome: "requested")
                    }
                )
            }
            let first = entry("redeliver.requested", outcomes: 1)
            let torn = entry("redeliver.completed", outcomes: 50)
            let next = entry("redeliver.requested", outcomes: 2)
            let sealedFirst: SupportAuditEntry
            let sealedNext: SupportAuditEntry
            do {
                let log = try FileSupportAuditLog(path: path, ledgerId: Self.ledgerId)
                sealedFirst = try await log.append(first)
                let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
                var saved = rlimit()
                getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &saved)
                var limited = saved
                limited.rlim_cur = rlim_t(size + 40)  // room for 40 bytes of the next line, not all of it
                guard setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limited) == 0 else { exit(10) }
                do {
                    try await log.append(torn)
                    exit(11)  // it fit: the limit did not cut it
                } catch {}
                guard setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &saved) == 0 else { exit(12) }
                sealedNext = try await log.append(next)
                await log.close()
            } catch {
                exit(13)
            }
            do {
                let reopened = try FileSupportAuditLog(path: path, ledgerId: Self.ledgerId)
                guard await reopened.entries() == [sealedFirst, sealedNext] else { exit(14) }
                // The failed append left no trace in the chain either.
                guard try await reopened.verify().isIntact else { exit(16) }
                await reopened.close()
            } catch {
                exit(15)  // storageCorrupted: the torn bytes and the next line were read as one
            }
            exit(0)
        }
    #endif

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

    @Test func theFileAuditLogKeepsEveryEntryAcrossARestartAndCutsATornLine() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("audit-\(UUID().uuidString).jsonl")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let entry = SupportAuditEntry(
            at: Date(millisecondsSince1970: 1_767_225_600_000),
            actor: "agent-7",
            action: "redeliver.requested",
            orderId: "MK5TTTVWJH",
            userId: nil,
            outcomes: [.init(transactionId: "2000000000000001", outcome: "requested")]
        )
        defer { try? FileManager.default.removeItem(atPath: FileSupportAuditLog.headPath(for: path)) }
        let first: SupportAuditEntry
        do {
            let log = try FileSupportAuditLog(path: path, ledgerId: Self.ledgerId)
            first = try await log.append(entry)
            #expect(throws: IAPError(.storageLocked)) { try FileSupportAuditLog(path: path, ledgerId: Self.ledgerId) }
            await log.close()
        }
        // A crash in the middle of the next append leaves half a line.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"action":"redeliver.comp"#.utf8))
        try handle.close()

        let reopened = try FileSupportAuditLog(path: path, ledgerId: Self.ledgerId)
        #expect(await reopened.entries() == [first])
        let second = try await reopened.append(entry)
        await reopened.close()
        #expect(try await FileSupportAuditLog(path: path, ledgerId: Self.ledgerId).entries() == [first, second])
        #expect(try FileSupportAuditLog.verify(path: path, ledgerId: Self.ledgerId).isIntact)
    }
}
