import Foundation
import IAPCore
import IAPCrypto
import IAPTestSupport
import IAPTesting
import Testing

/// Refunds, reversals and owners arriving at the worst moments.
@Suite("Delivery races")
struct DeliveryRaceTests {
    static func refunded(_ purchase: TransactionPayload, at date: Date) -> TransactionPayload {
        var refunded = purchase
        refunded.revocationDate = date
        refunded.signedDate = date
        return refunded
    }

    @Test func aRefundArrivingWhileTheGrantRunsIsTakenBack() async throws {
        var shop = try Shop()
        let purchase = shop.transaction("coins.100")
        let pipeline = shop.pipeline()
        let refund = Self.refunded(purchase, at: shop.clock.now.addingTimeInterval(1))
        shop.wallet.duringNextCall { _ = await pipeline.apply(refund) }

        let outcome = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice")
        #expect(outcome.isRevoked)
        #expect(shop.wallet.balance("alice") == 0)
        #expect(shop.wallet.calls.map(\.action) == [.grant, .revoke])
        let entry = try #require(await shop.memory.entry(transactionId: purchase.transactionId ?? ""))
        #expect(entry.deliveryState == .delivered)
        #expect(entry.revocationDelivered)
    }

    @Test func aReversalBeforeTheTakeBackRanCancelsItInsteadOfGrantingTwice() async throws {
        var shop = try Shop()
        let purchase = shop.transaction("coins.100")
        let pipeline = shop.pipeline()
        _ = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice")

        shop.wallet.failNext(1)  // the take-back fails and waits for its retry
        let refund = Self.refunded(purchase, at: shop.clock.now.addingTimeInterval(60))
        #expect(await pipeline.apply(refund)?.isDeferred == true)

        var reversal = purchase
        reversal.signedDate = shop.clock.now.addingTimeInterval(120)
        _ = await pipeline.apply(reversal)
        shop.clock.advance(by: .seconds(3_600))
        _ = await pipeline.drainDueRetries()

        #expect(shop.wallet.balance("alice") == 100)
        #expect(shop.wallet.calls.filter { $0.action == .grant }.count == 1)
    }

    @Test func aGrantInterruptedBeforeItWasRecordedIsStillTakenBackOnRefund() async throws {
        var shop = try Shop()
        let purchase = shop.transaction("coins.100")
        let store = shop.store
        shop.wallet.afterNextApply { store.inject(.beforeApplying, on: .replace, count: 20) }  // the process dies
        #expect(
            await shop.pipeline().submit(signedTransaction: try shop.sign(purchase), userId: "alice").isRejected
        )
        shop.wallet.clearAfterApply()
        shop.store.clearFaults()
        #expect(shop.wallet.balance("alice") == 100)  // the grant did land

        let refund = Self.refunded(purchase, at: shop.clock.now.addingTimeInterval(1))
        #expect(await shop.pipeline().apply(refund)?.isPending == true)  // the dead claim still holds
        shop.clock.advance(by: .seconds(121))
        #expect(await shop.pipeline().drainDueRetries().delivered == 1)

        #expect(shop.wallet.balance("alice") == 0)
        let revoke = try #require(shop.wallet.calls.last)
        #expect(revoke.action == .revoke)
        #expect(revoke.grantIdempotencyKey == purchase.transactionId)
    }

    @Test func aPurchaseTheAppStoreReportsFirstWaitsForItsOwner() async throws {
        var shop = try Shop()
        let token = AppAccountToken.derive(from: "alice", namespace: UUID()).uuidString
        let purchase = shop.transaction("pro.lifetime", token: token)
        let pipeline = shop.pipeline()

        let early = await pipeline.deliver(purchase, userId: nil)  // the notification
        guard case .awaitingOwner(let entry) = early else {
            Issue.record("expected awaitingOwner, got \(early)")
            return
        }
        #expect(entry.deliveryState == .awaitingOwner)
        #expect(shop.wallet.calls.isEmpty)
        #expect(await pipeline.drainDueRetries().delivered == 0)

        let submitted = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice")
        #expect(submitted.isDelivered)
        #expect(shop.wallet.calls.map(\.userId) == ["alice"])
        #expect(await shop.memory.user(forAppAccountToken: token.lowercased()) == "alice")
    }

    @Test func aRefundOfAPurchaseNobodyReportedIsKeptAndWinsOverTheOldCopy() async throws {
        var shop = try Shop()
        let purchase = shop.transaction("coins.100")  // no appAccountToken, never submitted
        let original = try shop.sign(purchase)
        let pipeline = shop.pipeline()

        let notified = await pipeline.deliver(
            Self.refunded(purchase, at: shop.clock.now.addingTimeInterval(60)),
            userId: nil
        )
        #expect(notified.isRevoked)

        // The app reports the purchase late, with the copy it got before the refund.
        let late = await pipeline.submit(signedTransaction: original, userId: "alice")
        #expect(late.isRevoked)
        #expect(late.shouldFinishTransaction)
        #expect(late.entry?.userId == "alice")
        #expect(shop.wallet.calls.isEmpty)
    }

    @Test func aRejectedReplayBindsNothing() async throws {
        var shop = try Shop()
        let token = UUID().uuidString
        let jws = try shop.sign(shop.transaction("pro.lifetime", token: token))
        let pipeline = shop.pipeline()
        #expect(await pipeline.submit(signedTransaction: jws, userId: "alice").isDelivered)
        #expect(await pipeline.submit(signedTransaction: jws, userId: "mallory").rejection?.code == .ownershipConflict)
        #expect(await shop.memory.user(forAppAccountToken: token.lowercased()) == "alice")

        // Mallory first, with a transaction that is not hers: rejected, and the token stays unbound.
        let other = UUID().uuidString
        let stolen = try shop.sign(shop.transaction("pro.lifetime", token: other))
        _ = await pipeline.submit(signedTransaction: stolen, userId: "bob")
        #expect(
            await pipeline.submit(signedTransaction: stolen, userId: "mallory").rejection?.code == .ownershipConflict
        )
        #expect(await shop.memory.user(forAppAccountToken: other.lowercased()) == "bob")
    }

    @Test func aRenewalBelongsToTheOwnerOfTheSubscription() async throws {
        var shop = try Shop()
        let first = shop.transaction("plus.monthly")
        let pipeline = shop.pipeline()
        _ = await pipeline.submit(signedTransaction: try shop.sign(first), userId: "alice")

        shop.clock.advance(by: .seconds(30 * 86_400))
        var renewal = shop.transaction("plus.monthly")
        renewal.originalTransactionId = first.originalTransactionId
        let signed = try shop.sign(renewal)
        guard case .rejected(let error) = await pipeline.submit(signedTransaction: signed, userId: "mallory") else {
            Issue.record("another user must not claim a renewal")
            return
        }
        #expect(error.code == .ownershipConflict)
        let notified = await pipeline.deliver(renewal, userId: nil)
        #expect(notified.isDelivered)
        #expect(notified.entry?.userId == "alice")
    }

    @Test func anEarlyResubmissionDoesNotSkipTheBackoff() async throws {
        var shop = try Shop()
        let jws = try shop.sign(shop.transaction("coins.100"))
        let pipeline = shop.pipeline()
        shop.wallet.failNext(5)
        _ = await pipeline.submit(signedTransaction: jws, userId: "alice")
        for _ in 0..<3 {
            #expect(await pipeline.submit(signedTransaction: jws, userId: "alice").isDeferred)
        }
        #expect(shop.wallet.calls.count == 1)
    }
}
