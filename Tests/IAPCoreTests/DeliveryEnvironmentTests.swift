import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTestSupport
import Testing

/// A production server that also takes App Review's sandbox purchases: each entry keeps its environment, and the
/// sandbox policy decides what a sandbox purchase gets.
@Suite("Delivery environments")
struct DeliveryEnvironmentTests {
    static let appAppleId: Int64 = 1_234_567_890

    /// A pipeline over the shop's ledger whose verifier accepts `environments`.
    static func pipeline(
        _ shop: Shop,
        environments: Set<AppStoreEnvironment> = [.production, .sandbox],
        policy: SandboxPolicy = .grant,
        events: InMemoryEventSink = InMemoryEventSink()
    ) throws -> DeliveryPipeline {
        let verifier = try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [shop.pki.root],
                bundleId: Shop.bundleId,
                environments: environments,
                appAppleId: environments.contains(.production) ? appAppleId : nil
            )
        )
        return DeliveryPipeline(
            verifier: verifier,
            catalog: shop.catalog,
            store: shop.store,
            hook: shop.wallet,
            clock: shop.clock,
            retryPolicy: RetryPolicy(jitter: 0),
            sandboxPolicy: policy,
            events: events
        )
    }

    static func production(_ shop: inout Shop, _ productId: String) -> TransactionPayload {
        var transaction = shop.transaction(productId)
        transaction.environment = .production
        return transaction
    }

    @Test func aSandboxPurchaseOnAProductionServerIsGrantedAndTaggedByDefault() async throws {
        var shop = try Shop()
        let events = InMemoryEventSink()
        let pipeline = try Self.pipeline(shop, events: events)
        #expect(pipeline.isProductionServer)
        #expect(pipeline.sandboxPolicy == .grant)

        let review = await pipeline.submit(
            signedTransaction: try shop.sign(shop.transaction("pro.lifetime")),
            userId: "reviewer"
        )
        let paid = await pipeline.submit(
            signedTransaction: try shop.sign(Self.production(&shop, "coins.100")),
            userId: "alice"
        )

        guard case .delivered(let sandboxEntry) = review, case .delivered(let productionEntry) = paid else {
            Issue.record("expected both delivered, got \(review) and \(paid)")
            return
        }
        #expect(sandboxEntry.environment == .sandbox)
        #expect(productionEntry.environment == .production)
        #expect(shop.wallet.calls.map(\.environment) == [.sandbox, .production])
        #expect(shop.wallet.calls.allSatisfy { !$0.isFlagged })
        #expect(!pipeline.isFlagged(sandboxEntry))
        // Nothing flagged or refused: the only events are the grants.
        #expect(events.events.allSatisfy { $0.event == "delivery.granted" })
        #expect(await shop.memory.statistics().environments == ["Production": 1, "Sandbox": 1])
        #expect(review.description.contains("Sandbox"))
    }

    @Test func grantAndFlagGrantsAndTellsTheOperatorOncePerPurchase() async throws {
        var shop = try Shop()
        let events = InMemoryEventSink()
        let pipeline = try Self.pipeline(shop, policy: .grantAndFlag, events: events)
        let sandbox = try shop.sign(shop.transaction("coins.100"))

        let first = await pipeline.submit(signedTransaction: sandbox, userId: "reviewer")
        let again = await pipeline.submit(signedTransaction: sandbox, userId: "reviewer")
        let paid = await pipeline.submit(
            signedTransaction: try shop.sign(Self.production(&shop, "coins.100")),
            userId: "alice"
        )

        #expect(first.isDelivered && again.isAlreadyDelivered && paid.isDelivered)
        #expect(shop.wallet.balance("reviewer") == 100)
        #expect(shop.wallet.calls.map(\.isFlagged) == [true, false])
        let flagged = events.events(named: "delivery.sandboxFlagged")
        #expect(flagged.count == 1)
        #expect(flagged.first?.transactionId == first.entry?.transactionId)
        #expect(flagged.first?.environment == "Sandbox")
        #expect(flagged.first?.userId == "reviewer")
        #expect(try pipeline.isFlagged(#require(first.entry)))
        #expect(try !pipeline.isFlagged(#require(paid.entry)))
    }

    @Test func refuseRecordsNothingAndSaysSoWithItsOwnCode() async throws {
        var shop = try Shop()
        let events = InMemoryEventSink()
        let pipeline = try Self.pipeline(shop, policy: .refuse, events: events)
        let sandbox = shop.transaction("pro.lifetime")

        let refused = await pipeline.submit(signedTransaction: try shop.sign(sandbox), userId: "reviewer")
        guard case .rejected(let error) = refused else {
            Issue.record("expected rejected, got \(refused)")
            return
        }
        #expect(error.code == .sandboxPurchaseRefused)
        #expect(!error.isRetryable)
        #expect(!refused.shouldFinishTransaction)
        #expect(await shop.memory.entry(transactionId: sandbox.transactionId ?? "") == nil)
        #expect(shop.wallet.calls.isEmpty)
        #expect(events.events(named: "delivery.sandboxRefused").map(\.transactionId) == [sandbox.transactionId])

        let paid = await pipeline.submit(
            signedTransaction: try shop.sign(Self.production(&shop, "pro.lifetime")),
            userId: "alice"
        )
        #expect(paid.isDelivered)

        // The app sees a rejection with a neutral message, and does not finish the transaction.
        let handler = TransactionSubmissionHandler(pipeline: pipeline)
        let body = try JSONEncoder().encode(
            TransactionSubmission(signedTransaction: try shop.sign(sandbox), userId: nil)
        )
        let response = await handler.handle(body: body, authenticatedUserId: "reviewer")
        #expect(response.status == 422)
        #expect(response.result.error?.code == .sandboxPurchaseRefused)
        #expect(response.result.error?.message == "purchases from this environment are not accepted")
        #expect(!response.result.finish)
    }

    @Test func aSandboxPurchaseTheLedgerHoldsIsStillTakenBackUnderRefuse() async throws {
        var shop = try Shop()
        let purchase = shop.transaction("coins.100")
        let lenient = try Self.pipeline(shop)
        _ = await lenient.submit(signedTransaction: try shop.sign(purchase), userId: "reviewer")
        #expect(shop.wallet.balance("reviewer") == 100)

        let strict = try Self.pipeline(shop, policy: .refuse)
        shop.clock.advance(by: .seconds(60))
        let refunded = DeliveryRaceTests.refunded(purchase, at: shop.clock.now)
        #expect(await strict.deliver(refunded, userId: nil).isRevoked)
        #expect(shop.wallet.balance("reviewer") == 0)
    }

    @Test func aStagingServerThatAcceptsNoProductionDataIsNotAProductionServer() async throws {
        var shop = try Shop()
        let events = InMemoryEventSink()
        let staging = try Self.pipeline(shop, environments: [.sandbox], policy: .refuse, events: events)
        #expect(!staging.isProductionServer)
        let outcome = await staging.submit(
            signedTransaction: try shop.sign(shop.transaction("coins.100")),
            userId: "qa"
        )
        #expect(outcome.isDelivered)
        #expect(events.events.map(\.event) == ["delivery.granted"])
    }

    @Test func notificationsOfBothEnvironmentsGoThroughOneProcessor() async throws {
        var shop = try Shop()
        let pipeline = try Self.pipeline(shop)
        let processor = NotificationProcessor(pipeline: pipeline)
        let token = UUID().uuidString.lowercased()
        _ = try await shop.memory.bind(appAccountToken: token, to: "alice")

        var answers: [Int] = []
        for environment in [AppStoreEnvironment.production, .sandbox] {
            var transaction = shop.transaction("coins.100", token: token)
            transaction.environment = environment
            let notification = NotificationPayload(
                notificationType: .oneTimeCharge,
                notificationUUID: UUID().uuidString,
                data: NotificationData(
                    environment: environment,
                    appAppleId: environment == .production ? Self.appAppleId : nil,
                    bundleId: Shop.bundleId,
                    signedTransactionInfo: try shop.sign(transaction)
                ),
                version: "2.0",
                signedDate: shop.clock.now
            )
            let body = try JSONEncoder().encode(["signedPayload": try shop.signer.sign(notification)])
            answers.append(await processor.handle(body: body).status)
        }

        #expect(answers == [200, 200])
        let entries = try await shop.memory.history(userId: "alice", cursor: nil, limit: 10).entries
        #expect(Set(entries.compactMap(\.environment)) == [.production, .sandbox])
        #expect(shop.wallet.balance("alice") == 200)
    }
}
