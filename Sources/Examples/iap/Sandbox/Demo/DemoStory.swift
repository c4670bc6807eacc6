import Foundation
import IAPApp
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPServerAPI
import IAPStorageFile
import IAPTesting

/// The story `iap demo` tells: four customers and App Review, a simulated App Store in Production and one in the
/// Sandbox, and the real verifier, pipeline, notification processor, reconciler and support tool of a production
/// server over a file ledger, on a clock that only the story moves.
///
/// Everything the story prints comes from what the library answered; nothing is scripted output.
struct DemoStory {
    /// The first instant of the story: Monday 5 January 2026, 09:00 UTC.
    static let start = Date(timeIntervalSince1970: 1_767_603_600)
    /// The namespace the app derives its appAccountTokens in.
    static let tokenNamespace = UUID(
        uuid: (
            0x6b, 0xa7, 0xb8, 0x14, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8
        )
    )
    /// The customers, in the order the final table lists them.
    static let users = ["alice", "bob", "carol", "dave", "reviewer"]
    /// The first transaction id of the sandbox, where App Review buys.
    static let firstSandboxTransactionId: UInt64 = 3_000_000_000_000_001

    let directory: URL
    let timeline: DemoTimeline
    let clock: ManualClock
    let catalog: StaticProductCatalog
    let appStore: SimulatedAppStore
    /// The sandbox App Review buys in: the same products, signed with the same chain, in the Sandbox environment.
    let sandbox: SimulatedAppStore
    let ledger: FileEntitlementStore
    let wallet: DemoWallet
    let pipeline: DeliveryPipeline
    let notifications: NotificationProcessor
    let reconciler: Reconciler
    let support: OrderLookup
    let verifier: AppStoreSignedDataVerifier
    /// What the server answered in this run.
    let tally = DemoTally()

