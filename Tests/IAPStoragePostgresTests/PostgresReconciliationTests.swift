import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPServerAPI
import IAPStoragePostgres
import IAPTestSupport
import IAPTesting
import Testing

/// The reconciler's whole-ledger walk over a PostgreSQL ledger: the family listing the walk needs, and a lost
/// order found and delivered once, even when two instances walk at the same time.
@Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
struct PostgresReconciliationTests {
    @Test func twoInstancesWalkingTheLedgerDeliverTheLostOrdersOnce() async throws {
        let clock = ManualClock(now: Date(millisecondsSince1970: 1_767_603_600_000))
        let catalog = try StaticProductCatalog(products: [
            CatalogProduct(productId: "coins.100", kind: .consumable, entitlements: [], unitsPerPurchase: 100),
            CatalogProduct(productId: "remove.ads", kind: .nonConsumable, entitlements: ["no-ads"]),
        ])
        let appStore = try SimulatedAppStore(products: catalog.products, clock: clock)
        let verifier = try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [appStore.pki.root],
                bundleId: appStore.configuration.bundleId,
                environment: appStore.configuration.environment
            )
        )
        let first = try await PostgresTestServer.store()
        let second = try await PostgresTestServer.store(schema: first.configuration.schema)
        let grants = LockedValue<[String: Int]>([:])
        let hook = ClosureFulfillmentHook(
            grant: { delivery in grants.withLock { $0[delivery.idempotencyKey, default: 0] += 1 } },
            revoke: { _ in }
        )
        let pipelines = [first, second].map {
            DeliveryPipeline(verifier: verifier, catalog: catalog, store: $0, hook: hook, clock: clock)
        }

        // Six customers: each buys Remove Ads, which reaches the server, then coins, which never do.
        var lost: Set<String> = []
        for index in 0..<6 {
            let user = "user-\(index)"
            let token = AppAccountToken.derive(from: user, namespace: UUID(uuid: UUID.namespaceBytes))
            let bought = try #require(
                try await appStore.purchase(productId: "remove.ads", account: user, appAccountToken: token).transaction
            )
            let outcome = await pipelines[0].submit(signedTransaction: bought.signedTransaction, userId: user)
            #expect(outcome.isDelivered)
            let coins = try #require(
                try await appStore.purchase(productId: "coins.100", account: user, appAccountToken: token).transaction
            )
            lost.insert(coins.transactionId)
        }

        let page = try await first.originalTransactionIds(cursor: nil, limit: 4)
        #expect(page.originalTransactionIds.count == 4)
        let rest = try await first.originalTransactionIds(cursor: page.nextCursor, limit: 4)
        #expect(rest.originalTransactionIds.count == 2)
        #expect(rest.nextCursor == nil)
        #expect(Set(page.originalTransactionIds + rest.originalTransactionIds).count == 6)
        await #expect(throws: IAPError.self) { try await first.originalTransactionIds(cursor: "v1:5", limit: 4) }

        let summaries = try await withThrowingTaskGroup(of: LedgerReconciliationSummary.self) { group in
            for index in 0..<2 {
                group.addTask {
                    let connection = try SimulatedAppStoreTransport.connect(to: appStore)
                    let reconciler = Reconciler(
                        client: connection.client,
                        pipeline: pipelines[index],
                        checkpoints: InMemoryReconciliationCheckpointStore(),
                        configuration: .init(requestsPerSecond: 0, ledgerPageSize: 2)
                    )
                    return try await reconciler.reconcileLedger()
                }
            }
            var all: [LedgerReconciliationSummary] = []
            for try await summary in group { all.append(summary) }
            return all
        }
        #expect(summaries.allSatisfy { $0.failedCustomers.isEmpty }, "\(summaries.map(\.failedCustomers))")
        // Each walk visits the six families it counted when it began; one that begins after the other walk recorded
        // a lost order (a new family) counts that one too.
        #expect(summaries.allSatisfy { (6...12).contains($0.families) }, "\(summaries.map(\.families))")
        // Between them the two walks found every lost order; each was granted exactly once.
        #expect(summaries.map(\.deliveredNow).reduce(0, +) <= 6)
        let granted = grants.withLock { $0 }
        for id in lost {
            #expect(granted[id] == 1, "\(id) granted \(granted[id] ?? 0) times")
            #expect(try await first.entry(transactionId: id)?.deliveryState == .delivered)
        }
        #expect(granted.values.allSatisfy { $0 == 1 })
        await first.close()
        await second.close()
    }
}

extension UUID {
    /// The bytes of the namespace the test derives appAccountTokens in.
    fileprivate static let namespaceBytes: uuid_t = (
        0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8
    )
}
