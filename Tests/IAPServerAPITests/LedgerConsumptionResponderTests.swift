import Foundation
import IAPCore
import IAPInMemory
import IAPServerAPI
import IAPTestSupport
import IAPTesting
import Testing

@Suite("LedgerConsumptionResponder: Apple's refund questions answered from the ledger")
struct LedgerConsumptionResponderTests {
    struct World {
        let shop: SimulatedShop
        let pipeline: DeliveryPipeline
        let clients: AppStoreServerAPIClients

        init() throws {
            shop = try SimulatedShop()
            pipeline = shop.pipeline()
            clients = AppStoreServerAPIClients(
                try SimulatedAppStoreTransport.connect(to: shop.appStore, wallClock: SystemClock()).client
            )
        }

        func processor(facts: @escaping LedgerConsumptionResponder.Facts) -> NotificationProcessor {
            NotificationProcessor(
                pipeline: pipeline,
                consumptionRequests: LedgerConsumptionResponder(
                    store: shop.ledger,
                    clients: clients,
                    clock: shop.clock,
                    facts: facts
                )
            )
        }

        func deliverNotifications(to processor: NotificationProcessor) async throws {
            for signed in await shop.appStore.drainNotifications() {
                let body = try JSONEncoder().encode(["signedPayload": signed])
                let response = await processor.handle(body: body)
                #expect(response.status == 200, "\(response.body)")
            }
        }
    }

    @Test func aConsentingCustomersRequestIsAnsweredWithWhatTheLedgerKnows() async throws {
        let world = try World()
        let bought = try await world.shop.buy("coins.100", user: "alice")
        let transactionId = try #require(bought.payload.transactionId)
        _ = await world.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        try await world.shop.appStore.requestConsumptionInformation(transactionId: transactionId)

        let processor = world.processor { context in
            #expect(context.entry?.userId == "alice")
            #expect(context.reason == .unintendedPurchase)
            #expect(context.lifetimeRefunded.isEmpty)
            return ConsumptionFacts(customerConsented: true, unitsUsed: 25, refundPreference: .decline)
        }
        try await world.deliverNotifications(to: processor)

        let answers = await world.shop.appStore.consumptionInformation(transactionId: transactionId)
        #expect(answers.count == 1)
        let answer = try #require(answers.first)
        #expect(answer.customerConsented)
        #expect(answer.deliveryStatus == .delivered)
        #expect(answer.consumptionPercentage == 25_000)  // 25 of the 100 units granted
        #expect(answer.refundPreference == .decline)
        #expect(!answer.sampleContentProvided)
    }

    @Test func withoutConsentNothingIsSent() async throws {
        let world = try World()
        let bought = try await world.shop.buy("pro.lifetime", user: "alice")
        let transactionId = try #require(bought.payload.transactionId)
        _ = await world.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        try await world.shop.appStore.requestConsumptionInformation(transactionId: transactionId)

        try await world.deliverNotifications(to: world.processor { _ in ConsumptionFacts(customerConsented: false) })
        #expect(await world.shop.appStore.consumptionInformation(transactionId: transactionId).isEmpty)
    }

    @Test func anUndeliveredPurchaseSaysSoAndPastTheWindowNothingIsSent() async throws {
        let world = try World()
        let bought = try await world.shop.buy("pro.lifetime", user: "alice")
        world.shop.wallet.failNext(1)
        _ = await world.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        let responder = LedgerConsumptionResponder(
            store: world.shop.ledger,
            clients: world.clients,
            clock: world.shop.clock
        ) { _ in ConsumptionFacts(customerConsented: true) }

        let answer = try await responder.respond(to: bought.payload, reason: .fulfillmentIssue, requestedAt: nil)
        #expect(answer.sent)
        #expect(answer.request.deliveryStatus == .undeliveredServerOutage)
        #expect(answer.request.consumptionPercentage == nil)

        let late = try await responder.respond(
            to: bought.payload,
            reason: .fulfillmentIssue,
            requestedAt: world.shop.clock.now.addingTimeInterval(-13 * 3_600)
        )
        #expect(!late.sent)
        #expect(late.notSentBecause?.contains("12-hour") == true)
    }

    @Test func aSubscriptionsShareIsTheElapsedPartOfItsPeriodAndTheLifetimeCountsRefunds() async throws {
        let world = try World()
        let coins = try await world.shop.buy("coins.100", user: "alice")
        _ = await world.pipeline.submit(signedTransaction: coins.signedTransaction, userId: "alice")
        try await world.shop.appStore.refund(transactionId: try #require(coins.payload.transactionId))
        _ = try await world.shop.deliverNotifications(to: world.pipeline)

        let plus = try await world.shop.buy("plus.monthly", user: "alice")
        _ = await world.pipeline.submit(signedTransaction: plus.signedTransaction, userId: "alice")
        let start = try #require(plus.payload.purchaseDate)
        let end = try #require(plus.payload.expiresDate)
        world.shop.clock.advance(by: .seconds(Int64(end.timeIntervalSince(start) / 2)))

        let responder = LedgerConsumptionResponder(
            store: world.shop.ledger,
            clients: world.clients,
            clock: world.shop.clock
        ) { context in
            #expect(context.lifetimePurchased.values.reduce(0, +) > 0)
            #expect(context.lifetimeRefunded.values.reduce(0, +) == coins.payload.price)
            return ConsumptionFacts(customerConsented: true)
        }
        let answer = try await responder.answer(for: plus.payload, reason: nil, requestedAt: nil)
        let share = try #require(answer.request.consumptionPercentage)
        #expect((49_000...51_000).contains(share))
    }
}
