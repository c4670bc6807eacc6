import Foundation
import IAPApp
import IAPCore
import IAPInMemory
import IAPTesting
import Testing

/// What a paywall shows, from the store: the price as a number and its currency, the period, the offers, the
/// introductory offer's eligibility, and the terms in words (AppIntegration.md, "A compliant paywall").
@Suite("Paywall")
struct PaywallTests {
    static func world() throws -> AppWorld {
        try AppWorld { configuration in
            configuration.prices = [AppWorld.monthly: 9_990]
            configuration.subscriptionOffers = [
                SimulatedSubscriptionOffer(
                    id: "trial",
                    productId: AppWorld.monthly,
                    kind: .introductory,
                    discountType: .freeTrial,
                    price: 0,
                    period: SubscriptionPeriod(value: 1, unit: .week)
                ),
                SimulatedSubscriptionOffer(
                    id: "comeback",
                    productId: AppWorld.monthly,
                    kind: .promotional,
                    discountType: .payAsYouGo,
                    price: 4_990,
                    periodCount: 3
                ),
                SimulatedSubscriptionOffer(
                    id: "welcome-back",
                    productId: AppWorld.monthly,
                    kind: .winBack,
                    discountType: .payUpFront,
                    price: 19_990,
                    period: SubscriptionPeriod(value: 3, unit: .month)
                ),
            ]
        }
    }

    @Test("a newcomer reads \"1 week free, then $9.99/month\"; a former subscriber the price alone")
    func terms() async throws {
        let world = try Self.world()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        let lookup = try await app.products([AppWorld.monthly, AppWorld.coins])
        let monthly = try #require(lookup.products.first { $0.id == AppWorld.monthly })
        #expect(monthly.subscriptionTerms == "1 week free, then $9.99/month")
        #expect(monthly.price == Decimal(string: "9.99"))
        #expect(monthly.currencyCode == "USD")
        #expect(monthly.displayPrice == "$9.99")
        #expect(monthly.subscriptionPeriod == SubscriptionPeriod(value: 1, unit: .month))
        #expect(monthly.isEligibleForIntroOffer == true)
        let trial = try #require(monthly.introductoryOffer)
        #expect(trial.paymentMode == .freeTrial)
        #expect(trial.period == SubscriptionPeriod(value: 1, unit: .week))
        #expect(trial.periodCount == 1)
        #expect(trial.id == nil)
        #expect(monthly.promotionalOffers.map(\.id) == ["comeback"])
        #expect(monthly.promotionalOffers.first?.price == Decimal(string: "4.99"))
        #expect(monthly.winBackOffers.map(\.paymentMode) == [.payUpFront])
        let coins = try #require(lookup.products.first { $0.id == AppWorld.coins })
        #expect(coins.subscriptionTerms == coins.displayPrice)
        #expect(coins.subscriptionPeriod == nil)

        // Subscribed once: no trial any more, and the paywall says so (a fresh device: no cached products).
        _ = await app.purchase(productId: AppWorld.monthly, for: "alice")
        let later = SimulatedStoreClient(store: world.appStore, account: "alice")
        let product = try #require(try await later.products(for: [AppWorld.monthly]).first)
        #expect(product.isEligibleForIntroOffer == false)
        #expect(product.subscriptionTerms == "$9.99/month")

        var promoted = product
        promoted.isEligibleForIntroOffer = true
        promoted.introductoryOffer = product.promotionalOffers.first
        #expect(promoted.subscriptionTerms == "$4.99/month for 3 months, then $9.99/month")
        promoted.introductoryOffer = product.winBackOffers.first
        #expect(promoted.subscriptionTerms == "$19.99 for 3 months, then $9.99/month")
    }

    @Test("a product saved by an older version, without the paywall fields, still decodes")
    func olderProductsDecode() throws {
        let json = #"{"id":"coins.100","displayName":"Coins","displayPrice":"$0.99","type":"Consumable"}"#
        let product = try JSONDecoder().decode(StoreProduct.self, from: Data(json.utf8))
        #expect(product.promotionalOffers.isEmpty)
        #expect(product.price == nil)
    }

    @Test("a purchase started on the App Store reaches the app and completes through the outbox, win-back offer too")
    func appStoreStartedPurchases() async throws {
        let world = try Self.world()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        var intents = app.appStorePurchaseIntents().makeAsyncIterator()

        await phone.startPurchaseOnAppStore(productId: AppWorld.premium)
        let promoted = try #require(await intents.next())
        #expect(promoted == AppStorePurchaseIntent(productId: AppWorld.premium))
        guard case .delivered(let item) = await app.purchase(promoted, for: "alice") else {
            Issue.record("the promoted purchase was not delivered")
            return
        }
        #expect(item.productId == AppWorld.premium)
        #expect(world.submissions.contains { $0.userId == "alice" })

        // A lapsed subscriber redeems a win-back offer on the App Store.
        guard case .delivered(let first) = await app.purchase(productId: AppWorld.monthly, for: "alice") else {
            Issue.record("the subscription was not delivered")
            return
        }
        try await world.appStore.setAutoRenew(originalTransactionId: first.originalTransactionId, enabled: false)
        try await world.appStore.advance(by: .seconds(40 * 86_400))
        await phone.startPurchaseOnAppStore(productId: AppWorld.monthly, offerId: "welcome-back")
        let winBack = try #require(await intents.next())
        guard case .delivered(let back) = await app.purchase(winBack, for: "alice") else {
            Issue.record("the win-back purchase was not delivered")
            return
        }
        #expect(back.offerId == "welcome-back")
        #expect(back.offerType == .winBackOffer)
    }

    @Test("with payments turned off the paywall knows before the customer taps, and a purchase is refused")
    func paymentsTurnedOff() async throws {
        let world = try Self.world()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        #expect(await app.canMakePayments())
        await phone.setPaymentsAllowed(false)
        #expect(await !app.canMakePayments())
        let result = await app.purchase(productId: AppWorld.premium, for: "alice")
        #expect(result == .failed(IAPError(.purchaseNotAllowed)))
        #expect(try await world.appStore.transactions(ofAccount: "alice").isEmpty)
    }
}
