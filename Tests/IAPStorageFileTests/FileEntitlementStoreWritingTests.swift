import Foundation
import IAPCore
import IAPTestSupport
#if canImport(Glibc)
    import Glibc
#endif
@testable import IAPStorageFile
import Testing

@Suite struct FileEntitlementStoreWritingTests {
    @Test func aSecondOpenInThisProcessIsRefusedNamingTheHolder() async throws {
        try await withTemporaryDirectory { directory in
            let store = try FileEntitlementStore(directory: directory.url)
            let error = try #require(throws: IAPError.self) {
                try FileEntitlementStore(directory: directory.url)
            }
            #expect(error.code == .storageLocked)
            #expect(error.message.contains("held by pid \(getpid()) on host"))
            #expect(error.message.contains("the store \(directory.path.dropLast()) is locked"))
            // The refused open changed nothing; the holder still writes, and after close the lock is free.
            try await Fixture.insert(Fixture.entry("t-1", user: "user-1"), into: store)
            await store.close()
            let reopened = try FileEntitlementStore(directory: directory.url)
            #expect(try await reopened.entry(transactionId: "t-1") != nil)
            await reopened.close()
        }
    }

    @Test func anotherProcessHoldingTheLockIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
            // One process that takes the lock with flock(1), then becomes `sleep`: killing it frees the lock.
            let holder = try ChildProcess(
                executable: URL(filePath: "/bin/sh"),
                arguments: [
                    "-c", "exec 9>\"$0\" && flock -x 9 && echo ready && exec sleep 30",
                    directory.file("LOCK").path(percentEncoded: false),
                ],
                logFile: directory.file("holder.log")
            )
            defer { holder.kill() }
            let ready = holder.standardOutput.availableData
            #expect(String(decoding: ready, as: UTF8.self).hasPrefix("ready"))

            let error = try #require(throws: IAPError.self) {
                try FileEntitlementStore(directory: directory.url)
            }
            #expect(error.code == .storageLocked)
            #expect(error.message.contains("locked"))

            holder.kill()
            let store = try FileEntitlementStore(directory: directory.url)
            await store.close()
        }
    }

    @Test func concurrentWritersAreAllDurable() async throws {
        try await withTemporaryDirectory { directory in
            let store = try FileEntitlementStore(directory: directory.url)
            // 200 tasks; every id is inserted by two of them, and exactly one of the two wins.
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for task in 0..<200 {
                    group.addTask {
                        let id = "t-\(task % 100)"
                        let stored: LedgerEntry
                        switch try await store.insert(Fixture.entry(id, user: "user-\(task % 7)")) {
                        case .inserted(let entry):
                            stored = entry
                        case .existing:
                            return false
                        }
                        var delivered = stored
                        delivered.deliveryState = .delivered
                        delivered.deliveredAt = Fixture.date(1)
                        _ = try await store.replace(delivered, ifRevision: stored.revision)
                        _ = try await store.markNotificationProcessed("n-\(task)", at: Fixture.date(2))
                        return true
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 100)
            let keys = LedgerDump.Keys(
                transactionIds: (0..<100).map { "t-\($0)" },
                users: (0..<7).map { "user-\($0)" },
                notifications: (0..<200).map { "n-\($0)" }
            )
            let before = try await LedgerDump.take(of: store, keys: keys)
            await store.close()

            let reopened = try FileEntitlementStore(directory: directory.url)
            let after = try await LedgerDump.take(of: reopened, keys: keys)
            #expect(after == before)
            #expect(after.statistics?.transactions == 100)
            #expect(after.statistics?.delivered == 100)
            // Only the task that inserted an id marked its notification.
            #expect(after.notifications.values.filter { $0 }.count == 100)
            await reopened.close()
        }
    }

    @Test func compactionKeepsEverythingAndRemovesOldGenerations() async throws {
        try await withTemporaryDirectory { directory in
            let options = FileEntitlementStore.Options(compactionThreshold: 16 * 1024, fsync: false)
            let store = try FileEntitlementStore(directory: directory.url, options: options)
            for index in 0..<300 {
                let stored = try await Fixture.insert(
                    Fixture.entry("t-\(index)", user: "user-\(index % 9)"),
                    into: store
                )
                var claimed = stored
                claimed.nextAttemptAt = Fixture.date(Int64(index))
                #expect(try await store.replace(claimed, ifRevision: stored.revision))
                if index % 10 == 0 {
                    _ = try await store.bind(appAccountToken: "token-\(index)", to: "user-\(index % 9)")
                    _ = try await store.storeRenewalInfo(Fixture.renewalInfo("t-\(index)", signedAt: Int64(index)))
                    _ = try await store.markNotificationProcessed("n-\(index)", at: Fixture.date(Int64(index)))
                }
            }
            try await store.compact()
            let generation = await store.journalGeneration
            #expect(generation > 2)
            let names = try directory.names()
            #expect(names == ["LOCK", "MANIFEST", "journal-\(generation).jsonl", "snapshot-\(generation).json"])

            let keys = LedgerDump.Keys(
                transactionIds: (0..<300).map { "t-\($0)" },
                users: (0..<9).map { "user-\($0)" },
                tokens: (0..<30).map { "TOKEN-\($0 * 10)" },
                notifications: (0..<30).map { "n-\($0 * 10)" }
            )
            let before = try await LedgerDump.take(of: store, keys: keys)
            await store.close()
            let reopened = try FileEntitlementStore(directory: directory.url, options: options)
            #expect(reopened.recovery.snapshotGeneration == generation)
            #expect(reopened.recovery.journalRecords == 0)
            #expect(try await LedgerDump.take(of: reopened, keys: keys) == before)
            await reopened.close()
        }
    }

    @Test func writesDuringCompactionAreNotLost() async throws {
        try await withTemporaryDirectory { directory in
            let options = FileEntitlementStore.Options(compactionThreshold: nil, fsync: true)
            let store = try FileEntitlementStore(directory: directory.url, options: options)
            for index in 0..<2_000 {
                _ = try await store.insert(Fixture.entry("old-\(index)", user: "user-\(index % 5)"))
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        for index in 0..<50 {
                            _ = try await store.insert(Fixture.entry("new-\(writer)-\(index)", user: "user-\(writer)"))
                        }
                    }
                }
                group.addTask { try await store.compact() }
                group.addTask { try await store.compact() }
                try await group.waitForAll()
            }
            let keys = LedgerDump.Keys(
                transactionIds: (0..<8).flatMap { writer in (0..<50).map { "new-\(writer)-\($0)" } },
                users: (0..<8).map { "user-\($0)" }
            )
            let before = try await LedgerDump.take(of: store, keys: keys)
            #expect(before.statistics?.transactions == 2_400)
            await store.close()

            let reopened = try FileEntitlementStore(directory: directory.url, options: options)
            #expect(reopened.recovery.snapshotGeneration != nil)
            #expect(try await LedgerDump.take(of: reopened, keys: keys) == before)
            await reopened.close()
        }
    }

    @Test func signedTransactionsWrittenWhileCompactionsStartNewJournalsReadBackWhole() async throws {
        try await withTemporaryDirectory { directory in
            let options = FileEntitlementStore.Options(compactionThreshold: nil, fsync: true)
            let store = try FileEntitlementStore(directory: directory.url, options: options)
            // Two certificate chains, as when Apple's signing certificate changes: each journal holds each once.
            func signed(_ id: String) -> String {
                let jws = Fixture.signedTransaction(id, payloadBytes: 300)
                return id.hasSuffix("1") ? "eyJ" + jws : jws
            }
            let ids = (0..<8).flatMap { writer in (0..<40).map { "w\(writer)-\($0)" } }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        for index in 0..<40 {
                            let id = "w\(writer)-\(index)"
                            let stored = try await Fixture.insert(
                                Fixture.entry(id, user: "user-\(writer)"),
                                signed: signed(id),
                                into: store
                            )
                            if index.isMultiple(of: 3) {
                                // A replace with newer signed data, split from its header too.
                                var renewed = stored
                                renewed.deliveryState = .delivered
                                renewed.deliveredAt = Fixture.date(1)
                                #expect(
                                    try await store.replace(
                                        renewed,
                                        ifRevision: stored.revision,
                                        signedTransaction: signed(id + "-renewed")
                                    )
                                )
                            }
                        }
                    }
                }
                for _ in 0..<4 {
                    group.addTask { try await store.compact() }
                }
                try await group.waitForAll()
            }
            func expected(_ id: String) -> String {
                let index = Int(id.split(separator: "-").last ?? "") ?? 0
                return signed(index.isMultiple(of: 3) ? id + "-renewed" : id)
            }
            for id in ids {
                #expect(try await store.signedTransaction(transactionId: id) == expected(id))
            }
            await store.close()
            let journals = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
                .filter { $0.hasPrefix("journal-") }
            #expect(journals.count == 1)
            #expect(try FileEntitlementStore.inspect(directory: directory.url).findings.isEmpty)
            let reopened = try FileEntitlementStore(directory: directory.url, options: options)
            for id in ids {
                #expect(try await reopened.signedTransaction(transactionId: id) == expected(id))
            }
            try await reopened.compact()
            for id in ids.prefix(20) {
                #expect(try await reopened.signedTransaction(transactionId: id) == expected(id))
            }
            await reopened.close()
        }
    }

    @Test func aFailedFlushChangesNothingInMemoryOrOnDisk() async throws {
        try await withTemporaryDirectory { directory in
            let store = try FileEntitlementStore(directory: directory.url)
            let first = try await Fixture.insert(Fixture.entry("t-1", user: "user-1"), into: store)
            try await Fixture.insert(Fixture.entry("t-2", user: "user-1"), into: store)
            let keys = LedgerDump.Keys(
                transactionIds: ["t-1", "t-2", "t-3", "t-4", "t-5"],
                users: ["user-1", "user-2"],
                tokens: ["token"],
                notifications: ["n-1"]
            )
            let before = try await LedgerDump.take(of: store, keys: keys)
            let journalBefore = try Data(contentsOf: directory.file("journal-1.jsonl"))

            // The next flush writes its records, then fails to fsync them (the journal is closed under it).
            await store.breakNextFlush()
            var changed = first
            changed.deliveryState = .delivered
            let delivered = changed
            let failures = await withTaskGroup(of: Bool.self) { group in
                group.addTask { (try? await store.insert(Fixture.entry("t-3", user: "user-2"))) == nil }
                group.addTask { (try? await store.insert(Fixture.entry("t-4", user: "user-1"))) == nil }
                group.addTask { (try? await store.replace(delivered, ifRevision: first.revision)) == nil }
                group.addTask { (try? await store.bind(appAccountToken: "token", to: "user-1")) == nil }
                group.addTask { (try? await store.markNotificationProcessed("n-1", at: Fixture.date(1))) == nil }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(failures == [true, true, true, true, true])
            #expect(try await LedgerDump.take(of: store, keys: keys) == before)
            await #expect(throws: IAPError(.storageFailure)) {
                try await store.insert(Fixture.entry("t-5", user: "user-1"))
            }
            #expect(try Data(contentsOf: directory.file("journal-1.jsonl")) == journalBefore)
            await store.close()

            let reopened = try FileEntitlementStore(directory: directory.url)
            #expect(reopened.recovery.droppedTail == nil)
            #expect(try await LedgerDump.take(of: reopened, keys: keys) == before)
            let next = try await Fixture.insert(Fixture.entry("t-3", user: "user-2"), into: reopened)
            #expect(next.sequence == 3)
            await reopened.close()
        }
    }
}
