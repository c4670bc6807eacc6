import Foundation
import IAPCore
import IAPConformance
import IAPServerAPI
import IAPStoragePostgres
import IAPTestSupport
import Testing

/// The PostgreSQL stores that live beside the ledger (reconciliation checkpoints, renewal-extension requests) pass
/// the suites the in-memory and file ones pass, reopened as the next process would find them, and the advisory lock
/// passes the lock suite and holds against other sessions.
@Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
struct PostgresServerStoresTests {
    /// The ledgers a suite run opened: the previous one is closed when the next check starts, and every schema is
    /// dropped at the end.
    final class Ledgers: Sendable {
        private let opened = LockedValue<[PostgresEntitlementStore]>([])

        /// A new ledger on a fresh schema; closes the one opened before.
        func fresh() async throws -> PostgresEntitlementStore {
            try await open(PostgresTestServer.freshSchema(), closingPrevious: true)
        }

        /// The last ledger's schema opened again, after closing it, as a restarted process would.
        func reopenLast() async throws -> PostgresEntitlementStore {
            guard let last = opened.withLock({ $0.last }) else {
                throw IAPError(.internalError, "no ledger was opened")
            }
            return try await open(last.configuration.schema, closingPrevious: true)
        }

        /// Another instance on the schema of `ledger`, which stays open.
        func another(on ledger: PostgresEntitlementStore) async throws -> PostgresEntitlementStore {
            try await open(ledger.configuration.schema, closingPrevious: false)
        }

        private func open(_ schema: String, closingPrevious: Bool) async throws -> PostgresEntitlementStore {
            if closingPrevious, let previous = opened.withLock({ $0.last }) {
                await previous.close()
            }
            let ledger = try await PostgresTestServer.store(schema: schema)
            opened.withLock { $0.append(ledger) }
            return ledger
        }

        func dropAll() async throws {
            let all = opened.withLock { $0 }
            for ledger in all {
                await ledger.close()
            }
            for schema in Set(all.map(\.configuration.schema)) {
                try await PostgresTestServer.store(schema: schema).dropSchema()
            }
        }
    }

    @Test func theCheckpointStorePassesTheConformanceSuite() async throws {
        let ledgers = Ledgers()
        let report = await ReconciliationCheckpointStoreConformance(
            makeStore: { PostgresReconciliationCheckpointStore(ledger: try await ledgers.fresh()) },
            reopen: { _ in PostgresReconciliationCheckpointStore(ledger: try await ledgers.reopenLast()) }
        ).run()
        try await ledgers.dropAll()
        #expect(report.succeeded, "\(report)")
        #expect(report.passed == ReconciliationCheckpointStoreConformance.checkNames)
    }

    @Test func theRenewalExtensionStorePassesTheConformanceSuite() async throws {
        let ledgers = Ledgers()
        let report = await RenewalExtensionStoreConformance(
            makeStore: { PostgresRenewalExtensionStore(ledger: try await ledgers.fresh()) },
            reopen: { _ in PostgresRenewalExtensionStore(ledger: try await ledgers.reopenLast()) }
        ).run()
        try await ledgers.dropAll()
        #expect(report.succeeded, "\(report)")
        #expect(report.passed == RenewalExtensionStoreConformance.checkNames)
    }

