import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPServerAPI
import IAPStorageFile
import IAPTestSupport
import IAPTesting
import Testing

@Suite("Reconciler")
struct ReconcilerTests {
    typealias World = SimulatedShop

    /// A shop whose server talks to the simulated App Store through the in-process transport.
    struct Setup {
        let world: World
        let connection: SimulatedAppStoreTransport.Connection
        let pipeline: DeliveryPipeline
        let checkpoints = InMemoryReconciliationCheckpointStore()
        let alarms = Recorder<ReconciliationAlarm>()
        let sleeper = ImmediateClock()

        init(environment: AppStoreEnvironment = .sandbox) throws {
            world = try World(environment: environment)
            connection = try SimulatedAppStoreTransport.connect(to: world.appStore)
            pipeline = world.pipeline()
        }

        /// A reconciler over the shop, with the setup's checkpoints unless it is given others.
        func reconciler(
            threshold: Int = 0,
            requestsPerSecond: Double = 0,
            pageSize: Int = 500,
            coverageLimit: Int = 100_000,
            checkpoints: (any ReconciliationCheckpointStore)? = nil
        ) -> Reconciler {
            let alarms = self.alarms
            let checkpoints: any ReconciliationCheckpointStore = checkpoints ?? self.checkpoints
            return Reconciler(
                client: connection.client,
                pipeline: pipeline,
                checkpoints: checkpoints,
                configuration: .init(
                    alarmThreshold: threshold,
                    requestsPerSecond: requestsPerSecond,
                    ledgerPageSize: pageSize,
                    coverageLimit: coverageLimit
                ),
                clock: sleeper,
                alarm: { alarm in alarms.append(alarm) }
            )
        }

        /// A purchase the app reported to the server.
        func buyAndSubmit(_ productId: String, user: String) async throws -> SimulatedTransaction {
            let purchase = try await world.buy(productId, user: user)
            let outcome = await pipeline.submit(signedTransaction: purchase.signedTransaction, userId: user)
            #expect(outcome.shouldFinishTransaction, "\(outcome)")
            return purchase
        }

        /// A purchase the app never reported (it crashed, or the network failed before the server heard).
        func buyAndLose(_ productId: String, user: String) async throws -> SimulatedTransaction {
            try await world.buy(productId, user: user)
        }
    }

    @Test func aLostOrderIsFoundAndDeliveredToItsOwner() async throws {
        let setup = try Setup()
        let pro = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        let lost = try await setup.buyAndLose("coins.100", user: "alice")
        _ = await setup.world.appStore.drainNotifications()  // the webhook was down too

        let report = try await setup.reconciler().reconcile(userId: "alice")

        #expect(report.deliveredNow == [lost.transactionId])
        #expect(report.alreadyDelivered == [pro.transactionId])
        #expect(Set(report.appleTransactions) == [pro.transactionId, lost.transactionId])
        #expect(report.stillFailing.isEmpty && report.rejectedSignatures.isEmpty)
        #expect(report.checkpointSaved)
        #expect(setup.world.wallet.balance("alice") == 101)  // 100 coins and the lifetime unlock
        let entry = try #require(await setup.world.ledger.entry(transactionId: lost.transactionId))
        #expect(entry.userId == "alice")
        #expect(entry.deliveryState == .delivered)
    }

    @Test func aRefundTheLedgerMissedIsTakenBackOnce() async throws {
        let setup = try Setup()
        let coins = try await setup.buyAndSubmit("coins.100", user: "alice")
        try await setup.world.appStore.refund(transactionId: coins.transactionId)
        _ = await setup.world.appStore.drainNotifications()  // the REFUND notification never arrived
        #expect(setup.world.wallet.balance("alice") == 100)

        let reconciler = setup.reconciler(threshold: 5)
        let report = try await reconciler.reconcile(transactionId: coins.transactionId)
        #expect(report.revokedNow == [coins.transactionId])
        #expect(report.deliveredNow.isEmpty)
        #expect(setup.world.wallet.balance("alice") == 0)

        let again = try await reconciler.reconcile(transactionId: coins.transactionId)
        #expect(again.revokedNow.isEmpty)
        #expect(setup.world.wallet.calls.filter { $0.action == .revoke }.count == 1)
        let entry = try #require(await setup.world.ledger.entry(transactionId: coins.transactionId))
        #expect(entry.revokedAt != nil && entry.revocationDelivered)
    }

