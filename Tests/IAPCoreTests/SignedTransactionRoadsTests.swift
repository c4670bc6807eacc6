import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTestSupport
import IAPTesting
import Testing

/// Every road into the pipeline hands the ledger the signed JWS it verified, so that the ledger can be verified
/// again: the ledger keeps the one of the data it recorded, and the newer one when newer data replaces it.
@Suite("Signed transactions on every road into the ledger")
struct SignedTransactionRoadsTests {
    @Test func aSubmittedPurchaseKeepsTheJWSTheAppSent() async throws {
        let world = try SimulatedShop()
        let pipeline = world.pipeline()
        let purchase = try await world.buy("coins.100", user: "alice")
        let outcome = await pipeline.submit(signedTransaction: purchase.signedTransaction, userId: "alice")
        #expect(outcome.shouldFinishTransaction, "\(outcome)")
        #expect(
            await world.ledger.signedTransaction(transactionId: purchase.transactionId) == purchase.signedTransaction
        )

        // The same data again (the app retries) keeps what was recorded.
        let again = try world.verifier.transaction(purchase.signedTransaction)
        _ = await pipeline.deliver(again, signedTransaction: nil, userId: nil)
        #expect(
            await world.ledger.signedTransaction(transactionId: purchase.transactionId) == purchase.signedTransaction
        )
    }

    @Test func aNotificationKeepsItsSignedTransactionInfoAndARefundReplacesIt() async throws {
        let world = try SimulatedShop()
        let pipeline = world.pipeline()
        let processor = NotificationProcessor(pipeline: pipeline)
        let purchase = try await world.buy("pro.lifetime", user: "alice")
        _ = await pipeline.submit(signedTransaction: purchase.signedTransaction, userId: "alice")
        _ = await world.appStore.drainNotifications()

        try await world.appStore.refund(transactionId: purchase.transactionId)
        let refund = try #require(await world.appStore.drainNotifications().first)
        let signedInfo = try #require(try world.verifier.notification(refund).payload.data?.signedTransactionInfo)
        #expect(signedInfo != purchase.signedTransaction)
        guard case .processed = await processor.process(signedPayload: refund) else {
            Issue.record("the refund notification was not processed")
            return
        }
        let kept = try #require(await world.ledger.signedTransaction(transactionId: purchase.transactionId))
        #expect(kept == signedInfo)
        // What is kept verifies to what is recorded: the refund.
        let entry = try #require(await world.ledger.entry(transactionId: purchase.transactionId))
        #expect(try world.verifier.transaction(kept) == entry.transaction)
        #expect(entry.transaction.revocationDate != nil)
    }

    @Test func aPurchaseFirstHeardOfInANotificationKeepsItsJWS() async throws {
        let world = try SimulatedShop()
        let purchase = try await world.buy("coins.100", user: "alice")
        #expect(try await world.deliverNotifications(to: world.pipeline()) == [.oneTimeCharge])
        let kept = try #require(await world.ledger.signedTransaction(transactionId: purchase.transactionId))
        let entry = try #require(await world.ledger.entry(transactionId: purchase.transactionId))
        #expect(try world.verifier.transaction(kept) == entry.transaction)
    }

    @Test func newerDataWithoutItsJWSRemovesTheStaleOne() async throws {
        let world = try SimulatedShop()
        let pipeline = world.pipeline()
        let purchase = try await world.buy("pro.lifetime", user: "alice")
        _ = await pipeline.submit(signedTransaction: purchase.signedTransaction, userId: "alice")
        var refunded = purchase.payload
        refunded.revocationDate = world.clock.now
        refunded.revocationReason = .refundedForOtherReason
        refunded.signedDate = world.clock.now.addingTimeInterval(60)
        _ = await pipeline.apply(refunded)
        // The recorded payload is the refund now; the purchase's JWS no longer describes it.
        #expect(await world.ledger.entry(transactionId: purchase.transactionId)?.revokedAt != nil)
        #expect(await world.ledger.signedTransaction(transactionId: purchase.transactionId) == nil)
    }
}
