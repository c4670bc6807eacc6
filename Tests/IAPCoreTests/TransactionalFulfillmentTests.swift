import Foundation
import IAPCore
import IAPInMemory
import IAPTestSupport
import Testing

/// The delivery pipeline over a ledger that grants in its own writes: the wallet (which keeps no idempotency keys)
/// and the ledger change together or not at all.
@Suite("Transactional fulfillment")
struct TransactionalFulfillmentTests {
    static func pipeline(
        _ shop: Shop,
        _ ledger: InMemoryTransactionalFulfillmentStore,
        retryPolicy: RetryPolicy = RetryPolicy(jitter: 0)
    ) -> DeliveryPipeline {
        DeliveryPipeline(
            verifier: shop.verifier,
            catalog: shop.catalog,
            store: ledger,
            clock: shop.clock,
            retryPolicy: retryPolicy
        )
    }

    @Test func aPurchaseIsRecordedAndGrantedInOneWriteAndNeverAgain() async throws {
        var shop = try Shop()
        let ledger = InMemoryTransactionalFulfillmentStore()
        let purchase = shop.transaction("coins.100", quantity: 3)
        let jws = try shop.sign(purchase)
        let pipeline = Self.pipeline(shop, ledger)

        let first = await pipeline.submit(signedTransaction: jws, userId: "alice")
        #expect(first.isDelivered)
        #expect(ledger.balance("alice") == 300)
        let entry = try #require(await ledger.store.entry(transactionId: purchase.transactionId ?? ""))
        #expect(entry.deliveryState == .delivered)
        #expect(entry.revision == 1)  // inserted delivered: no claim, no mark
        #expect(entry.grantedUnits == 300)

        #expect(await pipeline.submit(signedTransaction: jws, userId: "alice").isAlreadyDelivered)
        #expect(await Self.pipeline(shop, ledger).submit(signedTransaction: jws, userId: "alice").isAlreadyDelivered)
        #expect(ledger.attempts.count == 1)
        #expect(ledger.balance("alice") == 300)
    }

    @Test func aFailedGrantWritesNothingAndIsRetriedToSuccess() async throws {
        var shop = try Shop()
        let ledger = InMemoryTransactionalFulfillmentStore()
        let purchase = shop.transaction("coins.100")
        let pipeline = Self.pipeline(shop, ledger)
        ledger.failNext(1)

        let outcome = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice")
        guard case .deferred(let entry, let error) = outcome else {
            Issue.record("expected deferred, got \(outcome)")
            return
        }
        #expect(error.code == .fulfillmentFailed)
        #expect(entry.deliveryState == .retrying)
        #expect(entry.deliveryAttempts == 1)
        #expect(!entry.grantAttempted)  // rolled back: nothing was given
        #expect(entry.nextAttemptAt == shop.clock.now.addingTimeInterval(30))
        #expect(ledger.balance("alice") == 0)

        #expect(await pipeline.drainDueRetries().delivered == 0)
        shop.clock.advance(by: .seconds(30))
        #expect(await pipeline.drainDueRetries().delivered == 1)
        #expect(ledger.balance("alice") == 100)
        #expect(ledger.committed.count == 1)
        let delivered = try #require(await ledger.store.entry(transactionId: purchase.transactionId ?? ""))
        #expect(delivered.deliveryState == .delivered && delivered.deliveryAttempts == 0 && delivered.lastError == nil)
    }

    @Test func aGrantThatKeepsFailingIsDeadLetteredWithNothingGiven() async throws {
        var shop = try Shop()
        let ledger = InMemoryTransactionalFulfillmentStore()
        let jws = try shop.sign(shop.transaction("pro.lifetime"))
        let pipeline = Self.pipeline(shop, ledger, retryPolicy: RetryPolicy(maximumAttempts: 3, jitter: 0))
        ledger.failNext(100)

        _ = await pipeline.submit(signedTransaction: jws, userId: "alice")
        for _ in 0..<5 {
            shop.clock.advance(by: .seconds(3_600))
            _ = await pipeline.drainDueRetries()
        }
        guard case .deferred(let entry, _) = await pipeline.submit(signedTransaction: jws, userId: "alice") else {
            Issue.record("expected the dead letter")
            return
        }
        #expect(entry.deliveryState == .deadLettered)
        #expect(entry.deliveryAttempts == 3)
        #expect(ledger.attempts.count == 3)
        #expect(ledger.committed.isEmpty)
    }