    /// Sets up every piece over the files in `directory`.
    init(directory: URL, timeline: DemoTimeline) async throws {
        self.directory = directory
        self.timeline = timeline
        let clock = timeline.clock
        self.clock = clock

        // The products: the bundled .storekit file, written out as Xcode keeps it, and a catalog that names it with
        // the two things a .storekit file cannot say: what each product unlocks, and how many coins a purchase adds.
        try Data(DemoProducts.storeKitFile.utf8).write(
            to: directory.appendingPathComponent(DemoProducts.fileName),
            options: .atomic
        )
        let catalogFile = directory.appendingPathComponent(DemoProducts.catalogFileName)
        try Data(DemoProducts.catalogFile.utf8).write(to: catalogFile, options: .atomic)
        catalog = try StaticProductCatalog(contentsOf: catalogFile)

        let settings = catalog.storeKitSettings ?? StoreKitConfigurationSettings()
        let configuration = SimulatedAppStore.Configuration(
            bundleId: DemoProducts.bundleId,
            appAppleId: DemoProducts.appAppleId,
            environment: .production,
            gracePeriodDays: settings.billingGracePeriodEnabled ? 16 : nil,
            prices: DemoProducts.prices
        )
        appStore = try SimulatedAppStore(products: catalog.products, configuration: configuration, clock: clock)
        var sandboxConfiguration = configuration
        sandboxConfiguration.environment = .sandbox
        sandboxConfiguration.firstTransactionId = Self.firstSandboxTransactionId
        sandbox = try SimulatedAppStore(
            products: catalog.products,
            configuration: sandboxConfiguration,
            pki: appStore.pki,
            clock: clock
        )
        // A production server: Production data, and the Sandbox's too, for App Review.
        verifier = try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [appStore.pki.root],
                bundleId: DemoProducts.bundleId,
                environments: [.production, .sandbox],
                appAppleId: DemoProducts.appAppleId,
                clock: clock
            )
        )

        let ledgerDirectory = directory.appendingPathComponent("ledger", isDirectory: true)
        ledger = try FileEntitlementStore(directory: ledgerDirectory)
        // Where `iap ledger` finds the catalog: as loaded, in the swift-iap format.
        try catalog.jsonRepresentation().write(
            to: ledgerDirectory.appendingPathComponent(FileLedgerSite.catalogFileName),
            options: .atomic
        )
        wallet = try DemoWallet(file: directory.appendingPathComponent("wallet.json"))
        // No jitter, so that the story prints the same retry times on every run. App Review's sandbox purchases are
        // granted, and flagged apart from revenue.
        pipeline = DeliveryPipeline(
            verifier: verifier,
            catalog: catalog,
            store: ledger,
            hook: wallet,
            clock: clock,
            retryPolicy: RetryPolicy(jitter: 0),
            sandboxPolicy: .grantAndFlag
        )
        notifications = NotificationProcessor(pipeline: pipeline)

        let connection = try SimulatedAppStoreTransport.connect(to: appStore)
        let clients = try AppStoreServerAPIClients([
            connection.client, try SimulatedAppStoreTransport.connect(to: sandbox).client,
        ])
        let timeline = timeline
        reconciler = Reconciler(
            clients: clients,
            pipeline: pipeline,
            checkpoints: try FileReconciliationCheckpointStore(
                path: directory.appendingPathComponent(FileLedgerSite.reconciliationCheckpointsFileName).path
            ),
            configuration: .init(alarmThreshold: 0, requestsPerSecond: 20),
            alarm: { alarm in
                for discrepancy in alarm.discrepancies {
                    timeline.detail("ALARM: \(discrepancy)")
                }
            }
        )
        support = OrderLookup(
            clients: clients,
            pipeline: pipeline,
            auditLog: try FileSupportAuditLog(
                path: ledgerDirectory.appendingPathComponent(FileLedgerSite.supportAuditFileName).path,
                ledgerId: ledger.ledgerIdentity()
            ),
            fulfillment: "the demo's wallet"
        )
    }

    static func token(of user: String) -> UUID {
        AppAccountToken.derive(from: user, namespace: tokenNamespace)
    }

    // MARK: - The story

    func run() async throws {
        timeline.section("Products, from \(DemoProducts.fileName) and \(DemoProducts.catalogFileName)")
        for product in catalog.products {
            var detail = product.kind.rawValue
            if product.kind == .consumable { detail += ", \(product.unitsPerPurchase) coins a purchase" }
            if let duration = product.duration { detail += ", renews every \(duration)" }
            if !product.entitlements.isEmpty { detail += ", unlocks \(product.entitlements.joined(separator: " + "))" }
            timeline.note("\(product.productId.padding(toLength: 12, withPad: " ", startingAt: 0)) \(detail)")
        }
        if let grace = appStore.configuration.gracePeriodDays {
            timeline.note("billing grace period: \(grace) days (the .storekit file turns it on)")
        }

        timeline.section("Timeline (simulated time, UTC)")
        try await firstPurchases()
        try await lostOrder()
        try await askToBuy()
        try await appReview()
        try await nightlyReconciliation()
        try await subscriptionLife()
        try await refund()
        try await supportLookup()
        try await appKilledBeforeTheServerAnswered()
    }

    /// alice buys coins and, while the wallet service is down, Remove Ads; bob subscribes.
    private func firstPurchases() async throws {
        let coins = try await buy("coins.100", as: "alice")
        await appSends(coins, as: "alice")
        await notificationsArrive()

        try await advance(minutes: 5)
        let removeAds = try await buy("remove.ads", as: "alice")
        await wallet.failGrants(of: removeAds.transactionId, times: 1)
        timeline.event("wallet", "the wallet service stops answering")
        await appSends(removeAds, as: "alice")
        await notificationsArrive()
        try await advance(minutes: 1)
        timeline.event("wallet", "the wallet service is back")
        let drained = await pipeline.drainDueRetries()
        timeline.event("server", "retry queue: \(drained.delivered) delivered, \(drained.deferred) still failing")
        await appSends(removeAds, as: "alice", note: "app, at its next launch")

        try await advance(minutes: 4)
        let pro = try await buy("pro.monthly", as: "bob")
        await appSends(pro, as: "bob")
        await notificationsArrive()
    }

    /// bob buys coins; the app crashes before telling the server and the notification is lost in a deploy.
    private func lostOrder() async throws {
        try await advance(to: 1, 5, 9, 20)
        let coins = try await buy("coins.100", as: "bob")
        timeline.event("bob", "the app crashes before it tells the server about \(coins.transactionId)")
        await notificationsArrive(lost: "the server was being deployed; Apple's retries ran out")
    }

    /// carol, a child, asks to buy Remove Ads; a parent approves hours later.
    private func askToBuy() async throws {
        try await advance(to: 1, 5, 10, 0)
        let result = try await appStore.purchase(
            productId: "remove.ads",
            account: "carol",
            appAccountToken: Self.token(of: "carol"),
            askToBuy: true
        )
        guard case .pending(let request) = result else {
            throw IAPError(.invalidConfiguration, "the simulated store did not ask a parent: \(result)")
        }
        timeline.event("carol", "asks to buy remove.ads → pending: nothing is granted, nothing is finished")
        try await advance(to: 1, 5, 18, 0)
        let approved = try await appStore.approveAskToBuy(request)
        guard let transaction = approved.transaction else {
            throw IAPError(.invalidConfiguration, "the approved request has no transaction: \(approved)")
        }
        timeline.event("parent", "approves carol's request → transaction \(transaction.transactionId)")
        await notificationsArrive()
        await appSends(transaction, as: "carol", note: "app's update listener")
    }

    /// App Review tests the production build with a sandbox account: its purchase, signed in the Sandbox, reaches the
    /// production server, which grants it (a refusal would get the app rejected) and keeps it apart from revenue.
    private func appReview() async throws {
        try await advance(to: 1, 5, 20, 0)
        let result = try await sandbox.purchase(
            productId: "remove.ads",
            account: "reviewer",
            appAccountToken: Self.token(of: "reviewer")
        )
        guard let transaction = result.transaction else {
            throw IAPError(.invalidConfiguration, "the sandbox did not sell remove.ads: \(result)")
        }
        timeline.event(
            "review",
            "App Review buys remove.ads with a sandbox account → transaction \(transaction.transactionId), "
                + "signed in the Sandbox"
        )
        let outcome = await pipeline.submit(
            signedTransaction: transaction.signedTransaction,
            userId: "reviewer",
            orderId: nil
        )
        var text = "app → production server: \(describe(outcome))"
        if let entry = outcome.entry, pipeline.isFlagged(entry) {
            text += " (a \(entry.environment?.rawValue ?? "test") purchase: granted, flagged apart from revenue)"
        }
        if outcome.shouldFinishTransaction {
            try await sandbox.finishTransaction(transactionId: transaction.transactionId)
            text += "; the app finishes the transaction"
        }
        timeline.event("review", text)
        await notificationsArrive(from: sandbox)
    }

    /// The nightly reconciliation walks every customer in the ledger and finds bob's lost coins.
    private func nightlyReconciliation() async throws {
        try await advance(to: 1, 6, 3, 0)
        timeline.event("server", "nightly reconciliation against Apple's transaction and refund history")
        let timeline = timeline
        let summary = try await reconciler.reconcileLedger { progress in
            timeline.detail("\(progress.done)/\(progress.total) purchase families")
        }
        timeline.detail(
            "Apple: \(summary.appleTransactions) transactions; \(summary.alreadyDelivered) already delivered, "
                + "\(summary.deliveredNow) delivered now, \(summary.revokedNow) taken back now, "
                + "\(summary.stillFailing.count) still failing (\(summary.requests) API requests)"
        )
    }

    /// bob's subscription renews, fails to bill — the notification is lost, and the hourly subscription check
    /// repairs it, so bob keeps his grace period — and recovers.
    private func subscriptionLife() async throws {
        let original = try await originalTransactionId(of: "pro.monthly", account: "bob")
        try await advance(to: 2, 5, 9, 11)
        await notificationsArrive()
        try await showSubscription(of: "bob")

        try await advance(to: 2, 28, 10, 0)
        try await appStore.setBillingFailure(originalTransactionId: original, failing: true)
        timeline.event("bob", "his card expires")
        try await advance(to: 3, 5, 9, 11)
        await notificationsArrive(lost: "the notification endpoint was down for a deploy")
        try await showSubscription(of: "bob", believed: true)

        try await advance(to: 3, 5, 10, 0)
        timeline.event(
            "server",
            "hourly subscription check: Get All Subscription Statuses for every subscription the ledger believes live"
        )
        let summary = try await reconciler.reconcileSubscriptions()
        timeline.detail(
            "\(summary.families) live subscription\(summary.families == 1 ? "" : "s"), "
                + "\(summary.subscriptionStatusRequests) API request\(summary.subscriptionStatusRequests == 1 ? "" : "s"), "
                + "\(summary.renewalInfosUpdated) renewal state\(summary.renewalInfosUpdated == 1 ? "" : "s") recorded"
        )
        try await showSubscription(of: "bob")

        try await advance(to: 3, 8, 12, 0)
        try await appStore.setBillingFailure(originalTransactionId: original, failing: false)
        timeline.event("bob", "updates his card")
        await notificationsArrive()
        try await showSubscription(of: "bob")
    }

    /// alice buys coins again, then Apple refunds her first coins.
    private func refund() async throws {
        try await advance(to: 3, 9, 10, 0)
        let coins = try await buy("coins.100", as: "alice")
        await appSends(coins, as: "alice")
        await notificationsArrive()
        try await advance(to: 3, 9, 12, 0)
        let first = try await appStore.transactions(ofAccount: "alice").first { $0.payload.productId == "coins.100" }
        guard let first else {
            throw IAPError(.notFound, "alice has no coins purchase to refund")
        }
        try await appStore.refund(transactionId: first.transactionId)
        timeline.event("apple", "refunds alice's first coins (\(first.transactionId))")
        await notificationsArrive()
    }

    /// bob buys Remove Ads, nothing reaches the server, and he writes to support with the order id.
    private func supportLookup() async throws {
        try await advance(to: 3, 10, 20, 0)
        let removeAds = try await buy("remove.ads", as: "bob")
        timeline.event("bob", "the app crashes again before it tells the server")
        await notificationsArrive(lost: "the notification endpoint was down")
        guard let orderId = removeAds.orderId else {
            throw IAPError(.invalidConfiguration, "the simulated store gave no order id")
        }
        try await advance(to: 3, 11, 9, 30)
        timeline.event("bob", "writes to support: \"I paid for Remove Ads, order \(orderId), nothing happened\"")
        let report = try await support.lookUp(orderId: orderId, actor: "support@example.com")
        for item in report.transactions {
            timeline.detail(
                "lookup-order \(orderId): \(item.productId ?? "?") \(item.state.rawValue), owner "
                    + "\(item.owner ?? "unknown") (from \(item.ownerSource?.rawValue ?? "nowhere")), "
                    + (item.delivered ? "delivered" : "NOT delivered")
            )
        }
        let repaired = try await support.redeliver(orderId: orderId, actor: "support@example.com")
        for item in repaired.transactions {
            timeline.detail(
                "lookup-order \(orderId) --redeliver: \(item.transactionId) → \(item.redelivery ?? "nothing to do")"
                    + " (audit entry written)"
            )
        }
    }

    /// dave's app is built on PurchaseCoordinator: a purchase the server could not confirm waits in the app's
    /// outbox, survives the app being killed, and is delivered and finished at the next launch.
    private func appKilledBeforeTheServerAnswered() async throws {
        try await advance(to: 3, 11, 10, 0)
        let link = DemoServerLink(pipeline: pipeline)
        let outbox = FilePurchaseOutboxStorage(path: directory.appendingPathComponent("dave-outbox.json").path)
        let configuration = PurchaseCoordinator.Configuration(
            bundleId: DemoProducts.bundleId,
            environment: .production,
            appVersion: "1.0",
            appAccountTokenNamespace: Self.tokenNamespace
        )
        let app = PurchaseCoordinator(
            store: SimulatedStoreClient(store: appStore, account: "dave"),
            delivery: link,
            outbox: outbox,
            configuration: configuration,
            clock: clock
        )
        await app.start(signedInUser: "dave")
        link.setReachable(false)
        timeline.event("dave", "buys coins.100 in an app built on PurchaseCoordinator; the server cannot be reached")
        switch await app.purchase(productId: "coins.100", for: "dave") {
        case .pending(.awaitingDelivery(let transactionId)):
            timeline.detail(
                "paid (\(transactionId)); not confirmed by the server, so it waits in the app's outbox "
                    + "(dave-outbox.json) and the transaction stays unfinished"
            )
        case let other:
            timeline.detail("the purchase came to \(other)")
        }
        await app.stop()
        timeline.event("dave", "the app is killed")

        try await advance(minutes: 30)
        link.setReachable(true)
        let relaunched = PurchaseCoordinator(
            store: SimulatedStoreClient(store: appStore, account: "dave"),
            delivery: link,
            outbox: outbox,
            configuration: configuration,
            clock: clock
        )
        await relaunched.start(signedInUser: "dave")
        // The launch drains the outbox; the updates listener may hand over the same unfinished transaction at once.
        var waiting = await relaunched.pendingDeliveries()
        for _ in 0..<200 where !waiting.isEmpty {
            try await Task.sleep(for: .milliseconds(10))
            waiting = await relaunched.pendingDeliveries()
        }
        await relaunched.stop()
        var outcome: [String] = []
        for item in try await appStore.accountTransactions(ofAccount: "dave") {
            let id = item.transaction.transactionId
            let state = try await ledger.entry(transactionId: id)?.deliveryState
            outcome.append(
                "\(id) \(state == .delivered ? "delivered" : "NOT delivered"), "
                    + (item.isFinished ? "the transaction finished" : "the transaction NOT finished")
            )
        }
        timeline.event("dave", "opens the app again; the outbox is sent at launch: " + outcome.joined(separator: "; "))
        if !waiting.isEmpty {
            timeline.detail("still waiting: \(waiting.map(\.transactionId).joined(separator: ", "))")
        }
    }

    // MARK: - The app and the App Store

    /// The customer buys in the app: the simulated App Store charges and signs.
    private func buy(_ productId: String, as user: String) async throws -> SimulatedTransaction {
        let result = try await appStore.purchase(
            productId: productId,
            account: user,
            appAccountToken: Self.token(of: user)
        )
        guard let transaction = result.transaction else {
            throw IAPError(.invalidConfiguration, "the simulated store did not sell \(productId): \(result)")
        }
        timeline.event(user, "buys \(productId) → transaction \(transaction.transactionId)")
        return transaction
    }

    /// The app sends the signed transaction to the server and finishes it only when the server holds it.
    private func appSends(_ transaction: SimulatedTransaction, as user: String, note: String? = nil) async {
        let outcome = await pipeline.submit(
            signedTransaction: transaction.signedTransaction,
            userId: user,
            orderId: nil
        )
        var text = "\(note ?? "app") → server: \(describe(outcome))"
        if outcome.shouldFinishTransaction {
            do {
                try await appStore.finishTransaction(transactionId: transaction.transactionId)
                text += "; the app finishes the transaction"
            } catch {
                text += "; finishing failed: \(error)"
            }
        } else {
            text += "; the app keeps the transaction unfinished"
        }
        timeline.event(user, text)
    }

    /// The App Store's notifications reach the server's webhook, or are lost.
    private func notificationsArrive(lost reason: String? = nil) async {
        await notificationsArrive(from: appStore, lost: reason)
    }

    /// The notifications of one App Store (Production, or the sandbox) reach the server's one route, or are lost.
    private func notificationsArrive(from store: SimulatedAppStore, lost reason: String? = nil) async {
        for signedPayload in await store.drainNotifications() {
            if let reason {
                let type = (try? await verifier.verifyNotification(signedPayload))?.payload.notificationType?.rawValue
                timeline.event("apple", "notification \(type ?? "?") is lost: \(reason)")
                continue
            }
            let outcome = await notifications.process(signedPayload: signedPayload)
            timeline.event("apple", "notification → server: \(describe(outcome))")
        }
    }

    /// What the ledger says of a user's subscription now; `believed` when the ledger may be wrong.
    private func showSubscription(of user: String, believed: Bool = false) async throws {
        let (snapshot, _) = try await EntitlementEngine(catalog: catalog).evaluate(
            userId: user,
            in: ledger,
            at: clock.now
        )
        guard let pro = snapshot.entitlement(productId: "pro.monthly") else { return }
        timeline.detail(
            (believed ? "the ledger believes " : "") + "\(user)'s pro.monthly is \(pro.state.rawValue)"
                + (pro.expiresDate.map { (pro.hasAccess ? ", access until " : ", ended ") + timeline.stamp($0) } ?? "")
                + (pro.hasAccess ? "" : ": NO access")
        )
    }

    private func originalTransactionId(of productId: String, account: String) async throws -> String {
        let transactions = try await appStore.transactions(ofAccount: account)
        guard let match = transactions.first(where: { $0.payload.productId == productId }) else {
            throw IAPError(.notFound, "\(account) has no \(productId)")
        }
        return match.originalTransactionId
    }

    private func advance(minutes: Int) async throws {
        try await appStore.advance(by: .seconds(minutes * 60))
    }

    /// Moves the story's clock to a minute of 2026 (UTC); the App Store runs every renewal due on the way.
    private func advance(to month: Int, _ day: Int, _ hour: Int, _ minute: Int) async throws {
        let components = DateComponents(year: 2026, month: month, day: day, hour: hour, minute: minute)
        guard let target = Calendar.utc.date(from: components), target >= clock.now else {
            throw IAPError(.invalidArgument, "the story cannot go back in time to \(components)")
        }
        try await appStore.advance(by: .milliseconds(Int64(target.timeIntervalSince(clock.now) * 1_000)))
    }

    /// Describes an answer of the delivery pipeline, and counts it in ``tally``.
    func describe(_ outcome: DeliveryOutcome) -> String {
        tally.count(outcome)
        return switch outcome {
        case .delivered(let entry): "delivered \(entry.productId) to \(entry.userId)"
        case .alreadyDelivered(let entry): "already delivered to \(entry.userId), nothing granted again"
        case .pending: "another deliverer is on it"
        case .awaitingOwner: "recorded; nothing is granted until its owner presents it"
        case .deferred(let entry, let error):
            "grant failed (\(error.message)); a retry is scheduled"
                + (entry.nextAttemptAt.map { " for \(timeline.stamp($0, seconds: true))" } ?? "")
        case .revoked(let entry):
            "\(entry.productId) of \(entry.userId) is refunded; what it granted is taken back, once"
        case .rejected(let error): "rejected: \(error.code.rawValue): \(error.message)"
        }
    }

    /// Describes an answer of the notification processor, and counts it in ``tally``.
    func describe(_ outcome: NotificationOutcome) -> String {
        switch outcome {
        case .processed(_, let delivery): if delivery == nil { tally.count("recorded") }
        case .duplicate: tally.count("duplicate")
        case .unowned: tally.count("unowned")
        case .rejected, .failed: tally.count("rejected")
        }
        return switch outcome {
        case .processed(let type, let delivery):
            (type?.rawValue ?? "notification") + (delivery.map { ", \(describe($0))" } ?? ", recorded")
        case .duplicate: "a duplicate, ignored"
        case .unowned(let type, let transaction):
            "\(type?.rawValue ?? "notification"): \(transaction.transactionId ?? "?") recorded; no user has "
                + "claimed its appAccountToken yet, so it waits for its owner"
        case .rejected(let error): "rejected (\(error.code.rawValue))"
        case .failed(let error): "failed (\(error.code.rawValue)); Apple will retry"
        }
    }

    // MARK: - Files to try the tools on

    /// The files the closing commands use, written into the demo's directory so that they work anywhere: the
    /// simulated App Store's root certificate of this run, one transaction it signed, and a real notification
    /// signed by Apple.
    func writeSamples() async throws {
        try Data(appStore.pki.root.derBytes).write(
            to: directory.appendingPathComponent(DemoCommand.Samples.root),
            options: .atomic
        )
        let transactions = try await appStore.transactions(ofAccount: "bob")
        guard let sample = transactions.first(where: { $0.payload.productId == "pro.monthly" }) ?? transactions.first
        else {
            throw IAPError(.notFound, "the simulated App Store holds no transaction of bob")
        }
        try Data((sample.signedTransaction + "\n").utf8).write(
            to: directory.appendingPathComponent(DemoCommand.Samples.transaction),
            options: .atomic
        )
        try Data((AppleSample.productionTestNotification + "\n").utf8).write(
            to: directory.appendingPathComponent(DemoCommand.Samples.appleNotification),
            options: .atomic
        )
    }

    // MARK: - The final table

    func finalTable() async throws -> [DemoTableRow] {
        var rows: [DemoTableRow] = []
        let walletState = await wallet.state
        for user in Self.users {
            let (snapshot, _) = try await EntitlementEngine(catalog: catalog).evaluate(
                userId: user,
                in: ledger,
                at: clock.now
            )
            for entitlement in snapshot.entitlements {
                rows.append(
                    DemoTableRow(
                        user: user,
                        product: entitlement.productId,
                        state: entitlement.state.rawValue,
                        access: entitlement.hasAccess ? "yes" : "no",
                        until: entitlement.expiresDate.map { timeline.stamp($0) } ?? "-",
                        ledgerCoins: "",
                        walletCoins: ""
                    )
                )
            }
            for (productId, balance) in snapshot.balances.sorted(by: { $0.key < $1.key }) {
                rows.append(
                    DemoTableRow(
                        user: user,
                        product: productId,
                        state: "balance",
                        access: balance.balance > 0 ? "yes" : "no",
                        until: "-",
                        ledgerCoins: "\(balance.balance)",
                        walletCoins: "\(walletState.coins[user] ?? 0)"
                    )
                )
            }
        }
        return rows
    }
}

/// One line of the demo's final table.
struct DemoTableRow {
    var user: String
    var product: String
    var state: String
    var access: String
    var until: String
    var ledgerCoins: String
    var walletCoins: String
}
