import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTestSupport
import IAPTesting
import Testing

@Suite("App-level notifications and rescinded consent")
struct RescindConsentTests {
    final class Recorder: AppNotificationHandler {
        let seen = LockedValue<[String]>([])
        let failures = LockedValue(0)

        func handleAppNotification(_ notification: VerifiedNotification) async throws {
            if failures.withLock({ count in
                defer { count = max(0, count - 1) }
                return count > 0
            }) {
                throw IAPError(.internalError, "the receiver is down")
            }
            let type = notification.payload.notificationType?.rawValue ?? "?"
            seen.withLock { $0.append("\(type) \(notification.appTransaction?.appTransactionId ?? "-")") }
        }
    }

    struct Setup {
        let shop: SimulatedShop
        let pipeline: DeliveryPipeline
        let recorder = Recorder()
        let processor: NotificationProcessor

        init() throws {
            shop = try SimulatedShop()
            pipeline = shop.pipeline()
            processor = NotificationProcessor(pipeline: pipeline, appNotifications: recorder)
        }

        func post(_ signedPayload: String) async -> NotificationResponse {
            await processor.handle(body: Data(#"{"signedPayload":"\#(signedPayload)"}"#.utf8))
        }
    }

    @Test("RESCIND_CONSENT reaches the handler once: a failure is retried, a replay is a duplicate")
    func handlerOnce() async throws {
        let setup = try Setup()
        let bought = try await setup.shop.buy("pro.lifetime", user: "kid")
        _ = await setup.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "kid")
        _ = await setup.shop.appStore.drainNotifications()
        try await setup.shop.appStore.rescindConsent(account: "kid")
        let signed = try #require(await setup.shop.appStore.drainNotifications().first)

        setup.recorder.failures.withLock { $0 = 1 }
        let failed = await setup.post(signed)
        #expect(failed.status >= 500)
        #expect(await setup.post(signed).status == 200)
        let replay = await setup.post(signed)
        #expect(replay.body == #"{"outcome":"duplicate"}"#)
        let appTransactionId = try #require(bought.payload.appTransactionId)
        #expect(setup.recorder.seen.withLock { $0 } == ["RESCIND_CONSENT \(appTransactionId)"])
        // The processor alone changes nothing: the decision is the integrator's.
        #expect(try await setup.shop.snapshot("kid").hasEntitlement("pro"))
    }

    @Test("withdrawing consent takes back every purchase of the Apple Account, and it stays withdrawn")
    func withdraw() async throws {
        let setup = try Setup()
        let lifetime = try await setup.shop.buy("pro.lifetime", user: "kid")
        let monthly = try await setup.shop.buy("plus.monthly", user: "kid")
        let other = try await setup.shop.buy("pro.lifetime", user: "parent")
        for purchase in [lifetime, monthly] {
            _ = await setup.pipeline.submit(signedTransaction: purchase.signedTransaction, userId: "kid")
        }
        _ = await setup.pipeline.submit(signedTransaction: other.signedTransaction, userId: "parent")
        _ = await setup.shop.appStore.drainNotifications()
        let appTransactionId = try #require(lifetime.payload.appTransactionId)

        let outcomes = try await setup.pipeline.rescindConsent(appTransactionId: appTransactionId)
        #expect(outcomes.count == 2)
        let snapshot = try await setup.shop.snapshot("kid")
        #expect(!snapshot.hasEntitlement("pro"))
        #expect(!snapshot.hasEntitlement("plus"))
        #expect(try await setup.shop.snapshot("parent").hasEntitlement("pro"))
        let revoked = setup.shop.wallet.calls.filter { $0.action == .revoke }.map(\.transactionId)
        #expect(Set(revoked) == [lifetime.transactionId, monthly.transactionId])
        let entry = try #require(await setup.shop.ledger.entry(transactionId: lifetime.transactionId))
        #expect(entry.consentRescindedAt == setup.shop.clock.now)
        #expect(entry.revokedAt == setup.shop.clock.now)

        // Again: nothing more. A renewal of the subscription is recorded withdrawn, never granted.
        #expect(try await setup.pipeline.rescindConsent(appTransactionId: appTransactionId).isEmpty)
        try await setup.shop.appStore.advance(by: .seconds(32 * 86_400))
        _ = try await setup.shop.deliverNotifications(to: setup.pipeline)
        let renewals = await setup.shop.ledger.entries(originalTransactionId: monthly.transactionId)
            .filter { $0.transactionId != monthly.transactionId }
        #expect(renewals.count == 1)
        #expect(renewals.allSatisfy { $0.consentRescindedAt != nil && $0.deliveredAt == nil })
        #expect(
            !setup.shop.wallet.calls.contains {
                $0.action == .grant && $0.transactionId == renewals.first?.transactionId
            }
        )
        #expect(try await !setup.shop.snapshot("kid").hasEntitlement("plus"))

        // Newer signed data about a withdrawn purchase (not a refund) does not bring its access back.
        let resigned = try await setup.shop.appStore.transaction(id: lifetime.transactionId)
        _ = await setup.pipeline.deliver(resigned.payload, signedTransaction: resigned.signedTransaction, userId: nil)
        #expect(try await !setup.shop.snapshot("kid").hasEntitlement("pro"))
    }
}
