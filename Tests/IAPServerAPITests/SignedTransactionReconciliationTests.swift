import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPServerAPI
import IAPTestSupport
import IAPTesting
import Testing

/// The reconciler and the support tool record what Apple signed: the ledger keeps the JWS each read from the App
/// Store Server API, so that the entry can be verified again.
@Suite("Signed transactions from the App Store Server API")
struct SignedTransactionReconciliationTests {
    typealias Setup = ReconcilerTests.Setup

    @Test func aLostOrderFoundInApplesHistoryKeepsTheJWSAppleSent() async throws {
        let setup = try Setup()
        _ = try await setup.buyAndSubmit("pro.lifetime", user: "alice")  // how the ledger knows alice's account
        let lost = try await setup.buyAndLose("coins.100", user: "alice")
        _ = await setup.world.appStore.drainNotifications()

        let report = try await setup.reconciler().reconcile(userId: "alice")
        #expect(report.deliveredNow == [lost.transactionId])
        let kept = try #require(await setup.world.ledger.signedTransaction(transactionId: lost.transactionId))
        let entry = try #require(await setup.world.ledger.entry(transactionId: lost.transactionId))
        #expect(try setup.world.verifier.transaction(kept) == entry.transaction)
    }

    @Test func anUploadKeepsTheJWSTheAppUploaded() async throws {
        let setup = try Setup()
        let lost = try await setup.buyAndLose("pro.lifetime", user: "alice")
        let report = await setup.reconciler().reconcileUpload([lost.signedTransaction], userId: "alice")
        #expect(report.deliveredNow == [lost.transactionId])
        #expect(await setup.world.ledger.signedTransaction(transactionId: lost.transactionId) == lost.signedTransaction)
    }

    @Test func aSupportRedeliveryKeepsTheJWSOfTheOrderLookup() async throws {
        let setup = try Setup(environment: .production)
        let lost = try await setup.buyAndLose("coins.100", user: "alice")
        let tool = OrderLookup(
            client: setup.connection.client,
            pipeline: setup.pipeline,
            auditLog: InMemorySupportAuditLog()
        )
        let report = try await tool.redeliver(orderId: try #require(lost.orderId), actor: "agent-7", userId: "alice")
        #expect(report.transactions.map(\.redelivery) == ["delivered"])
        let kept = try #require(await setup.world.ledger.signedTransaction(transactionId: lost.transactionId))
        let entry = try #require(await setup.world.ledger.entry(transactionId: lost.transactionId))
        #expect(try setup.world.verifier.transaction(kept) == entry.transaction)
    }
}