    @Test func aRefundTheLedgerFailedToRecordIsReadAgainByTheNextRun() async throws {
        let setup = try Setup()
        let pro = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        try await setup.world.appStore.refund(transactionId: pro.transactionId)
        _ = await setup.world.appStore.drainNotifications()  // the REFUND notification never arrived

        // The ledger fails the write that records the refund.
        let outage = FaultInjectingEntitlementStore(wrapping: setup.world.ledger)
        outage.inject(.beforeApplying, on: .replace)
        let pipeline = DeliveryPipeline(
            verifier: setup.world.verifier,
            catalog: setup.world.catalog,
            store: outage,
            hook: setup.world.wallet,
            clock: setup.world.clock,
            retryPolicy: RetryPolicy(jitter: 0)
        )
        let reconciler = Reconciler(
            client: setup.connection.client,
            pipeline: pipeline,
            checkpoints: setup.checkpoints,
            configuration: .init(alarmThreshold: 10, requestsPerSecond: 0),
            clock: setup.sleeper
        )
        let failed = try await reconciler.reconcile(transactionId: pro.transactionId)
        #expect(failed.revokedNow.isEmpty)
        #expect(failed.stillFailing.map(\.transactionId) == [pro.transactionId])
        #expect(!failed.checkpointSaved)
        #expect(await setup.checkpoints.checkpoint(customerKey: pro.transactionId) == nil)

        // The store is back: the next run must still see the refund and take the purchase back.
        let again = try await reconciler.reconcile(transactionId: pro.transactionId)
        #expect(again.revokedNow == [pro.transactionId])
        #expect(again.checkpointSaved)
        let entry = try #require(await setup.world.ledger.entry(transactionId: pro.transactionId))
        #expect(entry.revokedAt != nil && entry.revocationDelivered)
        #expect(setup.world.wallet.calls.filter { $0.action == .revoke }.count == 1)
    }

    @Test func aSecondRunStartsFromTheStoredRevisionAndAsksLess() async throws {
        let setup = try Setup()
        _ = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        // More than one page of history (Apple pages by 20).
        for _ in 0..<24 {
            _ = try await setup.buyAndLose("coins.100", user: "alice")
        }
        let reconciler = setup.reconciler(threshold: 100)

        let before = setup.connection.transport.requestCount
        let first = try await reconciler.reconcile(userId: "alice")
        let firstRequests = setup.connection.transport.requestCount - before
        #expect(first.deliveredNow.count == 24)
        #expect(first.startRevision == nil)
        #expect(first.requests == 3)  // two history pages and one refund page
        let saved = try #require(await setup.checkpoints.checkpoint(customerKey: first.customerKey ?? ""))
        #expect(saved.historyRevision != nil)

        let grantsAfterFirst = setup.world.wallet.calls.count
        let middle = setup.connection.transport.requestCount
        let second = try await reconciler.reconcile(userId: "alice")
        let secondRequests = setup.connection.transport.requestCount - middle
        #expect(second.startRevision == saved.historyRevision)
        #expect(second.appleTransactions.isEmpty)
        #expect(second.deliveredNow.isEmpty)
        #expect(secondRequests < firstRequests)
        #expect(setup.world.wallet.calls.count == grantsAfterFirst)

        let later = try await setup.buyAndLose("coins.100", user: "alice")
        let third = try await reconciler.reconcile(userId: "alice")
        #expect(third.appleTransactions == [later.transactionId])
        #expect(third.deliveredNow == [later.transactionId])
        #expect(setup.world.wallet.balance("alice") == 1 + 25 * 100)
    }

