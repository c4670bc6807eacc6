import Foundation
import IAPCore
import IAPConformance
import IAPStoragePostgres
import IAPTestSupport
import IAPTesting
import Testing

@Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
struct PostgresEntitlementStoreConformanceTests {
    /// The stores a suite run made: the previous one is closed when the next check starts, and every schema is
    /// dropped at the end.
    final class Opened: Sendable {
        let stores = LockedValue<[PostgresEntitlementStore]>([])

        func make(poolSize: Int, groupCommit: PostgresGroupCommit? = PostgresGroupCommit()) async throws
            -> PostgresEntitlementStore
        {
            let store = try await PostgresTestServer.store(poolSize: poolSize, groupCommit: groupCommit)
            let previous = stores.withLock { stores in
                defer { stores.append(store) }
                return stores.last
            }
            await previous?.close()
            return store
        }

        func dropAll() async throws {
            for store in stores.withLock({ $0 }) {
                let reopened = try await PostgresTestServer.store(schema: store.configuration.schema)
                try await reopened.dropSchema()
            }
        }
    }

    @Test func passesTheConformanceSuite() async throws {
        let opened = Opened()
        let report = await EntitlementStoreConformance { try await opened.make(poolSize: 4) }.run()
        try await opened.dropAll()
        #expect(report.failures.isEmpty, "\(report)")
        #expect(report.passed.count == EntitlementStoreConformance.checkNames.count)
    }

    @Test func passesTheConformanceSuiteWithACommitForEachWrite() async throws {
        // Group commit off: every insert and compare-and-set commits on its own.
        let opened = Opened()
        let report = await EntitlementStoreConformance { try await opened.make(poolSize: 4, groupCommit: nil) }.run()
        try await opened.dropAll()
        #expect(report.failures.isEmpty, "\(report)")
        #expect(report.passed.count == EntitlementStoreConformance.checkNames.count)
    }

    @Test func passesTheConformanceSuiteOnASingleConnection() async throws {
        // Hundreds of concurrent calls queue for the one connection instead of failing.
        let opened = Opened()
        let report = await EntitlementStoreConformance { try await opened.make(poolSize: 1) }.run()
        try await opened.dropAll()
        #expect(report.failures.isEmpty, "\(report)")
    }
}
