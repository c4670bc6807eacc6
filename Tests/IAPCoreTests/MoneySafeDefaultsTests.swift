import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTestSupport
import Testing

/// The money-safe defaults: a product the catalog does not know is parked, never guessed; one environment never
/// touches another's purchase; a prorated refund takes back its share; a purchase ahead of the clock is never expired.
@Suite("Money-safe defaults")
struct MoneySafeDefaultsTests {
    /// A transaction as the App Store signs it after a prorated refund of `percentage` thousandths of a percent:
    /// revoked at `date`, signed a second later (newer data than the purchase) unless `signedLater` is `false`.
    static func prorated(
        _ purchase: TransactionPayload,
        _ percentage: Int32,
        at date: Date,
        signedLater: Bool = true
    ) -> TransactionPayload {
        var refund = purchase
        refund.revocationDate = date
        refund.revocationType = .refundProrated
        refund.revocationPercentage = percentage
        if signedLater {
            refund.signedDate = date.addingTimeInterval(1)
        }
        return refund
    }

    // MARK: Unknown products

    @Test func aPurchaseOfAnUnknownProductIsParkedThenDeliveredOnceTheCatalogNamesIt() async throws {
        var shop = try Shop()
        let events = InMemoryEventSink()
        let catalog = ReloadableProductCatalog(shop.catalog)
        let pipeline = shop.pipeline(catalog: catalog, events: events)
        let purchase = shop.transaction("gems.50", quantity: 2)
        let outcome = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice")
        guard case .deferred(let parked, let error) = outcome else {
            Issue.record("expected the purchase to be parked, got \(outcome.name)")
            return
        }
        #expect(error.code == .unknownProduct)
        #expect(error.isRetryable)
        #expect(parked.deliveryState == .unknownProduct)
        #expect(!outcome.shouldFinishTransaction)
        #expect(shop.wallet.calls.isEmpty)
        #expect(events.events.map(\.event) == ["delivery.unknownProduct"])
        #expect(await shop.memory.statistics().unknownProduct == 1)
        // Never due for the retry queue, and a second submission changes nothing.
        shop.clock.advance(by: .seconds(86_400))
        #expect(await pipeline.drainDueRetries().delivered == 0)
        if case .deferred = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice") {
        } else {
            Issue.record("a resubmission of a parked purchase must stay deferred")
        }
        #expect(await pipeline.releaseParked().skipped == 1)
        #expect(shop.wallet.calls.isEmpty)