    @Test func aRevisionTheAppStoreRefusesIsDroppedForTheWholeHistory() async throws {
        let setup = try Setup()
        let pro = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        let lost = try await setup.buyAndLose("coins.100", user: "alice")
        // A checkpoint whose revisions Apple no longer accepts (4000005 invalidRequestRevision).
        try await setup.checkpoints.saveCheckpoint(
            ReconciliationCheckpoint(
                customerKey: pro.originalTransactionId,
                historyRevision: "stale-revision",
                refundRevision: "stale-refund-revision",
                reconciledAt: setup.world.clock.now
            )
        )
        let reconciler = setup.reconciler(threshold: 10)

        let report = try await reconciler.reconcile(userId: "alice")

        #expect(report.deliveredNow == [lost.transactionId])
        #expect(report.checkpointSaved)
        let saved = try #require(await setup.checkpoints.checkpoint(customerKey: pro.originalTransactionId))
        #expect(saved.historyRevision != nil && saved.historyRevision != "stale-revision")
        #expect(saved.refundRevision != nil && saved.refundRevision != "stale-refund-revision")
        // The new revisions work: the next run asks only for what changed since.
        let again = try await reconciler.reconcile(userId: "alice")
        #expect(again.appleTransactions.isEmpty)
        #expect(again.checkpointSaved)
    }