    @Test func twoInstancesOnOneSchemaShareTheLimitAndTheNewestCheckpoint() async throws {
        let ledgers = Ledgers()
        let first = try await ledgers.fresh()
        let second = try await ledgers.another(on: first)
        let stores = [PostgresRenewalExtensionStore(ledger: first), PostgresRenewalExtensionStore(ledger: second)]
        let epoch = Date(millisecondsSince1970: 1_767_225_600_000)
        // 20 requests for one subscription, 10 from each instance, under a limit of 2.
        let outcomes = try await withThrowingTaskGroup(of: RenewalExtensionBeginOutcome.self) { group in
            for index in 0..<20 {
                let request = RenewalExtensionRecord(
                    requestIdentifier: "request-\(index)",
                    originalTransactionId: "2000000000000001",
                    extendByDays: 30,
                    reasonCode: 1,
                    requestedAt: epoch.addingTimeInterval(Double(index))
                )
                group.addTask { try await stores[index % 2].begin(request, limit: 2, since: .distantPast) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let started = outcomes.filter { if case .started = $0 { true } else { false } }
        #expect(started.count == 2)
        #expect(try await stores[1].records(originalTransactionId: "2000000000000001").count == 2)

        // A run that finishes late on one instance does not take the customer back.
        let newer = ReconciliationCheckpoint(
            customerKey: "alice",
            historyRevision: "h2",
            refundRevision: "r2",
            reconciledAt: epoch.addingTimeInterval(60)
        )
        let older = ReconciliationCheckpoint(
            customerKey: "alice",
            historyRevision: "h1",
            refundRevision: nil,
            reconciledAt: epoch
        )
        try await PostgresReconciliationCheckpointStore(ledger: first).saveCheckpoint(newer)
        try await PostgresReconciliationCheckpointStore(ledger: second).saveCheckpoint(older)
        #expect(
            try await PostgresReconciliationCheckpointStore(ledger: first).checkpoint(customerKey: "alice") == newer
        )
        try await ledgers.dropAll()
    }

    @Test func theTablesComeWithAMigrationOfTheirOwn() async throws {
        let ledger = try await PostgresTestServer.store()
        let schema = ledger.configuration.schema
        let migration = try PostgresTestServer.sql(
            """
            SELECT version FROM \(schema).iap_schema_migrations
            WHERE description = 'reconciliation checkpoints, renewal-extension requests'
            """
        )
        #expect(migration.count == 1)
        let tables = try PostgresTestServer.sql(
            """
            SELECT table_name FROM information_schema.tables
            WHERE table_schema = '\(schema)' AND table_name IN ('iap_reconciliation_checkpoints', 'iap_renewal_extensions')
            ORDER BY table_name
            """
        )
        #expect(tables == ["iap_reconciliation_checkpoints", "iap_renewal_extensions"])
        // Text PostgreSQL cannot hold is refused, not cut short.
        let checkpoints = PostgresReconciliationCheckpointStore(ledger: ledger)
        let bad = ReconciliationCheckpoint(
            customerKey: "alice\0bob",
            historyRevision: nil,
            refundRevision: nil,
            reconciledAt: Date(millisecondsSince1970: 0)
        )
        await #expect { try await checkpoints.saveCheckpoint(bad) } throws: {
            ($0 as? IAPError)?.code == .invalidArgument
        }
        #expect(try await checkpoints.checkpoint(customerKey: "alice\0bob") == nil)
        #expect(try await checkpoints.checkpoint(customerKey: "alice") == nil)
        try await ledger.dropSchema()
    }

    // MARK: The advisory lock

    static func lock(_ name: String, schema: String) throws -> PostgresAdvisoryLock {
        try PostgresAdvisoryLock(
            name: name,
            configuration: .init(url: try PostgresTestServer.requireURL(), schema: schema)
        )
    }

    /// The lock's key as `Documentation/Postgres.md` tells an operator to compute it.
    static func key(_ lock: PostgresAdvisoryLock) -> String {
        "('x' || left(md5('\(lock.keyText)'), 16))::bit(64)::bigint"
    }

    /// The backend process ids that hold the lock, from `pg_locks`, as `Documentation/Postgres.md` shows.
    static func holders(_ lock: PostgresAdvisoryLock) throws -> [String] {
        try PostgresTestServer.sql(
            """
            SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
                AND ((classid::bigint << 32) | objid::bigint) = \(key(lock))
            """
        )
    }

    @Test func theAdvisoryLockPassesTheLockSuite() async throws {
        let schema = PostgresTestServer.freshSchema()
        let report = await ExclusiveRunLockConformance { name in try Self.lock(name, schema: schema) }.run()
        #expect(report.succeeded, "\(report)")
        #expect(report.passed == ExclusiveRunLockConformance.checkNames)
    }

    @Test func aSessionThatHoldsTheLockRefusesTheFleetUntilItEnds() async throws {
        let lock = try Self.lock("reconcile", schema: PostgresTestServer.freshSchema())
        // Another process's session holds the lock (psql, or an instance on another machine).
        var other: PostgresTestServer.HeldConnection? = try PostgresTestServer.HeldConnection(
            url: try PostgresTestServer.requireURL()
        )
        try other?.run("SELECT pg_advisory_lock(\(Self.key(lock)))")
        #expect(try Self.holders(lock).count == 1)
        #expect(try await lock.tryLock() == nil)
        #expect(try await lock.runExclusively { _ in true } == nil)
        // Its session ends: the lock is free without anyone's help.
        other = nil
        var lease: (any ExclusiveRunLease)?
        for _ in 0..<250 where lease == nil {
            lease = try await lock.tryLock()
            if lease == nil {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let held = try #require(lease)
        #expect(await held.isHeld())
        // While the lease holds it, no other session gets it.
        #expect(try PostgresTestServer.sql("SELECT pg_try_advisory_lock(\(Self.key(lock)))") == ["f"])
        await held.release()
        #expect(try Self.holders(lock).isEmpty)
    }

    @Test func aLeaseWhoseSessionIsKilledKnowsItLostTheLock() async throws {
        let schema = PostgresTestServer.freshSchema()
        let lock = try Self.lock("reconcile", schema: schema)
        let lease = try #require(try await lock.tryLock())
        let holders = try Self.holders(lock)
        #expect(holders.count == 1)
        // An operator (or a failover) ends the holder's session.
        for pid in holders {
            try PostgresTestServer.sql("SELECT pg_terminate_backend(\(pid))")
        }
        #expect(await lease.isHeld() == false)
        let next = try await Self.lock("reconcile", schema: schema).tryLock()
        #expect(next != nil)
        await next?.release()
        await lease.release()
    }

    @Test func locksOfTwoSchemasAreTwoLocksAndBadNamesAreRefused() async throws {
        let first = try Self.lock("reconcile", schema: PostgresTestServer.freshSchema())
        let second = try Self.lock("reconcile", schema: PostgresTestServer.freshSchema())
        let lease = try #require(try await first.tryLock())
        let other = try await second.tryLock()
        #expect(other != nil)
        await other?.release()
        await lease.release()
        for name in ["", "a\0b", String(repeating: "x", count: 201)] {
            #expect { try Self.lock(name, schema: "iap") } throws: { ($0 as? IAPError)?.code == .invalidArgument }
        }
        let unreachable = try PostgresAdvisoryLock(
            name: "reconcile",
            configuration: .init(url: "postgresql://127.0.0.1:1/none?connect_timeout=2", schema: "iap")
        )
        await #expect { try await unreachable.tryLock() } throws: {
            ($0 as? IAPError)?.code == .storageUnavailable
        }
    }
}