        // The catalog learns the product: the parked purchase is granted once, with the catalog's units.
        var products = shop.catalog.products
        products.append(CatalogProduct(productId: "gems.50", kind: .consumable, entitlements: [], unitsPerPurchase: 50))
        #expect(catalog.replace(with: try StaticProductCatalog(products: products)) == ["gems.50"])
        let released = await pipeline.releaseParked()
        #expect(released.delivered == 1)
        #expect(await pipeline.releaseParked().delivered == 0)
        #expect(shop.wallet.calls.map(\.action) == [.grant])
        #expect(shop.wallet.balance("alice") == 100)
        #expect(await shop.memory.statistics().unknownProduct == 0)
        let settled = try #require(await shop.memory.entry(transactionId: purchase.transactionId ?? ""))
        #expect(settled.deliveryState == .delivered)
    }

    @Test func aReleasedPurchaseIsClaimedInTheWriteThatUnparksItSoNoDrainTakesItFirst() async throws {
        var shop = try Shop()
        let catalog = ReloadableProductCatalog(shop.catalog)
        let pipeline = shop.pipeline(catalog: catalog)
        let purchase = shop.transaction("gems.50")
        guard case .deferred = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice") else {
            Issue.record("expected the purchase to be parked")
            return
        }
        var products = shop.catalog.products
        products.append(CatalogProduct(productId: "gems.50", kind: .consumable, entitlements: [], unitsPerPurchase: 50))
        catalog.replace(with: try StaticProductCatalog(products: products))
        // The release is cut off right after its first write: what that write left must already be claimed, or a
        // drain running meanwhile (the server's worker) would deliver it and the release would report nothing.
        shop.store.inject(.afterApplying, on: .replace)
        let released = await pipeline.releaseParked()
        #expect(released.delivered == 0)
        #expect(released.errors.count == 1)
        let left = try #require(await shop.memory.entry(transactionId: purchase.transactionId ?? ""))
        #expect(left.deliveryState == .pending)
        #expect((left.nextAttemptAt ?? shop.clock.now) > shop.clock.now)
        #expect(await pipeline.drainDueRetries().delivered == 0)
        #expect(shop.wallet.calls.isEmpty)
        // Once the claim of the cut-off release expires, the retry queue delivers it, once.
        shop.clock.advance(by: .seconds(3_600))
        #expect(await pipeline.drainDueRetries().delivered == 1)
        #expect(shop.wallet.calls.map(\.action) == [.grant])
        #expect(shop.wallet.balance("alice") == 50)
    }

    @Test func aProductDroppedFromTheCatalogParksItsRetryInsteadOfFailingAttempts() async throws {
        var shop = try Shop()
        let catalog = ReloadableProductCatalog(shop.catalog)
        let pipeline = shop.pipeline(catalog: catalog)
        shop.wallet.failNext(1)
        let purchase = shop.transaction("pro.lifetime")
        guard case .deferred = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice")
        else {
            Issue.record("the failed grant must be deferred")
            return
        }
        catalog.replace(
            with: try StaticProductCatalog(products: shop.catalog.products.filter { $0.kind != .nonConsumable })
        )
        shop.clock.advance(by: .seconds(3_600))
        #expect(await pipeline.drainDueRetries().deferred == 1)
        let entry = try #require(await shop.memory.entry(transactionId: purchase.transactionId ?? ""))
        #expect(entry.deliveryState == .unknownProduct)
        #expect(shop.wallet.calls.count == 1)
        catalog.replace(with: shop.catalog)
        #expect(await pipeline.releaseParked().delivered == 1)
        #expect(shop.wallet.applied.count == 1)
    }

    @Test func aNotificationOfAnUnknownProductIsRecordedAndAcknowledged() async throws {
        var shop = try Shop()
        let pipeline = shop.pipeline()
        let processor = NotificationProcessor(
            pipeline: pipeline
        )
        let token = UUID().uuidString.lowercased()
        _ = try await shop.memory.bind(appAccountToken: token, to: "alice")
        let notification = NotificationPayload(
            notificationType: .oneTimeCharge,
            notificationUUID: UUID().uuidString,
            data: NotificationData(
                environment: .sandbox,
                bundleId: Shop.bundleId,
                signedTransactionInfo: try shop.sign(shop.transaction("gems.50", token: token))
            ),
            version: "2.0",
            signedDate: shop.clock.now
        )
        let body = try JSONEncoder().encode(["signedPayload": try shop.signer.sign(notification)])
        #expect(await processor.handle(body: body).status == 200)
        #expect(try await shop.memory.parkedEntries(limit: 10).map(\.userId) == ["alice"])
        #expect(shop.wallet.calls.isEmpty)
    }

    // MARK: Environments

    @Test func aSandboxRefundOfAProductionIdChangesNothing() async throws {
        var shop = try Shop()
        let events = InMemoryEventSink()
        let pipeline = try DeliveryEnvironmentTests.pipeline(shop, events: events)
        let purchase = DeliveryEnvironmentTests.production(&shop, "pro.lifetime")
        let transactionId = try #require(purchase.transactionId)
        #expect(await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice").isDelivered)

        var refund = purchase
        refund.environment = .sandbox
        refund.revocationDate = shop.clock.now
        refund.revocationReason = .refundedForOtherReason
        refund.signedDate = shop.clock.now.addingTimeInterval(60)
        let stored = try #require(await shop.memory.entry(transactionId: transactionId))
        let applied = await pipeline.apply(refund) ?? .pending(stored)
        for outcome in [
            await pipeline.submit(signedTransaction: try shop.sign(refund), userId: nil),
            applied,
            await pipeline.deliver(refund, userId: "mallory"),
        ] {
            guard case .rejected(let error) = outcome else {
                Issue.record("a Sandbox refund of a Production id must be refused, got \(outcome.name)")
                continue
            }
            #expect(error.code == .environmentMismatch)
        }
        let entry = try #require(await shop.memory.entry(transactionId: transactionId))
        #expect(entry.environment == .production)
        #expect(entry.revokedAt == nil)
        #expect(entry.userId == "alice")
        #expect(shop.wallet.calls.map(\.action) == [.grant])
        #expect(events.events.filter { $0.event == "delivery.environmentConflict" }.count == 3)
    }

    @Test func aSandboxNotificationNeverTouchesAProductionSubscription() async throws {
        var shop = try Shop()
        let pipeline = try DeliveryEnvironmentTests.pipeline(shop)
        let processor = NotificationProcessor(pipeline: pipeline)
        let subscription = DeliveryEnvironmentTests.production(&shop, "plus.monthly")
        let original = try #require(subscription.originalTransactionId)
        #expect(await pipeline.submit(signedTransaction: try shop.sign(subscription), userId: "alice").isDelivered)

        var refund = subscription
        refund.environment = .sandbox
        refund.revocationDate = shop.clock.now
        refund.signedDate = shop.clock.now.addingTimeInterval(60)
        let renewal = RenewalInfoPayload(
            originalTransactionId: original,
            autoRenewProductId: "plus.monthly",
            productId: "plus.monthly",
            autoRenewStatus: .off,
            signedDate: shop.clock.now.addingTimeInterval(60),
            environment: .sandbox
        )
        let notification = NotificationPayload(
            notificationType: .refund,
            notificationUUID: UUID().uuidString,
            data: NotificationData(
                environment: .sandbox,
                bundleId: Shop.bundleId,
                signedTransactionInfo: try shop.sign(refund),
                signedRenewalInfo: try shop.signer.sign(renewal)
            ),
            version: "2.0",
            signedDate: shop.clock.now.addingTimeInterval(60)
        )
        let body = try JSONEncoder().encode(["signedPayload": try shop.signer.sign(notification)])
        let outcome = await processor.process(body: body)
        #expect(outcome.response.status == 200)
        #expect(outcome.error == nil)
        if case .processed(_, .rejected(let error)?) = outcome {
            #expect(error.code == .environmentMismatch)
        } else {
            Issue.record("expected the notification to be acknowledged with its effect refused")
        }
        let entry = try #require(await shop.memory.entry(transactionId: original))
        #expect(entry.revokedAt == nil)
        #expect(entry.environment == .production)
        #expect(await shop.memory.renewalInfo(originalTransactionId: original) == nil)
        #expect(shop.wallet.calls.map(\.action) == [.grant])
    }

    // MARK: Prorated refunds

    @Test(arguments: [(25_000 as Int32, 75 as Int64), (33_333, 67), (99_999, 1), (100_000, 0), (1, 100)])
    func aProratedRefundOfAConsumableTakesBackItsShareRoundedDown(percentage: Int32, left: Int64) async throws {
        var shop = try Shop()
        let pipeline = shop.pipeline()
        let purchase = shop.transaction("coins.100")
        #expect(await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice").isDelivered)
        let refund = Self.prorated(purchase, percentage, at: shop.clock.now)
        #expect(try #require(await pipeline.apply(refund)).isRevoked)
        let takeBack = try #require(shop.wallet.calls.last)
        #expect(takeBack.action == .revoke)
        #expect(takeBack.units == 100 - left)
        #expect(takeBack.transaction.revocationPercentage == percentage)
        #expect(shop.wallet.balance("alice") == left)

        let engine = EntitlementEngine(catalog: shop.catalog)
        let snapshot = try await engine.evaluate(userId: "alice", in: shop.memory, at: shop.clock.now).snapshot
        #expect(snapshot.balances["coins.100"]?.balance == left)
        let history = try #require(await shop.memory.entry(transactionId: purchase.transactionId ?? ""))
        #expect(OrderHistoryItem(history).revocationPercentage == percentage)
        #expect(OrderHistoryItem(history).state == (percentage < 100_000 ? .partlyRefunded : .revoked))
    }

    @Test func aProratedRefundBeforeTheGrantWasConfirmedGrantsFirstThenTakesBackTheShare() async throws {
        var shop = try Shop()
        let pipeline = shop.pipeline()
        // The grant fails; the refund of a quarter arrives while it waits for its retry.
        shop.wallet.failNext(1)
        let purchase = shop.transaction("coins.100")
        guard case .deferred = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice") else {
            Issue.record("the failed grant must be deferred")
            return
        }
        let refund = Self.prorated(purchase, 25_000, at: shop.clock.now)
        _ = await pipeline.apply(refund)
        shop.clock.advance(by: .seconds(3_600))
        _ = await pipeline.drainDueRetries()
        #expect(shop.wallet.applied.values.map(\.action).sorted { $0.rawValue < $1.rawValue } == [.grant, .revoke])
        #expect(shop.wallet.balance("alice") == 75)

        // First seen already partly refunded (the refund's notification before the app's submission): granted,
        // then its share taken back; a full refund first seen is recorded settled, granted nothing.
        let partly = Self.prorated(shop.transaction("coins.100"), 50_000, at: shop.clock.now, signedLater: false)
        #expect(await pipeline.deliver(partly, userId: "bob").isRevoked)
        #expect(shop.wallet.balance("bob") == 50)
        var full = shop.transaction("coins.100")
        full.revocationDate = shop.clock.now
        full.revocationType = .refundFull
        #expect(await pipeline.deliver(full, userId: "carol").isRevoked)
        #expect(shop.wallet.balance("carol") == 0)
        #expect(!shop.wallet.calls.contains { $0.userId == "carol" })
    }

    @Test func aSandboxRenewalOfAProductionSubscriptionIsRefused() async throws {
        var shop = try Shop()
        let events = InMemoryEventSink()
        let pipeline = try DeliveryEnvironmentTests.pipeline(shop, events: events)
        let subscription = DeliveryEnvironmentTests.production(&shop, "plus.monthly")
        let original = try #require(subscription.originalTransactionId)
        #expect(await pipeline.submit(signedTransaction: try shop.sign(subscription), userId: "alice").isDelivered)
        var renewal = shop.transaction("plus.monthly")
        renewal.originalTransactionId = original
        renewal.environment = .sandbox
        guard case .rejected(let error) = await pipeline.deliver(renewal, userId: nil) else {
            Issue.record("a Sandbox renewal of a Production subscription must be refused")
            return
        }
        #expect(error.code == .environmentMismatch)
        #expect(await shop.memory.entries(originalTransactionId: original).count == 1)

        // A renewal info of one environment never replaces one of another.
        let production = RenewalInfoPayload(
            originalTransactionId: "2999999999999999",
            autoRenewStatus: .on,
            signedDate: shop.clock.now,
            environment: .production
        )
        _ = try await shop.memory.storeRenewalInfo(production)
        var sandbox = production
        sandbox.environment = .sandbox
        sandbox.signedDate = shop.clock.now.addingTimeInterval(60)
        await #expect(throws: IAPError.self) { try await pipeline.checkEnvironment(of: sandbox) }
        #expect(events.events.filter { $0.event == "delivery.environmentConflict" }.count == 2)
    }

    @Test(arguments: [ProratedRefundPolicy.keepAccess, .revokeAccess])
    func aProratedRefundOfANonConsumableFollowsThePolicy(policy: ProratedRefundPolicy) async throws {
        var shop = try Shop()
        let pipeline = shop.pipeline(proratedRefunds: policy)
        let purchase = shop.transaction("pro.lifetime")
        #expect(await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice").isDelivered)
        let refund = Self.prorated(purchase, 40_000, at: shop.clock.now)
        _ = await pipeline.apply(refund)
        let takeBack = try #require(shop.wallet.calls.last)
        #expect(takeBack.action == .revoke)
        #expect(takeBack.accessKept == (policy == .keepAccess))
        #expect(takeBack.units == (policy == .keepAccess ? 0 : 1))
        #expect(shop.wallet.calls.count == 2)

        let engine = EntitlementEngine(catalog: shop.catalog, proratedRefunds: policy)
        let snapshot = try await engine.evaluate(userId: "alice", in: shop.memory, at: shop.clock.now).snapshot
        #expect(snapshot.entitlementIds.contains("pro") == (policy == .keepAccess))
        #expect(refund.isPartlyRefunded)
    }

    @Test(arguments: [ProratedRefundPolicy.keepAccess, .revokeAccess])
    func aProratedRefundIsDecidedOnceAndARestartUnderAnotherPolicyLeavesIt(policy: ProratedRefundPolicy) async throws {
        var shop = try Shop()
        let purchase = shop.transaction("pro.lifetime")
        let first = shop.pipeline(proratedRefunds: policy)
        #expect(await first.submit(signedTransaction: try shop.sign(purchase), userId: "alice").isDelivered)
        let refund = Self.prorated(purchase, 40_000, at: shop.clock.now)
        _ = await first.apply(refund)
        let purchaseId = try #require(purchase.transactionId)
        let decided = try #require(await shop.memory.entry(transactionId: purchaseId))
        #expect(decided.refundAccessKept == (policy == .keepAccess))
        let told = try #require(shop.wallet.calls.last)
        #expect(told.accessKept == decided.refundAccessKept)

        // The server restarts with the other policy: the refund keeps the outcome the fulfillment was told.
        let other: ProratedRefundPolicy = policy == .keepAccess ? .revokeAccess : .keepAccess
        let restarted = shop.pipeline(proratedRefunds: other)
        _ = await restarted.apply(refund)  // the same refund again (a notification retried, a reconciliation)
        _ = await restarted.drainDueRetries()
        #expect(shop.wallet.calls.count == 2, "nothing is called again: \(shop.wallet.calls.map(\.action))")
        let engine = EntitlementEngine(catalog: shop.catalog, proratedRefunds: other)
        let snapshot = try await engine.evaluate(userId: "alice", in: shop.memory, at: shop.clock.now).snapshot
        #expect(snapshot.entitlementIds.contains("pro") == (policy == .keepAccess))

        // A new refund is decided under the policy in force.
        let second = shop.transaction("pro.lifetime")
        #expect(await restarted.submit(signedTransaction: try shop.sign(second), userId: "bob").isDelivered)
        _ = await restarted.apply(Self.prorated(second, 10_000, at: shop.clock.now))
        let secondId = try #require(second.transactionId)
        let recorded = try #require(await shop.memory.entry(transactionId: secondId))
        #expect(recorded.refundAccessKept == (other == .keepAccess))
        #expect(try await LedgerInvariants.check(shop.memory).isEmpty)
    }

    @Test func aRefundRecordedBeforeDecisionsWereKeptFollowsThePolicyInForceAndIsCounted() async throws {
        var shop = try Shop()
        let pipeline = shop.pipeline(proratedRefunds: .revokeAccess)
        let purchase = shop.transaction("pro.lifetime")
        #expect(await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice").isDelivered)
        _ = await pipeline.apply(Self.prorated(purchase, 40_000, at: shop.clock.now))
        // As an earlier version wrote it: no decision kept.
        let purchaseId = try #require(purchase.transactionId)
        var legacy = try #require(await shop.memory.entry(transactionId: purchaseId))
        legacy.refundAccessKept = nil
        #expect(try await shop.memory.replace(legacy, ifRevision: legacy.revision))
        #expect(try await LedgerInvariants.undecidedProratedRefunds(shop.memory) == [purchase.transactionId])
        let keep = EntitlementEngine(catalog: shop.catalog, proratedRefunds: .keepAccess)
        let kept = try await keep.evaluate(userId: "alice", in: shop.memory, at: shop.clock.now).snapshot
        #expect(kept.entitlementIds.contains("pro"))
    }

    // MARK: Dates ahead of the clock

    @Test func aSeasonPassBoughtAheadOfTheClockIsNeverExpired() throws {
        var shop = try Shop()
        let catalog = try StaticProductCatalog(products: [
            CatalogProduct(
                productId: "season",
                kind: .nonRenewing,
                entitlements: ["season"],
                duration: SubscriptionPeriod(value: 90, unit: .day)
            )
        ])
        let engine = EntitlementEngine(catalog: catalog)
        func entry(purchasedAt date: Date) -> LedgerEntry {
            var transaction = shop.transaction("season")
            transaction.purchaseDate = date
            var entry = LedgerEntry(
                transaction: transaction,
                transactionId: transaction.transactionId ?? "",
                originalTransactionId: transaction.transactionId ?? "",
                userId: "alice",
                productId: "season",
                recordedAt: shop.clock.now
            )
            entry.deliveryState = .delivered
            entry.deliveredAt = shop.clock.now
            return entry
        }
        let now = shop.clock.now
        // A few seconds ahead: clock skew, access has begun.
        let skewed = engine.evaluate(
            entries: [entry(purchasedAt: now.addingTimeInterval(30))],
            renewalInfos: [],
            at: now
        )
        #expect(skewed.entitlements.first?.state == .active)
        #expect(skewed.entitlementIds == ["season"])
        // A day ahead: not started, never expired, and it ends 90 days after its start.
        let ahead = now.addingTimeInterval(86_400)
        let later = engine.evaluate(entries: [entry(purchasedAt: ahead)], renewalInfos: [], at: now)
        #expect(later.entitlements.first?.state == .notStarted)
        #expect(later.entitlements.first?.hasAccess == false)
        #expect(later.entitlements.first?.expiresDate == ahead.addingTimeInterval(90 * 86_400))
    }
}
