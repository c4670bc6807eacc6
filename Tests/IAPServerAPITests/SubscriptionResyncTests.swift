import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPServerAPI
import IAPTestSupport
import IAPTesting
import Testing

/// The reconciler's subscription statuses (Get All Subscription Statuses), its choice of API per environment, and
/// alarms that name only what the ledger had missed.
@Suite("Reconciler: subscription statuses, environments and true alarms")
struct SubscriptionResyncTests {
    typealias Setup = ReconcilerTests.Setup

    static let month: Duration = .seconds(31 * 86_400)

    /// alice subscribes; her app tells the server, and so does the SUBSCRIBED notification.
    static func subscribe(_ setup: Setup, user: String = "alice") async throws -> SimulatedTransaction {
        let purchase = try await setup.buyAndSubmit("plus.monthly", user: user)
        _ = try await setup.world.deliverNotifications(to: setup.pipeline)
        return purchase
    }

    /// The notifications the App Store sent while the server's endpoint was down: never processed.
    static func loseNotifications(_ setup: Setup) async throws -> [NotificationType] {
        try await setup.world.appStore.drainNotifications().compactMap {
            try setup.world.verifier.notification($0).payload.notificationType
        }
    }

    @Test func aLostDidFailToRenewIsRepairedSoTheSubscriberKeepsGraceAccess() async throws {
        let setup = try Setup()
        let purchase = try await Self.subscribe(setup)
        try await setup.world.appStore.setBillingFailure(
            originalTransactionId: purchase.originalTransactionId,
            failing: true
        )
        try await setup.world.appStore.advance(by: Self.month + .seconds(3_600))
        #expect(try await Self.loseNotifications(setup) == [.didFailToRenew])
        // Without the notification the ledger believes the period ended: alice would lose access in her grace period.
        #expect(try await setup.world.snapshot("alice").entitlement(productId: "plus.monthly")?.hasAccess == false)

        let reconciler = setup.reconciler()
        #expect(try await reconciler.isBelievedLive(purchase.originalTransactionId))
        let summary = try await reconciler.reconcileSubscriptions()

        #expect(summary.families == 1)
        #expect(summary.subscriptionStatusRequests == 1)
        #expect(summary.renewalInfosUpdated == 1)
        #expect(summary.deliveredNow == 0 && summary.failed == 0)
        let plus = try #require(try await setup.world.snapshot("alice").entitlement(productId: "plus.monthly"))
        #expect(plus.state == .gracePeriod)
        #expect(plus.hasAccess)
        let renewal = try #require(
            await setup.world.ledger.renewalInfo(originalTransactionId: purchase.originalTransactionId)
        )
        #expect(renewal.isInBillingRetryPeriod == true)
        // The alarm names the subscription whose renewal state the ledger never heard of.
        let alarm = try #require(setup.alarms.items.first)
        #expect(alarm.discrepancies.map(\.kind) == [.renewalStateChanged])
        #expect(alarm.discrepancies.first?.originalTransactionId == purchase.originalTransactionId)
        #expect(alarm.discrepancies.first?.userId == "alice")
        #expect(alarm.discrepancies.first?.productId == "plus.monthly")