    @Test func oneTransactionSubmittedFiveHundredTimesAtOnceGrantsOnce() async throws {
        var shop = try Shop()
        let ledger = InMemoryTransactionalFulfillmentStore()
        let jws = try shop.sign(shop.transaction("coins.100"))
        let pipelines = (0..<3).map { _ in Self.pipeline(shop, ledger) }
        let outcomes = await withTaskGroup(of: DeliveryOutcome.self) { group in
            for index in 0..<500 {
                group.addTask { await pipelines[index % 3].submit(signedTransaction: jws, userId: "alice") }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter(\.isDelivered).count == 1)
        #expect(outcomes.allSatisfy { $0.isDelivered || $0.isAlreadyDelivered })
        #expect(ledger.committed.count == 1)
        #expect(ledger.balance("alice") == 100)
    }

    @Test func pipelinesDrainingOneLedgerTogetherGrantEachEntryOnce() async throws {
        var shop = try Shop()
        let ledger = InMemoryTransactionalFulfillmentStore()
        // Purchases recorded by an instance that stopped before granting them: pending, unclaimed, due.
        var ids: [String] = []
        for index in 0..<60 {
            let purchase = shop.transaction("coins.100")
            let id = purchase.transactionId ?? ""
            ids.append(id)
            _ = try await ledger.insert(
                LedgerEntry(
                    transaction: purchase,
                    transactionId: id,
                    originalTransactionId: id,
                    userId: "user-\(index % 6)",
                    productId: "coins.100",
                    recordedAt: shop.clock.now
                )
            )
        }
        let pipelines = (0..<3).map { _ in Self.pipeline(shop, ledger) }
        let delivered = await withTaskGroup(of: Int.self) { group in
            for pipeline in pipelines {
                group.addTask {
                    var delivered = 0
                    while true {
                        let report = await pipeline.drainDueRetries(limit: 7)
                        delivered += report.delivered
                        if report.delivered + report.deferred + report.skipped == 0 || !report.errors.isEmpty {
                            return delivered
                        }
                    }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(delivered == ids.count)
        #expect(ledger.committed.count == ids.count)
        #expect(Set(ledger.committed.map(\.transactionId)) == Set(ids))
        #expect((0..<6).allSatisfy { ledger.balance("user-\($0)") == 1_000 })
    }

    @Test func aRefundTakesBackOnceAndAReversalGrantsAgain() async throws {
        var shop = try Shop()
        let ledger = InMemoryTransactionalFulfillmentStore()
        let purchase = shop.transaction("coins.100")
        let pipeline = Self.pipeline(shop, ledger)
        _ = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice")

        shop.clock.advance(by: .seconds(3_600))
        var refunded = purchase
        refunded.revocationDate = shop.clock.now
        refunded.signedDate = shop.clock.now
        #expect(await pipeline.apply(refunded)?.isRevoked == true)
        #expect(await pipeline.apply(refunded)?.isRevoked == true)
        #expect(ledger.balance("alice") == 0)
        #expect(ledger.committed.map(\.action) == [.grant, .revoke])

        shop.clock.advance(by: .seconds(3_600))
        var reversed = purchase
        reversed.signedDate = shop.clock.now
        #expect(await pipeline.apply(reversed)?.isDelivered == true)
        #expect(ledger.balance("alice") == 100)
        #expect(ledger.committed.map(\.action) == [.grant, .revoke, .grant])
    }

    @Test func aRefundOfAPurchaseNeverGrantedTakesNothingBack() async throws {
        var shop = try Shop()
        let ledger = InMemoryTransactionalFulfillmentStore()
        let purchase = shop.transaction("coins.100")
        let pipeline = Self.pipeline(shop, ledger)
        ledger.failNext(1)
        #expect(await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice").isDeferred)

        shop.clock.advance(by: .seconds(10))
        var refunded = purchase
        refunded.revocationDate = shop.clock.now
        refunded.signedDate = shop.clock.now
        #expect(await pipeline.apply(refunded)?.isRevoked == true)
        shop.clock.advance(by: .seconds(3_600))
        _ = await pipeline.drainDueRetries()
        #expect(ledger.committed.isEmpty)
        #expect(ledger.balance("alice") == 0)
        let entry = try #require(await ledger.store.entry(transactionId: purchase.transactionId ?? ""))
        #expect(entry.deliveryState == .delivered && entry.revocationDelivered)
    }

    @Test func anEntryClaimedByAHookDelivererIsLeftToItUntilTheClaimExpires() async throws {
        var shop = try Shop()
        let ledger = InMemoryTransactionalFulfillmentStore()
        let purchase = shop.transaction("coins.100")
        let id = purchase.transactionId ?? ""
        var claimed = LedgerEntry(
            transaction: purchase,
            transactionId: id,
            originalTransactionId: id,
            userId: "alice",
            productId: "coins.100",
            recordedAt: shop.clock.now
        )
        claimed.nextAttemptAt = shop.clock.now.addingTimeInterval(120)
        claimed.deliveryAttempts = 1
        claimed.grantAttempted = true
        _ = try await ledger.insert(claimed)
        let pipeline = Self.pipeline(shop, ledger)

        #expect(await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice").isPending)
        #expect(await pipeline.drainDueRetries().delivered == 0)
        #expect(ledger.attempts.isEmpty)
        shop.clock.advance(by: .seconds(120))
        #expect(await pipeline.drainDueRetries().delivered == 1)
        #expect(ledger.balance("alice") == 100)
    }

    @Test func aNewAppAccountTokenIsBoundBeforeTheGrant() async throws {
        var shop = try Shop()
        let ledger = InMemoryTransactionalFulfillmentStore()
        let token = UUID().uuidString.lowercased()
        let pipeline = Self.pipeline(shop, ledger)
        let first = try shop.sign(shop.transaction("coins.100", token: token))
        #expect(await pipeline.submit(signedTransaction: first, userId: "alice").isDelivered)
        #expect(try await ledger.user(forAppAccountToken: token) == "alice")
        // The token is bound now: the next purchase with it is recorded and granted in one write.
        let second = shop.transaction("coins.100", token: token)
        #expect(await pipeline.submit(signedTransaction: try shop.sign(second), userId: nil).isDelivered)
        #expect(try await ledger.entry(transactionId: second.transactionId ?? "")?.revision == 1)
        #expect(ledger.balance("alice") == 200)
        #expect(await pipeline.submit(signedTransaction: first, userId: "bob").isRejected)
        #expect(ledger.committed.count == 2)
    }
}