    @Test func theAlarmFiresAboveTheThresholdAndNotAtIt() async throws {
        let setup = try Setup()
        _ = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        _ = try await setup.buyAndLose("coins.100", user: "alice")
        let reconciler = setup.reconciler(threshold: 1)

        let first = try await reconciler.reconcile(userId: "alice")
        #expect(first.discrepancy == 1)
        #expect(setup.alarms.items.isEmpty)

        let lost = [
            try await setup.buyAndLose("coins.100", user: "alice"),
            try await setup.buyAndLose("coins.100", user: "alice"),
        ]
        let second = try await reconciler.reconcile(userId: "alice")
        #expect(second.discrepancy == 2)
        let alarms = setup.alarms.items
        #expect(alarms.count == 1)
        #expect(alarms.first?.customer == "alice")
        #expect(alarms.first?.appleCount == 2)
        #expect(alarms.first?.difference == 2)
        #expect(alarms.first?.threshold == 1)
        // The alarm names what the ledger had missed, each with what the run did about it.
        #expect(alarms.first?.discrepancies.map(\.transactionId) == lost.map(\.transactionId))
        #expect(alarms.first?.discrepancies.allSatisfy { $0.kind == .notRecorded && $0.repair == "delivered" } == true)
        #expect(
            alarms.first?.discrepancies.first?.description
                == "\(lost[0].transactionId) (coins.100 of alice) was not in the ledger: delivered now"
        )
    }

    @Test func theWholeLedgerWalkReportsProgressAndHonoursTheRateLimit() async throws {
        let setup = try Setup()
        for user in ["alice", "bob", "carol"] {
            _ = try await setup.buyAndSubmit("pro.lifetime", user: user)
        }
        _ = try await setup.buyAndSubmit("coins.100", user: "alice")  // a second family of alice's account
        let lost = try await setup.buyAndLose("coins.100", user: "bob")
        let progress = Recorder<ReconciliationProgress>()

        let summary = try await setup.reconciler(threshold: 10, requestsPerSecond: 2, pageSize: 1).reconcileLedger {
            step in progress.append(step)
        }

        #expect(summary.families == 4)
        #expect(summary.reconciled == 3)
        #expect(summary.coveredByOthers == 1)  // alice's coins came with her first history
        #expect(summary.deliveredNow == 1)
        #expect(summary.alreadyDelivered == 4)
        #expect(summary.failedCustomers.isEmpty)
        #expect(await setup.world.ledger.entry(transactionId: lost.transactionId)?.deliveryState == .delivered)
        let steps = progress.items
        #expect(steps.map(\.done) == [1, 2, 3, 4])
        #expect(steps.allSatisfy { $0.total == 4 })
        // Six requests (a history and a refund page per customer) at 2 per second: five waits of half a second.
        #expect(summary.requests == 6)
        let waits = setup.sleeper.sleeps.filter { $0 > .zero }
        #expect(waits.count == 5)
        #expect(waits.allSatisfy { $0 == .milliseconds(500) })
    }

    @Test func aWalkThatForgotAnAccountAsksAgainAndDeliversNothingTwice() async throws {
        // Alice's second family comes after two other customers' in the ledger: a walk remembering one account of
        // each generation has forgotten hers by then.
        func shop() async throws -> (Setup, lost: SimulatedTransaction) {
            let setup = try Setup()
            _ = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
            _ = try await setup.buyAndSubmit("pro.lifetime", user: "bob")
            _ = try await setup.buyAndSubmit("pro.lifetime", user: "carol")
            _ = try await setup.buyAndSubmit("coins.100", user: "alice")
            let lost = try await setup.buyAndLose("coins.100", user: "bob")
            return (setup, lost)
        }
        let (remembering, _) = try await shop()
        let everything = try await remembering.reconciler(threshold: 10).reconcileLedger()
        #expect(everything.reconciled == 3)
        #expect(everything.coveredByOthers == 1)

        let (forgetting, lost) = try await shop()
        let grantsBefore = forgetting.world.wallet.calls.count
        let summary = try await forgetting.reconciler(threshold: 10, coverageLimit: 2).reconcileLedger()

        #expect(summary.families == 4)
        #expect(summary.reconciled == 4)  // alice's coins asked for again
        #expect(summary.coveredByOthers == 0)
        #expect(summary.requests == everything.requests + 2)
        #expect(summary.deliveredNow == 1)
        #expect(summary.failedCustomers.isEmpty)
        #expect(forgetting.world.wallet.calls.count == grantsBefore + 1)  // bob's lost order, once
        #expect(await forgetting.world.ledger.entry(transactionId: lost.transactionId)?.deliveryState == .delivered)
    }

    @Test func aFamilyRecordedDuringTheWalkIsLeftToTheNextWalk() async throws {
        let setup = try Setup()
        _ = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        _ = try await setup.buyAndSubmit("pro.lifetime", user: "bob")
        let progress = Recorder<ReconciliationProgress>()
        let buying = Recorder<SimulatedTransaction>()

        let summary = try await setup.reconciler(pageSize: 1).reconcileLedger { step in
            progress.append(step)
            if step.done == 1, let bought = try? await setup.buyAndSubmit("pro.lifetime", user: "carol") {
                buying.append(bought)
            }
        }

        #expect(summary.families == 2)
        #expect(progress.items.map(\.done) == [1, 2])
        #expect(progress.items.allSatisfy { $0.total == 2 })
        let carol = try #require(buying.items.first)
        #expect(!progress.items.map(\.current).contains(carol.originalTransactionId))
        #expect(try await setup.reconciler().reconcileLedger().families == 3)
    }

    @Test func aCancelledWalkStopsWithCancelledAndRecordsNoFamilyAsFailed() async throws {
        let setup = try Setup()
        for user in ["alice", "bob", "carol"] {
            _ = try await setup.buyAndSubmit("pro.lifetime", user: user)
        }
        let reconciler = setup.reconciler(requestsPerSecond: 2)

        // Cancelled between two families.
        let progress = Recorder<ReconciliationProgress>()
        let between = Task {
            try await reconciler.reconcileLedger { step in
                progress.append(step)
                withUnsafeCurrentTask { $0?.cancel() }
            }
        }
        await #expect(throws: IAPError(.cancelled)) { try await between.value }
        #expect(progress.items.map(\.done) == [1])

        // Cancelled while a family waits for its turn to ask Apple (after a grant, before the next page).
        let lost = try await setup.buyAndLose("coins.100", user: "alice")
        setup.world.wallet.duringNextCall { withUnsafeCurrentTask { $0?.cancel() } }
        let steps = Recorder<ReconciliationProgress>()
        let waiting = Task { try await reconciler.reconcileLedger { step in steps.append(step) } }
        await #expect(throws: IAPError(.cancelled)) { try await waiting.value }
        #expect(steps.items.isEmpty)
        #expect(setup.world.wallet.calls.map(\.transaction.transactionId).last == lost.transactionId)
    }

    @Test func aFamilyThatFailedCoversNoOtherFamilyOfItsAccount() async throws {
        /// Checkpoints whose read fails for one customer (an outage of the checkpoint store).
        actor FailingFor: ReconciliationCheckpointStore {
            let base = InMemoryReconciliationCheckpointStore()
            let key: String
            init(key: String) { self.key = key }
            func checkpoint(customerKey: String) async throws -> ReconciliationCheckpoint? {
                guard customerKey != key else {
                    throw IAPError(.storageFailure, "injected fault: checkpoint of \(customerKey)", isRetryable: true)
                }
                return await base.checkpoint(customerKey: customerKey)
            }
            func saveCheckpoint(_ checkpoint: ReconciliationCheckpoint) async throws {
                try await base.saveCheckpoint(checkpoint)
            }
        }
        let setup = try Setup()
        // Two purchase families of one Apple account in the ledger, and a lost order of the same account.
        let pro = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        _ = try await setup.buyAndSubmit("plus.monthly", user: "alice")
        let lost = try await setup.buyAndLose("coins.100", user: "alice")
        _ = await setup.world.appStore.drainNotifications()
        let reconciler = Reconciler(
            client: setup.connection.client,
            pipeline: setup.pipeline,
            checkpoints: FailingFor(key: pro.originalTransactionId),
            configuration: .init(alarmThreshold: 10, requestsPerSecond: 0),
            clock: setup.sleeper
        )

        let summary = try await reconciler.reconcileLedger()

        // The first family failed before asking Apple anything: the second must still be asked for.
        #expect(summary.families == 2)
        #expect(summary.failedCustomers.keys.sorted() == [pro.originalTransactionId])
        #expect(summary.coveredByOthers == 0)
        #expect(summary.reconciled == 1)
        #expect(summary.deliveredNow == 1)
        #expect(await setup.world.ledger.entry(transactionId: lost.transactionId)?.deliveryState == .delivered)
    }

    @Test func aRateTooSmallToSpaceInADurationPacesInsteadOfCrashing() async throws {
        let setup = try Setup()
        let lost = try await setup.buyAndLose("pro.lifetime", user: "alice")
        // One request every 10^30 seconds: more than a Duration can hold.
        let reconciler = setup.reconciler(threshold: 10, requestsPerSecond: 1e-30)

        let report = try await reconciler.reconcile(transactionId: lost.transactionId)

        #expect(report.appleTransactions == [lost.transactionId])
        #expect(report.requests == 2)
        let waits = setup.sleeper.sleeps.filter { $0 > .zero }
        #expect(waits.count == 1)
        #expect(waits.allSatisfy { $0 > .seconds(365 * 86_400) })
    }

    @Test func whatAFailedFamilyRepairedIsCountedAndAlarmed() async throws {
        /// Checkpoints that cannot be saved (the disk is full).
        struct Unsavable: ReconciliationCheckpointStore {
            func checkpoint(customerKey: String) async throws -> ReconciliationCheckpoint? { nil }
            func saveCheckpoint(_ checkpoint: ReconciliationCheckpoint) async throws {
                throw IAPError(.storageFailure, "injected fault: no space left on device")
            }
        }
        let setup = try Setup()
        let pro = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        let lost = try await setup.buyAndLose("coins.100", user: "alice")
        let alarms = setup.alarms
        let reconciler = Reconciler(
            client: setup.connection.client,
            pipeline: setup.pipeline,
            checkpoints: Unsavable(),
            configuration: .init(alarmThreshold: 0, requestsPerSecond: 0),
            clock: setup.sleeper,
            alarm: { alarm in alarms.append(alarm) }
        )

        let summary = try await reconciler.reconcileLedger()

        // The lost order was delivered before the checkpoint failed: the totals and the alarm must say so.
        #expect(summary.failedCustomers.keys.sorted() == [pro.originalTransactionId])
        #expect(setup.world.wallet.balance("alice") == 101)
        #expect(summary.deliveredNow == 1)
        #expect(summary.alreadyDelivered == 1)
        #expect(summary.appleTransactions == 2)
        #expect(summary.alarms == 1)
        #expect(setup.alarms.items.map(\.difference) == [1])
        #expect(setup.alarms.items.first?.report.deliveredNow == [lost.transactionId])

        // One customer: the run fails, and still alarms on what it repaired.
        let later = try await setup.buyAndLose("coins.100", user: "alice")
        await #expect(throws: IAPError(.storageFailure)) {
            try await reconciler.reconcile(userId: "alice")
        }
        #expect(setup.alarms.items.count == 2)
        #expect(setup.alarms.items.last?.report.deliveredNow == [later.transactionId])
    }

    @Test func aStoreWithoutFamilyListingIsReportedNotWalkedAsEmpty() async throws {
        struct UnlistableStore: EntitlementStore {
            let base: InMemoryEntitlementStore
            func insert(_ entry: LedgerEntry, signedTransaction: String?) async throws -> InsertOutcome {
                try await base.insert(entry, signedTransaction: signedTransaction)
            }
            func replace(_ entry: LedgerEntry, ifRevision revision: Int64, signedTransaction: String?) async throws
                -> Bool
            { try await base.replace(entry, ifRevision: revision, signedTransaction: signedTransaction) }
            func signedTransaction(transactionId: String) async throws -> String? {
                await base.signedTransaction(transactionId: transactionId)
            }
            func entry(transactionId: String) async throws -> LedgerEntry? {
                await base.entry(transactionId: transactionId)
            }
            func replace(_ entry: LedgerEntry, ifRevision revision: Int64) async throws -> Bool {
                try await base.replace(entry, ifRevision: revision)
            }
            func entries(originalTransactionId: String) async throws -> [LedgerEntry] {
                await base.entries(originalTransactionId: originalTransactionId)
            }
            func history(userId: String, cursor: String?, limit: Int) async throws -> LedgerPage {
                try await base.history(userId: userId, cursor: cursor, limit: limit)
            }
            func dueDeliveries(at instant: Date, limit: Int) async throws -> [LedgerEntry] {
                try await base.dueDeliveries(at: instant, limit: limit)
            }
            func parkedEntries(limit: Int) async throws -> [LedgerEntry] {
                try await base.parkedEntries(limit: limit)
            }
            func bind(appAccountToken: String, to userId: String) async throws -> BindingOutcome {
                try await base.bind(appAccountToken: appAccountToken, to: userId)
            }
            func user(forAppAccountToken appAccountToken: String) async throws -> String? {
                await base.user(forAppAccountToken: appAccountToken)
            }
            func storeRenewalInfo(_ renewalInfo: RenewalInfoPayload) async throws -> Bool {
                try await base.storeRenewalInfo(renewalInfo)
            }
            func renewalInfo(originalTransactionId: String) async throws -> RenewalInfoPayload? {
                await base.renewalInfo(originalTransactionId: originalTransactionId)
            }
            func markNotificationProcessed(_ notificationUUID: String, at instant: Date) async throws -> Bool {
                try await base.markNotificationProcessed(notificationUUID, at: instant)
            }
            func isNotificationProcessed(_ notificationUUID: String) async throws -> Bool {
                await base.isNotificationProcessed(notificationUUID)
            }
            func statistics() async throws -> LedgerStatistics { await base.statistics() }
            func originalTransactionIds(cursor: String?, limit: Int) async throws -> OriginalTransactionIdPage {
                throw IAPError(.unsupportedOperation, "this store cannot list its purchase families")
            }
        }
        let setup = try Setup()
        let world = setup.world
        let unlistable = DeliveryPipeline(
            verifier: world.verifier,
            catalog: world.catalog,
            store: UnlistableStore(base: world.ledger),
            hook: world.wallet,
            clock: world.clock,
            retryPolicy: RetryPolicy(jitter: 0)
        )
        let reconciler = Reconciler(
            client: setup.connection.client,
            pipeline: unlistable,
            checkpoints: setup.checkpoints,
            clock: setup.sleeper
        )
        await #expect(throws: IAPError(.unsupportedOperation)) {
            try await reconciler.reconcileLedger()
        }
    }

    @Test func anUploadDeliversWhatIsMissingAndRejectsForgedAndForeignData() async throws {
        let setup = try Setup()
        let delivered = try await setup.buyAndSubmit("pro.lifetime", user: "alice")
        let lost = try await setup.buyAndLose("coins.100", user: "alice")
        // Another app's transaction, signed with the same certificates: only its bundle id differs.
        let otherApp = try SimulatedAppStore(
            products: setup.world.catalog.products,
            configuration: .init(bundleId: "com.example.other"),
            pki: setup.world.appStore.pki,
            clock: setup.world.clock
        )
        let foreign = try #require(try await otherApp.purchase(productId: "coins.100", account: "alice").transaction)
        // A forged copy: the payload of the lost order with a bigger quantity, under the original signature.
        let parts = lost.signedTransaction.split(separator: ".").map(String.init)
        let payloadBytes = try #require(Base64.decodeURL(parts[1]))
        var payload = try JSONSerialization.jsonObject(with: Data(payloadBytes)) as? [String: Any] ?? [:]
        payload["quantity"] = 10
        let forgedPayload = Base64.encodeURL(try JSONSerialization.data(withJSONObject: payload))
        let forged = [parts[0], forgedPayload, parts[2]].joined(separator: ".")

        let report = await setup.reconciler(threshold: 10).reconcileUpload(
            [delivered.signedTransaction, forged, lost.signedTransaction, foreign.signedTransaction, "not a jws"],
            userId: "alice"
        )

        #expect(report.source == .clientUpload)
        #expect(report.deliveredNow == [lost.transactionId])
        #expect(report.alreadyDelivered == [delivered.transactionId])
        #expect(report.rejectedSignatures.map(\.index) == [1, 3, 4])
        #expect(
            report.rejectedSignatures.map(\.error.code) == [.signatureInvalid, .bundleIdMismatch, .malformedSignedData]
        )
        #expect(setup.world.wallet.balance("alice") == 101)
        #expect(setup.connection.transport.requestCount == 0)
    }

    @Test func aVerificationThatDidNotFinishIsRetryableNotMalformedData() async throws {
        struct OCSPResponderUnreachable: Error {}
        /// A verifier whose online checks cannot reach Apple: no verdict on the data.
        struct OfflineVerifier: Verifier {
            let base: AppStoreSignedDataVerifier
            func verifyTransaction(_ signedTransaction: String) async throws -> TransactionPayload {
                throw OCSPResponderUnreachable()
            }
            func verifyRenewalInfo(_ signedRenewalInfo: String) async throws -> RenewalInfoPayload {
                try await base.verifyRenewalInfo(signedRenewalInfo)
            }
            func verifyNotification(_ signedPayload: String) async throws -> VerifiedNotification {
                try await base.verifyNotification(signedPayload)
            }
            func verifyAppTransaction(_ signedAppTransaction: String) async throws -> AppTransactionPayload {
                try await base.verifyAppTransaction(signedAppTransaction)
            }
        }
        let setup = try Setup(environment: .production)
        let lost = try await setup.buyAndLose("coins.100", user: "alice")
        let world = setup.world
        let offline = DeliveryPipeline(
            verifier: OfflineVerifier(base: world.verifier),
            catalog: world.catalog,
            store: world.ledger,
            hook: world.wallet,
            clock: world.clock,
            retryPolicy: RetryPolicy(jitter: 0)
        )
        let reconciler = Reconciler(
            client: setup.connection.client,
            pipeline: offline,
            checkpoints: setup.checkpoints,
            clock: setup.sleeper
        )

        let upload = await reconciler.reconcileUpload([lost.signedTransaction], userId: "alice")
        #expect(upload.rejectedSignatures.map(\.error.code) == [.internalError])
        #expect(upload.rejectedSignatures.allSatisfy { $0.error.isRetryable })

        let history = try await reconciler.reconcile(transactionId: lost.transactionId)
        #expect(history.rejectedSignatures.map(\.error.code) == [.internalError])
        #expect(!history.checkpointSaved)

        // The support desk's lookup says the same of it.
        let lookup = OrderLookup(
            client: setup.connection.client,
            pipeline: offline,
            auditLog: InMemorySupportAuditLog()
        )
        let order = try await lookup.lookUp(orderId: try #require(lost.orderId), actor: "agent-7")
        #expect(order.rejectedSignatures.count == 1)
        #expect(order.rejectedSignatures.allSatisfy { $0.hasPrefix("internalError: verification did not finish") })
        #expect(setup.world.wallet.calls.isEmpty)
    }

    @Test func anUploadOfAnotherUsersPurchaseIsRefused() async throws {
        let setup = try Setup()
        let bobs = try await setup.buyAndSubmit("pro.lifetime", user: "bob")
        let report = await setup.reconciler(threshold: 10).reconcileUpload([bobs.signedTransaction], userId: "mallory")
        #expect(report.deliveredNow.isEmpty)
        #expect(report.stillFailing.map(\.error.code) == [.ownershipConflict])
        #expect(await setup.world.ledger.entry(transactionId: bobs.transactionId)?.userId == "bob")
    }

    @Test func reconciliationWorksOverTheFileLedgerAndItsCheckpointsSurviveARestart() async throws {
        let setup = try Setup()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("recon-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let checkpointPath = directory.appendingPathComponent("reconciliation.jsonl").path
        let lost = try await setup.buyAndLose("pro.lifetime", user: "alice")

        func run() async throws -> ReconciliationReport {
            let ledger = try FileEntitlementStore(directory: directory.appendingPathComponent("ledger"))
            let checkpoints = try FileReconciliationCheckpointStore(path: checkpointPath)
            let pipeline = DeliveryPipeline(
                verifier: setup.world.verifier,
                catalog: setup.world.catalog,
                store: ledger,
                hook: setup.world.wallet,
                clock: setup.world.clock,
                unclaimedTokenPolicy: .tokenIsUser
            )
            let reconciler = Reconciler(
                client: setup.connection.client,
                pipeline: pipeline,
                checkpoints: checkpoints,
                clock: setup.sleeper
            )
            let report = try await reconciler.reconcileLedger()
            #expect(report.failedCustomers.isEmpty)
            let single = try await reconciler.reconcile(transactionId: lost.transactionId)
            await checkpoints.close()
            await ledger.close()
            return single
        }

        // The ledger is empty, so the walk finds nobody; asking by transaction id finds the lost order.
        let first = try await run()
        #expect(first.deliveredNow == [lost.transactionId])
        let second = try await run()
        #expect(second.startRevision != nil)
        #expect(second.appleTransactions.isEmpty)
        #expect(setup.world.wallet.calls.filter { $0.action == .grant }.count == 1)
    }
}

/// Collects what a callback hands over, across tasks.
final class Recorder<Item: Sendable>: Sendable {
    private let storage = LockedValue<[Item]>([])

    func append(_ item: Item) {
        storage.withLock { $0.append(item) }
    }

    var items: [Item] {
        storage.withLock { $0 }
    }
}
