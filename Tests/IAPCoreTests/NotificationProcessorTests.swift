import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTestSupport
import IAPTesting
import Testing

@Suite("Notification processor")
struct NotificationProcessorTests {
    final class ConsumptionRecorder: ConsumptionRequestHandler {
        let requests = LockedValue<[String]>([])

        func handleConsumptionRequest(for transaction: TransactionPayload, reason: ConsumptionRequestReason?)
            async throws
        {
            requests.withLock { $0.append(transaction.transactionId ?? "") }
        }
    }

    struct Setup {
        let world: SimulatedShop
        let store: FaultInjectingEntitlementStore
        let pipeline: DeliveryPipeline
        let processor: NotificationProcessor
        let consumption = ConsumptionRecorder()

        init() throws {
            world = try SimulatedShop()
            store = FaultInjectingEntitlementStore(wrapping: world.ledger)
            pipeline = DeliveryPipeline(
                verifier: world.verifier,
                catalog: world.catalog,
                store: store,
                hook: world.wallet,
                clock: world.clock,
                retryPolicy: RetryPolicy(jitter: 0)
            )
            processor = NotificationProcessor(
                pipeline: pipeline,
                consumptionRequests: consumption
            )
        }

        func post(_ signedPayload: String) async -> NotificationResponse {
            await processor.handle(body: Data(#"{"signedPayload":"\#(signedPayload)"}"#.utf8))
        }

        func postAll() async -> [NotificationResponse] {
            var responses: [NotificationResponse] = []
            for signed in await world.appStore.drainNotifications() {
                responses.append(await post(signed))
            }
            return responses
        }
    }

    @Test func aPurchaseMadeElsewhereIsDeliveredAndARefundTakenBack() async throws {
        let setup = try Setup()
        let purchase = try await setup.world.buy("coins.100", user: "alice")
        _ = await setup.pipeline.submit(signedTransaction: purchase.signedTransaction, userId: "alice")
        #expect(await setup.postAll().map(\.status) == [200])

        try await setup.world.appStore.refund(transactionId: purchase.payload.transactionId ?? "")
        let refund = try #require(await setup.world.appStore.drainNotifications().first)
        let first = await setup.post(refund)
        #expect(first.status == 200)
        #expect(first.body == #"{"outcome":"processed"}"#)
        #expect(setup.world.wallet.balance("alice") == 0)

        let again = await setup.post(refund)  // the App Store retries a notification it thinks was lost
        #expect(again.status == 200)
        #expect(again.body == #"{"outcome":"duplicate"}"#)
        #expect(setup.world.wallet.calls.filter { $0.action == .revoke }.count == 1)
    }

    @Test func renewalsReachTheOwnerOfTheSubscription() async throws {
        let setup = try Setup()
        let subscription = try await setup.world.buy("plus.monthly", user: "bob")
        _ = await setup.pipeline.submit(signedTransaction: subscription.signedTransaction, userId: "bob")
        _ = await setup.postAll()
        try await setup.world.appStore.advance(by: .seconds(31 * 86_400))
        let responses = await setup.postAll()
        #expect(responses.map(\.status) == [200])
        let entries = try await setup.world.ledger.history(userId: "bob", cursor: nil, limit: 10).entries
        #expect(entries.count == 2)
        #expect(
            await setup.world.ledger.renewalInfo(
                originalTransactionId: subscription.payload.originalTransactionId ?? ""
            ) != nil
        )
    }

    @Test func anOutageMakesTheAppStoreRetryAndTheRetrySucceeds() async throws {
        let setup = try Setup()
        let purchase = try await setup.world.buy("pro.lifetime", user: "carol")
        let notification = try #require(await setup.world.appStore.drainNotifications().first)
        _ = await setup.pipeline.submit(signedTransaction: purchase.signedTransaction, userId: "carol")

        setup.store.inject(.beforeApplying, on: .isNotificationProcessed)
        let down = await setup.post(notification)
        #expect(down.status == 503)
        // The answer is neutral: the code and what to do, never the store's own message.
        let code = try #require(
            try JSONSerialization.jsonObject(with: Data(down.body.utf8)) as? [String: String]
        )["code"]
        #expect(
            down.body
                == #"{"code":"\#(code ?? "")","error":"the notification could not be recorded now; send it again"}"#
        )
        #expect(down.retryAfterSeconds == 5)
        #expect(await setup.world.ledger.isNotificationProcessed("x") == false)

        let retried = await setup.post(notification)
        #expect(retried.status == 200)
        #expect(setup.world.wallet.calls.count == 1)
    }

    @Test func badBodiesAndForgeriesAreRejectedWithoutEffect() async throws {
        let setup = try Setup()
        #expect(await setup.processor.handle(body: Data("not json".utf8)).status == 400)
        #expect(await setup.processor.handle(body: Data(#"{"other":1}"#.utf8)).status == 400)
        #expect(await setup.processor.handle(body: Data(repeating: 0x20, count: 600_000)).status == 400)
        #expect(await setup.post("a.b.c").status == 400)

        let forger = JWSSigner(key: try P256PrivateKey(), certificateChain: setup.world.appStore.pki.x5c)
        let forged = try forger.sign(
            NotificationPayload(
                notificationType: .refund,
                notificationUUID: UUID().uuidString,
                data: NotificationData(environment: .sandbox, bundleId: "com.example.app"),
                version: "2.0",
                signedDate: setup.world.clock.now
            )
        )
        let response = await setup.post(forged)
        #expect(response.status == 400)
        #expect(response.body == #"{"code":"signatureInvalid","error":"the notification did not verify"}"#)
        #expect(await setup.world.ledger.statistics().transactions == 0)
    }

    @Test func unknownTypesAndTestNotificationsAreAcknowledged() async throws {
        let setup = try Setup()
        _ = try await setup.world.appStore.requestTestNotification()
        #expect(await setup.postAll().map(\.status) == [200])

        let signer = JWSSigner(key: setup.world.appStore.pki.leafKey, certificateChain: setup.world.appStore.pki.x5c)
        let novel = try signer.sign(
            NotificationPayload(
                notificationType: NotificationType(rawValue: "SOMETHING_APPLE_ADDS_LATER"),
                notificationUUID: "5c1c2a3e-0000-4000-8000-000000000001",
                data: NotificationData(environment: .sandbox, bundleId: "com.example.app"),
                version: "2.0",
                signedDate: setup.world.clock.now
            )
        )
        let response = await setup.post(novel)
        #expect(response.status == 200)
        #expect(await setup.world.ledger.isNotificationProcessed("5c1c2a3e-0000-4000-8000-000000000001"))
    }

    @Test func consumptionRequestsReachTheHandler() async throws {
        let setup = try Setup()
        let purchase = try await setup.world.buy("coins.100", user: "dan")
        _ = await setup.pipeline.submit(signedTransaction: purchase.signedTransaction, userId: "dan")
        _ = await setup.postAll()
        let id = purchase.payload.transactionId ?? ""
        try await setup.world.appStore.requestConsumptionInformation(transactionId: id)
        #expect(await setup.postAll().map(\.status) == [200])
        #expect(setup.consumption.requests.withLock { $0 } == [id])
    }
}
