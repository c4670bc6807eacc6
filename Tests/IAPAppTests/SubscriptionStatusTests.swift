import Foundation
import IAPApp
import IAPCore
import IAPInMemory
import IAPTesting
import Testing

/// StoreKit's subscription status read into the package's model: renewal state, auto-renew, grace period, billing
/// retry, price increase consent.
@Suite("Subscription status")
struct SubscriptionStatusTests {
    @Test("a subscription's life maps to state, renewal, grace period, billing retry and price increase consent")
    func lifeOfASubscription() async throws {
        let shop = try OfferTests.Shop(gracePeriodDays: 16)
        let world = shop.world
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        #expect(try await app.subscriptionStatuses(groupId: "plus").isEmpty)
        await #expect(throws: IAPError(.invalidArgument)) { try await app.subscriptionStatuses(groupId: "") }

        guard case .delivered(let bought) = await app.purchase(productId: AppWorld.monthly, for: "alice") else {
            Issue.record("the subscription was not delivered")
            return
        }
        let original = bought.originalTransactionId
        var status = try #require(try await app.subscriptionStatuses(groupId: "plus").first)
        #expect(status.state == .active)
        #expect(status.isEntitled)
        #expect(status.willAutoRenew)
        #expect(status.productId == AppWorld.monthly)
        #expect(status.originalTransactionId == original)
        #expect(status.autoRenewProductId == AppWorld.monthly)
        #expect(status.renewalPrice == 9_990)
        #expect(status.currency == "USD")
        #expect(status.renewalDate == bought.expiresDate)
        #expect(!status.isInBillingRetry)
        #expect(status.gracePeriodExpiresDate == nil)
        #expect(status.priceIncreaseStatus == nil)
        #expect(!status.needsPriceIncreaseConsent)

        // A price increase that needs consent, then the consent.
        try await world.appStore.announcePriceIncrease(
            originalTransactionId: original,
            price: 12_990,
            needsConsent: true
        )
        status = try #require(try await app.subscriptionStatuses(groupId: "plus").first)
        #expect(status.priceIncreaseStatus == .customerHasNotResponded)
        #expect(status.needsPriceIncreaseConsent)
        #expect(status.renewalPrice == 12_990)
        try await world.appStore.consentToPriceIncrease(originalTransactionId: original)
        status = try #require(try await app.subscriptionStatuses(groupId: "plus").first)
        #expect(status.priceIncreaseStatus == .customerConsentedOrWasNotifiedWithoutNeedingConsent)
        #expect(!status.needsPriceIncreaseConsent)

        // Billing fails at the renewal: grace period (still entitled), then billing retry (not).
        try await world.appStore.setBillingFailure(originalTransactionId: original, failing: true)
        try await world.appStore.advance(by: .seconds(31 * 86_400))
        status = try #require(try await app.subscriptionStatuses(groupId: "plus").first)
        #expect(status.state == .billingGracePeriod)
        #expect(status.isEntitled)
        #expect(status.isInBillingRetry)
        let graceEnd = try #require(status.gracePeriodExpiresDate)
        #expect(graceEnd == bought.expiresDate.map { $0.addingTimeInterval(16 * 86_400) })
        try await world.appStore.advance(by: .seconds(17 * 86_400))
        status = try #require(try await app.subscriptionStatuses(groupId: "plus").first)
        #expect(status.state == .billingRetry)
        #expect(!status.isEntitled)
        #expect(status.gracePeriodExpiresDate == nil)

        // Billing is fixed: renewed at the new price, which the customer consented to.
        try await world.appStore.setBillingFailure(originalTransactionId: original, failing: false)
        status = try #require(try await app.subscriptionStatuses(groupId: "plus").first)
        #expect(status.state == .active)
        #expect(status.priceIncreaseStatus == nil)
        let renewedId = status.transactionId
        #expect(renewedId != bought.transactionId)
        try await eventually("the renewal is delivered") { try await world.isFinished(renewedId) }
        let renewal = try #require(try await app.latestTransaction(for: AppWorld.monthly))
        #expect(renewal.transactionId == renewedId)
        #expect(renewal.price == 12_990)
    }

    @Test("without consent to a price increase the subscription expires, and says why")
    func noConsentExpires() async throws {
        let shop = try OfferTests.Shop()
        let world = shop.world
        let app = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "alice"),
            outbox: InMemoryPurchaseOutboxStorage()
        )
        guard case .delivered(let bought) = await app.purchase(productId: AppWorld.monthly, for: "alice") else {
            Issue.record("the subscription was not delivered")
            return
        }
        try await world.appStore.announcePriceIncrease(
            originalTransactionId: bought.originalTransactionId,
            price: 12_990,
            needsConsent: true
        )
        try await world.appStore.advance(by: .seconds(31 * 86_400))
        let status = try #require(try await app.subscriptionStatuses(groupId: "plus").first)
        #expect(status.state == .expired)
        #expect(!status.isEntitled)
        #expect(!status.willAutoRenew)
        #expect(status.expirationIntent == .customerDidNotConsentToPriceIncrease)
    }

    @Test("the statuses of a family: the purchaser's and the shared copy, entitled ones first")
    func familyStatuses() async throws {
        let world = try AppWorld { $0.familyShareableProductIds = [AppWorld.monthly] }
        try await world.appStore.addFamilyMember("kid", toFamilyOf: "parent")
        let kid = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "kid"),
            outbox: InMemoryPurchaseOutboxStorage(),
            user: "kid"
        )
        _ = try await world.appStore.purchase(productId: AppWorld.monthly, account: "parent")
        let statuses = try await kid.subscriptionStatuses(groupId: "plus")
        #expect(statuses.count == 1)
        #expect(statuses.first?.isFamilyShared == true)
        #expect(statuses.first?.isEntitled == true)
    }

    @Test("the latest transaction and the current entitlements are read and merged into the history")
    func latestAndEntitlements() async throws {
        let world = try AppWorld()
        let app = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "alice"),
            outbox: InMemoryPurchaseOutboxStorage()
        )
        #expect(try await app.latestTransaction(for: AppWorld.premium) == nil)
        _ = await app.purchase(productId: AppWorld.premium, for: "alice")
        _ = await app.purchase(productId: AppWorld.monthly, for: "alice")
        _ = await app.purchase(productId: AppWorld.coins, for: "alice")
        let latest = try #require(try await app.latestTransaction(for: AppWorld.premium))
        #expect(latest.delivery == .delivered)
        #expect(latest.userId == "alice")
        let entitled = try await app.currentEntitlements()
        #expect(Set(entitled.map(\.productId)) == [AppWorld.premium, AppWorld.monthly])
        #expect(entitled.allSatisfy { $0.delivery == .delivered })
    }
}
