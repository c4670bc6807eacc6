import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTestSupport
import IAPTesting
import Testing

/// The product's promises, end to end: the simulated App Store sells and signs, the pipeline delivers,
/// the engine says what the user has.
@Suite("Scenarios with the simulated App Store")
struct SimulatedStoreScenarioTests {
    typealias World = SimulatedShop

    @Test func consumableAndNonConsumableAreDeliveredAndSurviveARestart() async throws {
        let world = try World()
        let coins = try await world.buy("coins.100", user: "alice")
        let pro = try await world.buy("pro.lifetime", user: "alice")
        for purchase in [coins, pro] {
            let outcome = await world.pipeline().submit(signedTransaction: purchase.signedTransaction, userId: "alice")
            #expect(outcome.isDelivered)
        }
        // The server restarts: a new pipeline over the same ledger; the app resubmits (it never heard back).
        for purchase in [coins, pro] {
            let outcome = await world.pipeline().submit(signedTransaction: purchase.signedTransaction, userId: "alice")
            #expect(outcome.isAlreadyDelivered)
        }
        let snapshot = try await world.snapshot("alice")
        #expect(snapshot.balances["coins.100"]?.balance == 100)
        #expect(snapshot.entitlementIds == ["pro"])
        #expect(world.wallet.calls.count == 2)
    }

    @Test func restoreShowsOnlyWhatWasBought() async throws {
        let world = try World()
        let pro = try await world.buy("pro.lifetime", user: "bob")
        _ = await world.pipeline().submit(signedTransaction: pro.signedTransaction, userId: "bob")
        let other = try await world.buy("plus.monthly", user: "carol")
        _ = await world.pipeline().submit(signedTransaction: other.signedTransaction, userId: "carol")

        let bob = try await world.snapshot("bob")
        #expect(bob.entitlementIds == ["pro"])
        #expect(bob.entitlement(subscriptionGroupId: "plus") == nil)
        #expect(bob.balances.isEmpty)
    }

    @Test func aFailedPurchaseGrantsNothingAndLosesNothing() async throws {
        let world = try World()
        await world.appStore.failNextPurchase(with: IAPError(.transportFailure, "the network went away"))
        let failed = try await world.appStore.purchase(productId: "coins.100", account: "dave")
        #expect(failed.transaction == nil)
        #expect(await world.ledger.statistics().transactions == 0)

        // The server is down when the purchase completes: the app keeps the transaction and tries later.
        let purchase = try await world.buy("coins.100", user: "dave")
        let outage = FaultInjectingEntitlementStore(wrapping: world.ledger)
        outage.inject(.beforeApplying, on: .insert)
        let down = DeliveryPipeline(
            verifier: world.verifier,
            catalog: world.catalog,
            store: outage,
            hook: world.wallet,
            clock: world.clock
        )
        let first = await down.submit(signedTransaction: purchase.signedTransaction, userId: "dave")
        #expect(!first.shouldFinishTransaction)
        #expect(world.wallet.calls.isEmpty)
        let later = await world.pipeline().submit(signedTransaction: purchase.signedTransaction, userId: "dave")
        #expect(later.isDelivered)
        #expect(world.wallet.balance("dave") == 100)
    }

    @Test func askToBuyGrantsNothingUntilApproved() async throws {
        let world = try World()
        let result = try await world.appStore.purchase(productId: "pro.lifetime", account: "kid", askToBuy: true)
        guard case .pending(let request) = result else {
            Issue.record("expected a pending Ask to Buy request, got \(result)")
            return
        }
        #expect(try await world.deliverNotifications(to: world.pipeline()).isEmpty)
        #expect(try await world.snapshot("kid").entitlementIds.isEmpty)

        let approved = try #require(try await world.appStore.approveAskToBuy(request).transaction)
        let outcome = await world.pipeline().submit(signedTransaction: approved.signedTransaction, userId: "kid")
        #expect(outcome.isDelivered)
        #expect(try await world.snapshot("kid").entitlementIds == ["pro"])
    }

    @Test func aRefundNotificationClawsBack() async throws {
        let world = try World()
        let coins = try await world.buy("coins.100", user: "erin")
        let pipeline = world.pipeline()
        _ = await pipeline.submit(signedTransaction: coins.signedTransaction, userId: "erin")
        _ = try await world.deliverNotifications(to: pipeline)
        #expect(world.wallet.balance("erin") == 100)

        world.clock.advance(by: .seconds(86_400))
        try await world.appStore.refund(transactionId: coins.payload.transactionId ?? "")
        let types = try await world.deliverNotifications(to: pipeline)
        #expect(types == [.refund])
        #expect(world.wallet.balance("erin") == 0)
        #expect(world.wallet.calls.filter { $0.action == .revoke }.count == 1)
        #expect(try await world.snapshot("erin").balances["coins.100"]?.balance == 0)

        // The same notification again (the App Store retries) changes nothing.
        _ = try await world.deliverNotifications(to: pipeline)
        #expect(world.wallet.calls.filter { $0.action == .revoke }.count == 1)
    }

    @Test func aSubscriptionThroughRenewalBillingFailureGraceAndRecovery() async throws {
        let world = try World()
        let pipeline = world.pipeline()
        let subscription = try await world.buy("plus.monthly", user: "frank")
        _ = await pipeline.submit(signedTransaction: subscription.signedTransaction, userId: "frank")
        _ = try await world.deliverNotifications(to: pipeline)
        #expect(try await world.snapshot("frank").entitlement(subscriptionGroupId: "plus")?.state == .active)

        try await world.appStore.advance(by: .seconds(31 * 86_400))
        #expect(try await world.deliverNotifications(to: pipeline) == [.didRenew])
        #expect(try await world.snapshot("frank").entitlement(subscriptionGroupId: "plus")?.state == .active)

        let original = subscription.payload.originalTransactionId ?? ""
        try await world.appStore.setBillingFailure(originalTransactionId: original, failing: true)
        try await world.appStore.advance(by: .seconds(31 * 86_400))
        #expect(try await world.deliverNotifications(to: pipeline).contains(.didFailToRenew))
        let grace = try #require(try await world.snapshot("frank").entitlement(subscriptionGroupId: "plus"))
        #expect(grace.state == .gracePeriod)
        #expect(grace.hasAccess)

        try await world.appStore.setBillingFailure(originalTransactionId: original, failing: false)
        #expect(try await world.deliverNotifications(to: pipeline).contains(.didRenew))
        let recovered = try #require(try await world.snapshot("frank").entitlement(subscriptionGroupId: "plus"))
        #expect(recovered.state == .active)
        #expect(world.wallet.calls.filter { $0.action == .grant }.count == 3)  // purchase, renewal, recovery
    }
}