        // A second run finds the ledger right: nothing updated, no alarm.
        let again = try await reconciler.reconcileSubscriptions()
        #expect(again.renewalInfosUpdated == 0)
        #expect(again.alarms == 0)
        #expect(setup.alarms.items.count == 1)
    }

    @Test func aLostRenewalIsDeliveredAndNamedByTheAlarm() async throws {
        let setup = try Setup()
        let purchase = try await Self.subscribe(setup)
        try await setup.world.appStore.advance(by: Self.month + .seconds(3_600))
        #expect(try await Self.loseNotifications(setup) == [.didRenew])
        #expect(try await setup.world.snapshot("alice").entitlement(productId: "plus.monthly")?.hasAccess == false)

        let summary = try await setup.reconciler().reconcileSubscriptions()

        #expect(summary.deliveredNow == 1)
        #expect(try await setup.world.snapshot("alice").entitlement(productId: "plus.monthly")?.state == .active)
        let renewals = await setup.world.ledger.entries(originalTransactionId: purchase.originalTransactionId)
        #expect(renewals.count == 2)
        #expect(renewals.allSatisfy { $0.userId == "alice" && $0.deliveryState == .delivered })
        let discrepancy = try #require(setup.alarms.items.first?.discrepancies.first)
        #expect(discrepancy.kind == .notRecorded)
        #expect(discrepancy.transactionId == renewals.last?.transactionId)
        #expect(discrepancy.repair == "delivered")
    }

    @Test func theLedgerWalkAsksTheStatusesOfLiveSubscriptionsOnly() async throws {
        let setup = try Setup()
        let world = setup.world
        // bob subscribed and turned auto-renew off; the server heard both.
        let bob = try await Self.subscribe(setup, user: "bob")
        try await world.appStore.advance(by: .seconds(60))
        try await world.appStore.setAutoRenew(originalTransactionId: bob.originalTransactionId, enabled: false)
        _ = try await world.deliverNotifications(to: setup.pipeline)
        // alice's card fails at her renewal, and the server misses it.
        let alice = try await Self.subscribe(setup)
        try await world.appStore.setBillingFailure(originalTransactionId: alice.originalTransactionId, failing: true)
        _ = try await setup.buyAndSubmit("coins.100", user: "carol")
        try await world.appStore.advance(by: Self.month + .seconds(3_600))
        _ = try await Self.loseNotifications(setup)

        let reconciler = setup.reconciler(threshold: 5)
        #expect(try await reconciler.isBelievedLive(bob.originalTransactionId) == false)
        let summary = try await reconciler.reconcileLedger()

        #expect(summary.families == 3)
        #expect(summary.subscriptionStatusRequests == 1)
        #expect(summary.renewalInfosUpdated == 1)
        #expect(try await world.snapshot("alice").entitlement(productId: "plus.monthly")?.state == .gracePeriod)
        #expect(try await world.snapshot("bob").entitlement(productId: "plus.monthly")?.hasAccess == false)
    }

    @Test func anOlderRenewalInfoNeverReplacesANewerOne() async throws {
        let setup = try Setup()
        let purchase = try await Self.subscribe(setup)
        // A newer notification already said auto-renew is off (signed a minute from now, as a fast clock would).
        let newer = RenewalInfoPayload(
            originalTransactionId: purchase.originalTransactionId,
            autoRenewProductId: "plus.monthly",
            productId: "plus.monthly",
            autoRenewStatus: .off,
            isInBillingRetryPeriod: false,
            signedDate: setup.world.clock.now.addingTimeInterval(60),
            environment: .sandbox
        )
        #expect(try await setup.world.ledger.storeRenewalInfo(newer))

        let report = try await setup.reconciler().reconcile(userId: "alice")

        #expect(report.subscriptionStatusRequests == 1)
        #expect(report.renewalInfosUpdated.isEmpty)
        #expect(report.discrepancies.isEmpty)
        #expect(await setup.world.ledger.renewalInfo(originalTransactionId: purchase.originalTransactionId) == newer)
    }

    @Test func aPurchaseWaitingForItsOwnerRaisesNoAlarmNightAfterNight() async throws {
        let setup = try Setup()
        _ = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        // dave's purchase reaches the server by notification before his app claims it: it waits for its owner.
        let waiting = try await setup.world.buy("coins.100", user: "dave")
        _ = try await setup.world.deliverNotifications(to: setup.pipeline)
        #expect(await setup.world.ledger.entry(transactionId: waiting.transactionId)?.deliveryState == .awaitingOwner)

        let reconciler = setup.reconciler()
        let summary = try await reconciler.reconcileLedger()
        #expect(summary.awaitingOwner == 1)
        #expect(summary.discrepancies == 0)
        #expect(summary.alarms == 0)
        // Another night, from scratch (no checkpoint): the ledger still knew it, so still no alarm.
        let fresh = setup.reconciler(checkpoints: InMemoryReconciliationCheckpointStore())
        let again = try await fresh.reconcile(transactionId: waiting.transactionId)
        #expect(again.awaitingOwner == [waiting.transactionId])
        #expect(again.discrepancies.isEmpty)
        #expect(setup.alarms.items.isEmpty)
    }

    @Test func eachFamilyIsAskedOfTheAPIOfItsOwnEnvironment() async throws {
        let clock = ManualClock(now: Date(millisecondsSince1970: 1_767_225_600_000))
        let products = try SimulatedShop().catalog.products
        let production = try SimulatedAppStore(
            products: products,
            configuration: .init(environment: .production, firstTransactionId: 1_000_000_000_000_001),
            clock: clock
        )
        // App Review buys in the sandbox; Apple signs both environments with the same chain.
        let sandbox = try SimulatedAppStore(
            products: products,
            configuration: .init(environment: .sandbox),
            pki: production.pki,
            clock: clock
        )
        var configuration = production.verifierConfiguration
        configuration.environments = [.production, .sandbox]
        let verifier = try AppStoreSignedDataVerifier(configuration: configuration)
        let ledger = InMemoryEntitlementStore()
        let wallet = RecordingFulfillmentHook()
        let pipeline = DeliveryPipeline(
            verifier: verifier,
            catalog: try StaticProductCatalog(products: products),
            store: ledger,
            hook: wallet,
            clock: clock
        )
        let token = AppAccountToken.derive(from: "alice", namespace: SimulatedShop.namespace)
        var lost: [String] = []
        for store in [production, sandbox] {
            let first = try #require(
                try await store.purchase(productId: "pro.lifetime", account: "alice", appAccountToken: token)
                    .transaction
            )
            #expect(
                await pipeline.submit(signedTransaction: first.signedTransaction, userId: "alice").name == "delivered"
            )
            let missing = try #require(
                try await store.purchase(productId: "coins.100", account: "alice", appAccountToken: token).transaction
            )
            lost.append(missing.transactionId)
        }
        let clients = try AppStoreServerAPIClients([
            try SimulatedAppStoreTransport.connect(to: production, clock: ImmediateClock()).client,
            try SimulatedAppStoreTransport.connect(to: sandbox, clock: ImmediateClock()).client,
        ])
        func reconciler(_ clients: AppStoreServerAPIClients) -> Reconciler {
            Reconciler(
                clients: clients,
                pipeline: pipeline,
                checkpoints: InMemoryReconciliationCheckpointStore(),
                configuration: .init(requestsPerSecond: 0),
                clock: ImmediateClock()
            )
        }

        // With a production client only, the sandbox family cannot be asked: it fails, and says why.
        let productionOnly = try await reconciler(AppStoreServerAPIClients(clients.all[0])).reconcileLedger()
        #expect(productionOnly.deliveredNow == 1)
        #expect(productionOnly.failedCustomers.values.map(\.code) == [.environmentMismatch])
        #expect(productionOnly.failed == 1)

        let both = try await reconciler(clients).reconcileLedger()
        #expect(both.failed == 0)
        #expect(both.deliveredNow == 1)
        for id in lost {
            #expect(await ledger.entry(transactionId: id)?.deliveryState == .delivered)
        }
        #expect(Set(await ledger.allEntries().compactMap(\.environment)) == [.production, .sandbox])

        // A transaction the ledger does not know is asked of each environment in turn.
        let unknown = try #require(
            try await sandbox.purchase(productId: "coins.100", account: "reviewer").transaction
        )
        let report = try await reconciler(clients).reconcile(transactionId: unknown.transactionId)
        #expect(report.appleTransactions == [unknown.transactionId])
    }
}
