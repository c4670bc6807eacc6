import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTestSupport
import IAPTesting
import Testing

/// A submission that carries the device's signed app transaction: verified, its `appTransactionId` recorded against
/// the user, and never deciding the purchase's fate.
@Suite("Transaction submission: the app transaction")
struct SubmissionAppTransactionTests {
    @Test("matched, mismatched and unverifiable app transactions are told apart; the purchase is delivered each time")
    func appTransaction() async throws {
        let shop = try SimulatedShop()
        let events = InMemoryEventSink()
        let pipeline = DeliveryPipeline(
            verifier: shop.verifier,
            catalog: shop.catalog,
            store: shop.ledger,
            hook: shop.wallet,
            clock: shop.clock,
            events: events
        )
        let handler = TransactionSubmissionHandler(pipeline: pipeline)
        let own = try await shop.appStore.appTransaction(ofAccount: "kid")
        let other = try await shop.appStore.appTransaction(ofAccount: "parent")
        let cases: [(String, String, String)] = [
            ("coins.100", own, "matched"), ("coins.100", other, "mismatch"), ("coins.100", "not.a.jws", "rejected"),
        ]
        for (productId, appTransaction, expected) in cases {
            let bought = try await shop.buy(productId, user: "kid")
            let body = try JSONEncoder().encode(
                TransactionSubmission(
                    signedTransaction: bought.signedTransaction,
                    userId: nil,
                    signedAppTransaction: appTransaction
                )
            )
            let response = await handler.handle(body: body, authenticatedUserId: "kid")
            #expect(response.status == 200, "\(expected)")
            let event = try #require(events.events(named: "submission.appTransaction").last)
            #expect(event.outcome == expected)
            #expect(event.userId == "kid")
            #expect(event.transactionId == bought.transactionId)
            if expected == "matched" {
                #expect(event.message == "appTransactionId \(bought.payload.appTransactionId ?? "")")
            }
        }
        #expect(events.events(named: "submission.appTransaction").count == 3)
        #expect(shop.wallet.balance("kid") == 300)
    }
}
