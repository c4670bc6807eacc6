import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPServerAPI
import IAPStorageFile
import IAPTestSupport
import IAPTesting
import Testing

@Suite("Order lookup")
struct OrderLookupTests {
    typealias Setup = ReconcilerTests.Setup

    func lookup(_ setup: Setup, auditLog: some SupportAuditLog) -> OrderLookup {
        OrderLookup(
            client: setup.connection.client,
            pipeline: setup.pipeline,
            auditLog: auditLog
        )
    }

    /// A lookup discloses a customer's purchases, owner and token: it is audited, with who asked, as which OS
    /// user, and what was shown, and it changes nothing in the ledger.
    @Test func aLookupShowsOwnerStateAndDeliveryAndIsAuditedWithoutChangingTheLedger() async throws {
        let setup = try Setup(environment: .production)
        let pro = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        let lost = try await setup.buyAndLose("coins.100", user: "alice")
        try await setup.world.appStore.refund(transactionId: pro.transactionId)
        let audit = InMemorySupportAuditLog()

        let delivered = try await lookup(setup, auditLog: audit).lookUp(
            orderId: try #require(pro.orderId),
            actor: "agent-7"
        )
        #expect(delivered.found)
        let item = try #require(delivered.transactions.first)
        #expect(item.transactionId == pro.transactionId)
        #expect(item.productId == "pro.lifetime")
        #expect(item.state == .refunded)
        #expect(item.revocationDate != nil)
        #expect(item.owner == "alice" && item.ownerSource == .ledger)
        #expect(item.delivered)
        #expect(item.redelivery == nil)

        let missing = try await lookup(setup, auditLog: audit).lookUp(
            orderId: try #require(lost.orderId),
            actor: "agent-9"
        )
        let missingItem = try #require(missing.transactions.first)
        #expect(missingItem.state == .active)
        #expect(missingItem.owner == "alice" && missingItem.ownerSource == .appAccountToken)
        #expect(missingItem.ledgerState == nil)
        #expect(!missingItem.delivered)
        #expect(await setup.world.ledger.entry(transactionId: lost.transactionId) == nil)

        let entries = await audit.entries()
        #expect(entries.map(\.action) == ["lookup", "lookup"])
        #expect(entries.map(\.actor) == ["agent-7", "agent-9"])
        #expect(entries.map(\.orderId) == [pro.orderId, lost.orderId])
        #expect(
            entries.map(\.outcomes) == [
                [.init(transactionId: pro.transactionId, outcome: "shown")],
                [.init(transactionId: lost.transactionId, outcome: "shown")],
            ]
        )
        // The OS user is the process's own, whatever the caller named as actor.
        #expect(entries.allSatisfy { $0.osUser == SupportAuditChain.osUser && !($0.osUser ?? "").isEmpty })
        #expect(entries.map(\.sequence) == [1, 2])
        #expect(await audit.verify().isIntact)
    }

    @Test func theNamedOptOutLooksUpWithoutAnAuditEntryAndAFailedEntryWithholdsTheReport() async throws {
        let setup = try Setup(environment: .production)
        let pro = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        let orderId = try #require(pro.orderId)
        let audit = InMemorySupportAuditLog()
        let report = try await lookup(setup, auditLog: audit).lookUpWithoutAudit(orderId: orderId)
        #expect(report.transactions.map(\.transactionId) == [pro.transactionId])
        #expect(await audit.entries().isEmpty)

        // An audit log that cannot be written: the lookup throws, and nobody sees what it found.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("audit-\(UUID().uuidString).jsonl")
            .path
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: FileSupportAuditLog.headPath(for: path))
        }
        let closed = try FileSupportAuditLog(path: path, ledgerId: "0123456789abcdef0123456789abcdef")
        await closed.close()
        await #expect(throws: IAPError(.storageFailure)) {
            try await lookup(setup, auditLog: closed).lookUp(orderId: orderId, actor: "agent-7")
        }
        await #expect(throws: IAPError(.invalidArgument)) {
            try await lookup(setup, auditLog: audit).lookUp(orderId: orderId, actor: "")
        }
    }

    @Test func redeliveryDeliversOnceEvenWhenRunTwiceAndIsAudited() async throws {
        let setup = try Setup(environment: .production)
        _ = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        let lost = try await setup.buyAndLose("coins.100", user: "alice")
        let orderId = try #require(lost.orderId)
        let audit = InMemorySupportAuditLog()
        let tool = lookup(setup, auditLog: audit)

        let first = try await tool.redeliver(orderId: orderId, actor: "agent-7")
        #expect(first.redelivered)
        #expect(first.transactions.map(\.redelivery) == ["delivered"])
        #expect(first.transactions.first?.delivered == true)
        let second = try await tool.redeliver(orderId: orderId, actor: "agent-7")
        #expect(second.transactions.map(\.redelivery) == ["alreadyDelivered"])
        #expect(setup.world.wallet.balance("alice") == 101)
        #expect(setup.world.wallet.calls.filter { $0.transaction.transactionId == lost.transactionId }.count == 1)

        let entries = await audit.entries()
        #expect(
            entries.map(\.action) == [
                "redeliver.requested", "redeliver.completed", "redeliver.requested", "redeliver.completed",
            ]
        )
        #expect(entries.allSatisfy { $0.actor == "agent-7" && $0.orderId == orderId && $0.at == setup.world.clock.now })
        #expect(entries.map(\.sequence) == [1, 2, 3, 4])
        #expect(await audit.verify().isIntact)
        // What was granted, to whom, and how many units; a second run grants nothing.
        #expect(
            entries[1].outcomes == [
                .init(
                    transactionId: lost.transactionId,
                    outcome: "delivered",
                    productId: "coins.100",
                    userId: "alice",
                    units: 100
                )
            ]
        )
        #expect(
            entries[3].outcomes == [
                .init(transactionId: lost.transactionId, outcome: "alreadyDelivered", productId: "coins.100")
            ]
        )
    }

    @Test func aStoreFailureAfterADeliveryStillEndsInTheAuditLog() async throws {
        let setup = try Setup(environment: .production)
        _ = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        let lost = try await setup.buyAndLose("coins.100", user: "alice")
        let outage = FaultInjectingEntitlementStore(wrapping: setup.world.ledger)
        let pipeline = DeliveryPipeline(
            verifier: setup.world.verifier,
            catalog: setup.world.catalog,
            store: outage,
            hook: setup.world.wallet,
            clock: setup.world.clock,
            retryPolicy: RetryPolicy(jitter: 0)
        )
        let audit = InMemorySupportAuditLog()
        let tool = OrderLookup(
            client: setup.connection.client,
            pipeline: pipeline,
            auditLog: audit
        )
        // The wallet grants the coins, then the ledger stops answering reads.
        setup.world.wallet.duringNextCall { outage.inject(.beforeApplying, on: .entry, count: 10) }

        let report = try await tool.redeliver(orderId: try #require(lost.orderId), actor: "agent-7")
        outage.clearFaults()

        #expect(setup.world.wallet.balance("alice") == 101)
        let entries = await audit.entries()
        #expect(entries.map(\.action) == ["redeliver.requested", "redeliver.completed"])
        #expect(entries.last?.outcomes.map(\.transactionId) == [lost.transactionId])
        #expect(report.transactions.map(\.transactionId) == [lost.transactionId])
        #expect(report.transactions.first?.redelivery == entries.last?.outcomes.first?.outcome)
    }

    @Test func anOrderWaitingForItsOwnerGoesToTheUserTheAgentNamesThroughTheOneEntry() async throws {
        let setup = try Setup(environment: .production)
        let purchase = try await setup.buyAndLose("pro.lifetime", user: "alice")
        // The App Store's notification came first: recorded, given to nobody.
        _ = try await setup.world.deliverNotifications(to: setup.pipeline)
        let waiting = try #require(await setup.world.ledger.entry(transactionId: purchase.transactionId))
        #expect(waiting.deliveryState == .awaitingOwner)
        let audit = InMemorySupportAuditLog()
        let tool = lookup(setup, auditLog: audit)
        let orderId = try #require(purchase.orderId)

        let plain = try await tool.redeliver(orderId: orderId, actor: "agent-7")
        #expect(plain.transactions.map(\.redelivery) == ["awaitingOwner"])
        let named = try await tool.redeliver(orderId: orderId, actor: "agent-7", userId: "alice")
        #expect(named.transactions.map(\.redelivery) == ["delivered"])
        #expect(named.transactions.first?.owner == "alice")
        #expect(setup.world.wallet.calls.map(\.userId) == ["alice"])

        await #expect(throws: IAPError(.invalidArgument)) {
            try await tool.redeliver(orderId: orderId, actor: "agent-7", userId: "unowned:\(purchase.transactionId)")
        }
    }

    @Test func anInvalidOrderIdIsAClearAnswerNotAnError() async throws {
        let setup = try Setup(environment: .production)
        let audit = InMemorySupportAuditLog()
        let report = try await lookup(setup, auditLog: audit).redeliver(orderId: "NOSUCHORDER", actor: "agent-7")
        #expect(!report.found)
        #expect(report.transactions.isEmpty)
        #expect(!report.redelivered)
        #expect(await audit.entries().isEmpty)
        await #expect(throws: IAPError(.invalidArgument)) {
            try await lookup(setup, auditLog: audit).lookUp(orderId: "", actor: "agent-7")
        }
        // An unknown order looked up is audited too: someone asked about it.
        _ = try await lookup(setup, auditLog: audit).lookUp(orderId: "NOSUCHORDER", actor: "agent-7")
        #expect(await audit.entries().map(\.action) == ["lookup"])
        #expect(await audit.entries().first?.outcomes == [])
    }
}
