import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPStoragePostgres
import IAPTestSupport
import IAPTesting
import Testing

/// Several instances of a backend draining one PostgreSQL ledger's retry queue at once.
@Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
struct PostgresDeliveryDrainTests {
    @Test func instancesDrainingTogetherDeliverEachDueEntryOnce() async throws {
        let pki = try TestPKI.generate(
            TestPKI.Options(
                notBefore: Date(millisecondsSince1970: 1_704_067_200_000),
                notAfter: Date(millisecondsSince1970: 1_893_456_000_000)
            )
        )
        let verifier = try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [pki.root],
                bundleId: "com.example.app",
                environment: .production,
                appAppleId: 1_234_567_890
            )
        )
        let catalog = try StaticProductCatalog(products: [
            CatalogProduct(productId: "coins.100", kind: .consumable, entitlements: [], unitsPerPurchase: 100)
        ])
        let first = try await PostgresTestServer.store()
        let schema = first.configuration.schema
        // Purchases recorded by an instance that died before delivering them: pending, unclaimed, due.
        let ids = (0..<120).map { String(5_000_000 + $0) }
        for id in ids {
            _ = try await first.insert(PostgresEntitlementStoreTests.entry(id, user: "user-\(id.suffix(2))"))
        }

        let grants = LockedValue<[String: Int]>([:])
        let hook = ClosureFulfillmentHook(
            grant: { delivery in grants.withLock { $0[delivery.transactionId, default: 0] += 1 } },
            revoke: { _ in }
        )
        let clock = ManualClock(now: PostgresEntitlementStoreTests.epoch.addingTimeInterval(60))
        var instances: [DeliveryPipeline] = []
        var stores: [PostgresEntitlementStore] = [first]
        for index in 0..<3 {
            let store = index == 0 ? first : try await PostgresTestServer.store(schema: schema)
            if index > 0 {
                stores.append(store)
            }
            instances.append(
                DeliveryPipeline(verifier: verifier, catalog: catalog, store: store, hook: hook, clock: clock)
            )
        }
        let reports = await withTaskGroup(of: [DeliveryPipeline.DrainReport].self) { group in
            for pipeline in instances {
                group.addTask {
                    var reports: [DeliveryPipeline.DrainReport] = []
                    while true {
                        let report = await pipeline.drainDueRetries(limit: 10)
                        reports.append(report)
                        if report.delivered + report.deferred + report.skipped == 0 || !report.errors.isEmpty {
                            return reports
                        }
                    }
                }
            }
            var all: [DeliveryPipeline.DrainReport] = []
            for await reports in group {
                all += reports
            }
            return all
        }
        #expect(reports.allSatisfy { $0.errors.isEmpty }, "\(reports.flatMap(\.errors))")
        #expect(reports.map(\.delivered).reduce(0, +) == ids.count)
        let granted = grants.withLock { $0 }
        #expect(granted.count == ids.count)
        #expect(granted.values.allSatisfy { $0 == 1 }, "granted twice: \(granted.filter { $0.value > 1 })")
        #expect(try await first.statistics().delivered == ids.count)
        #expect(try await first.dueDeliveries(at: clock.now, limit: 10).isEmpty)
        for store in stores.dropFirst() {
            await store.close()
        }
        try await first.dropSchema()
    }
}
