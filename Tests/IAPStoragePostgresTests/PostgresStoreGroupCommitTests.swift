import Foundation
import IAPCore
import IAPStoragePostgres
import IAPTestSupport
import Testing

/// Group commit of the ledger's own writes (`PostgresEntitlementStore.Configuration.groupCommit`, on by default): the
/// inserts and compare-and-sets waiting at the same moment share one transaction, and each is still answered as if it
/// had committed alone, exactly once.
@Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
struct PostgresStoreGroupCommitTests {
    enum Outcome: Hashable {
        case inserted
        case existing
        case replaced(Bool)
        case failed(IAPError.Code)
    }

    @Test func concurrentInsertsAndCompareAndSetsShareCommitsAndEachIsAnsweredOnce() async throws {
        // One group open at a time, so that what arrives while it commits waits for the next group.
        let store = try await PostgresTestServer.store(
            poolSize: 2,
            groupCommit: PostgresGroupCommit(maximumDeliveries: 32, concurrentGroups: 1)
        )
        var recorded: [LedgerEntry] = []
        for index in 0..<40 {
            guard
                case .inserted(let entry) = try await store.insert(
                    PostgresEntitlementStoreTests.entry("due-\(index)", user: "user-\(index % 7)")
                )
            else {
                Issue.record("a new id was not inserted")
                return
            }
            recorded.append(entry)
        }
        let claims = recorded
        // 120 new ids, each inserted twice at once; each recorded entry claimed twice at once from one revision.
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for index in 0..<120 {
                for _ in 0..<2 {
                    group.addTask {
                        let entry = PostgresEntitlementStoreTests.entry("new-\(index)", user: "user-\(index % 11)")
                        do {
                            if case .inserted = try await store.insert(entry) {
                                return .inserted
                            }
                            return .existing
                        } catch {
                            return .failed((error as? IAPError)?.code ?? .internalError)
                        }
                    }
                }
            }
            for entry in claims {
                for _ in 0..<2 {
                    group.addTask {
                        var claimed = entry
                        claimed.deliveryState = .pending
                        claimed.deliveryAttempts = 1
                        claimed.nextAttemptAt = PostgresEntitlementStoreTests.epoch.addingTimeInterval(120)
                        do {
                            return .replaced(try await store.replace(claimed, ifRevision: entry.revision))
                        } catch {
                            return .failed((error as? IAPError)?.code ?? .internalError)
                        }
                    }
                }
            }
            var outcomes: [Outcome: Int] = [:]
            for await outcome in group {
                outcomes[outcome, default: 0] += 1
            }
            return outcomes
        }
        #expect(outcomes == [.inserted: 120, .existing: 120, .replaced(true): 40, .replaced(false): 40])
        // Every write that was answered is there.
        #expect(try await store.statistics().transactions == 160)
        for entry in recorded {
            let stored = try #require(try await store.entry(transactionId: entry.transactionId))
            #expect(stored.revision == entry.revision + 1 && stored.nextAttemptAt != nil)
        }
        // They shared transactions.
        #expect(store.sharedWriteGroups > 0)
        try await store.dropSchema()
    }

    @Test func writesOneAtATimeAreAnsweredAsWithoutGroupCommit() async throws {
        let store = try await PostgresTestServer.store(poolSize: 2)
        let schema = store.configuration.schema
        guard case .inserted(let entry) = try await store.insert(PostgresEntitlementStoreTests.entry("alone-1")) else {
            Issue.record("a new id was not inserted")
            return
        }
        var delivered = entry
        delivered.deliveryState = .delivered
        #expect(try await store.replace(delivered, ifRevision: entry.revision))
        #expect(try await store.replace(delivered, ifRevision: entry.revision) == false)
        var changed = delivered
        changed.userId = ""
        await #expect(throws: IAPError.self) {
            try await store.replace(changed, ifRevision: entry.revision + 1)
        }
        #expect(try await store.entry(transactionId: "alone-1")?.deliveryState == .delivered)
        #expect(try PostgresTestServer.sql("SELECT count(*) FROM \(schema).iap_ledger_entries") == ["1"])
        #expect(store.sharedWriteGroups == 0)
        try await store.dropSchema()
    }

    @Test func aGroupCommitThatDoesNotFitThePoolIsRefused() async throws {
        await #expect(throws: IAPError.self) {
            try await PostgresTestServer.store(poolSize: 2, groupCommit: PostgresGroupCommit(concurrentGroups: 3))
        }
        await #expect(throws: IAPError.self) {
            try await PostgresTestServer.store(poolSize: 2, groupCommit: PostgresGroupCommit(maximumDeliveries: 65))
        }
    }
}
