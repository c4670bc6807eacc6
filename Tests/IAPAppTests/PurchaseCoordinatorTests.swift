import Foundation
import IAPApp
import IAPCore
import IAPInMemory
import IAPTesting
import Testing

/// The app side, end to end: a device of the simulated App Store, the coordinator, the HTTP contract, the server's
/// pipeline and the integrator's wallet.
@Suite("Purchase coordinator")
struct PurchaseCoordinatorTests {
    @Test("a consumable is delivered once, with its order, and finished only then")
    func buysConsumable() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())

        let result = await app.purchase(productId: AppWorld.coins, for: "alice", orderId: "order-17", quantity: 3)

        guard case .delivered(let item) = result else {
            Issue.record("expected a delivery, got \(result)")
            return
        }
        #expect(item.productId == AppWorld.coins)
        #expect(item.quantity == 3)
        #expect(item.orderId == "order-17")
        #expect(world.wallet.balance("alice") == 300)
        #expect(world.grants.map(\.orderId) == ["order-17"])
        #expect(try await world.isFinished(item.transactionId))
        #expect(await app.pendingDeliveries().isEmpty)
    }

    @Test("a non-consumable is delivered and finished; buying it again delivers nothing twice")
    func buysNonConsumable() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())

        let first = await app.purchase(productId: AppWorld.premium, for: "alice")
        let again = await app.purchase(productId: AppWorld.premium, for: "alice")

        guard case .delivered(let item) = first, case .delivered(let second) = again else {
            Issue.record("expected deliveries, got \(first) and \(again)")
            return
        }
        #expect(second.transactionId == item.transactionId)
        #expect(world.grants.count == 1)
        #expect(world.grants.first?.userId == "alice")
        #expect(try await world.isFinished(item.transactionId))
    }

    @Test("killed before the server answered: the next launch delivers the purchase once and finishes it")
    func serverUnreachableThenRestart() async throws {
        let world = try AppWorld()
        let outbox = world.outboxFile()
        world.transport.setReachable(false)
        var phone: SimulatedStoreClient? = SimulatedStoreClient(store: world.appStore, account: "alice")
        var app: PurchaseCoordinator? = try await world.launch(on: try #require(phone), outbox: outbox)

        let result = await app?.purchase(productId: AppWorld.coins, for: "alice", orderId: "order-1")

        guard case .pending(.awaitingDelivery(let transactionId)) = result else {
            Issue.record("expected a purchase awaiting delivery, got \(String(describing: result))")
            return
        }
        #expect(world.wallet.calls.isEmpty)
        #expect(try await world.isFinished(transactionId) == false)
        let kept = await app?.pendingDeliveries() ?? []
        #expect(kept.map(\.transactionId) == [transactionId])
        #expect(kept.first?.lastErrorCode == "transportFailure")

        // The app is killed: the coordinator and its device go away; the server comes back.
        await app?.stop()
        app = nil
        phone = nil
        world.transport.setReachable(true)

        let relaunchedPhone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let relaunched = try await world.launch(on: relaunchedPhone, outbox: world.outboxFile())

        try await eventually("the purchase is finished") { try await world.isFinished(transactionId) }
        #expect(world.grants.count == 1)
        #expect(world.wallet.calls.count == 1)
        #expect(world.grants.first?.orderId == "order-1")
        #expect(world.wallet.balance("alice") == 100)
        try await eventually("the outbox is empty") { await relaunched.pendingDeliveries().isEmpty }
        #expect(phone == nil)
    }

    @Test("discarded while the server was answering: the next launch delivers once")
    func discardedMidDelivery() async throws {
        let world = try AppWorld()
        let outbox = InMemoryPurchaseOutboxStorage()
        world.hang.set(true)
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: outbox)

        let purchase = Task { await app.purchase(productId: AppWorld.premium, for: "alice", orderId: "order-2") }
        try await eventually("the submission reached the server") { !world.transport.requests.isEmpty }
        purchase.cancel()
        let result = await purchase.value
        guard case .pending(.awaitingDelivery(let transactionId)) = result else {
            Issue.record("expected a purchase awaiting delivery, got \(result)")
            return
        }
        await app.stop()
        world.hang.set(false)
        #expect(world.wallet.calls.isEmpty)

        let relaunched = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "alice"),
            outbox: outbox
        )
        try await eventually("the purchase is finished") { try await world.isFinished(transactionId) }
        try await eventually("the outbox is empty") { await relaunched.pendingDeliveries().isEmpty }
        #expect(world.grants.map(\.orderId) == ["order-2"])
        #expect(world.wallet.calls.count == 1)
    }

    @Test("killed right after the store charged, before the transaction was saved: the next launch finds its order")
    func killedBeforeTheTransactionWasSaved() async throws {
        let world = try AppWorld()
        let storage = InMemoryPurchaseOutboxStorage()
        world.transport.setReachable(false)
        let app = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "alice"),
            outbox: storage
        )
        // The purchase's context is saved; nothing after it reaches the disk.
        storage.failSaves(.max, after: 1)

        let result = await app.purchase(productId: AppWorld.coins, for: "alice", orderId: "order-6", quantity: 2)

        guard case .pending(.awaitingDelivery(let transactionId)) = result else {
            Issue.record("expected a purchase awaiting delivery, got \(result)")
            return
        }
        await app.stop()
        storage.failSaves(0)
        world.transport.setReachable(true)

        // The relaunched app knows only the intent; the store hands the unfinished transaction to the listener.
        let relaunched = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "alice"),
            outbox: storage,
            user: nil
        )
        try await eventually("the purchase is finished") { try await world.isFinished(transactionId) }
        #expect(world.grants.map(\.orderId) == ["order-6"])
        #expect(world.grants.map(\.userId) == ["alice"])
        #expect(world.wallet.balance("alice") == 200)
        try await eventually("the outbox is empty") { await relaunched.pendingDeliveries().isEmpty }
    }

    @Test("a coordinator stopped and started again still receives updates, once each")
    func restartListener() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let tablet = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        await app.stop()
        await app.start(signedInUser: "alice")
        let tabletApp = try await world.launch(on: tablet, outbox: InMemoryPurchaseOutboxStorage())

        guard case .delivered(let bought) = await tabletApp.purchase(productId: AppWorld.premium, for: "alice") else {
            Issue.record("the tablet's purchase was not delivered")
            return
        }
        try await eventually("the phone saw the tablet's purchase") {
            try await app.history().items.contains {
                $0.transactionId == bought.transactionId && $0.delivery == .delivered
            }
        }
        #expect(world.wallet.calls.count == 1)
    }

    @Test("once the server answers again, the next purchase sends what waited in the outbox")
    func drainAfterPurchase() async throws {
        let world = try AppWorld()
        let app = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "alice"),
            outbox: InMemoryPurchaseOutboxStorage()
        )
        world.transport.setReachable(false)
        let waiting = await app.purchase(productId: AppWorld.coins, for: "alice", orderId: "order-10")
        #expect(waiting.failureKind == nil)
        let report = await app.drainOutbox()
        #expect(report.delivered.isEmpty && report.notDue.count == 1)
        world.transport.setReachable(true)

        guard case .delivered = await app.purchase(productId: AppWorld.premium, for: "alice") else {
            Issue.record("the second purchase was not delivered")
            return
        }
        try await eventually("the waiting purchase is delivered") { await app.pendingDeliveries().isEmpty }
        #expect(Set(world.grants.compactMap(\.orderId)) == ["order-10"])
        #expect(world.wallet.balance("alice") == 101)
    }

    @Test("restore shows only what the account bought and still has, and re-delivers what the server lacks")
    func restoreShowsOnlyWhatWasBought() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        _ = await app.purchase(productId: AppWorld.premium, for: "alice")
        _ = await app.purchase(productId: AppWorld.coins, for: "alice")
        let bob = SimulatedStoreClient(store: world.appStore, account: "bob")
        _ = try await world.launch(on: bob, outbox: InMemoryPurchaseOutboxStorage(), user: "bob")
            .purchase(productId: AppWorld.season, for: "bob")
        #expect(world.grants.count == 3)

        // A new install on a new device: nothing local.
        let tablet = SimulatedStoreClient(store: world.appStore, account: "alice")
        let fresh = try await world.launch(on: tablet, outbox: InMemoryPurchaseOutboxStorage())
        let report = try await fresh.restore()

        #expect(report.entitlements.map(\.productId) == [AppWorld.premium])
        #expect(report.submitted.count == 1)
        #expect(report.failures.isEmpty)
        #expect(await tablet.syncCount == 1)
        #expect(world.grants.count == 3)
    }

    @Test("a purchase made offline fails as retryable, charges nothing and leaves nothing behind")
    func offlinePurchase() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let outbox = InMemoryPurchaseOutboxStorage()
        let app = try await world.launch(on: phone, outbox: outbox)
        _ = try await app.products([AppWorld.coins])
        await phone.setOffline(true)

        let result = await app.purchase(productId: AppWorld.coins, for: "alice", orderId: "order-3")

        guard case .failed(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code == .transportFailure)
        #expect(result.failureKind == .retryable)
        #expect(try await world.transactions(of: "alice").isEmpty)
        #expect(await app.pendingDeliveries().isEmpty)
        await #expect(throws: IAPError(.transportFailure)) { try await app.restore() }

        await phone.setOffline(false)
        guard case .delivered = await app.purchase(productId: AppWorld.coins, for: "alice", orderId: "order-3") else {
            Issue.record("the purchase did not go through once online")
            return
        }
        #expect(world.wallet.balance("alice") == 100)
    }

    @Test("Ask to Buy grants nothing until a parent approves, then arrives through the updates with its order")
    func askToBuy() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "kid", askToBuy: true)
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage(), user: "kid-42")
        let events = await app.events()

        let result = await app.purchase(productId: AppWorld.premium, for: "kid-42", orderId: "order-9")

        #expect(result == .pending(.awaitingApproval))
        #expect(world.wallet.calls.isEmpty)
        #expect(try await world.transactions(of: "kid").isEmpty)

        world.clock.advance(by: .seconds(2 * 86_400))
        let request = try #require(await world.appStore.pendingAskToBuyRequestIds.first)
        _ = try await world.appStore.approveAskToBuy(request)

        var delivered: PurchaseHistoryItem?
        for await event in events {
            if case .delivered(let item) = event {
                delivered = item
                break
            }
        }
        #expect(delivered?.productId == AppWorld.premium)
        #expect(delivered?.orderId == "order-9")
        #expect(world.grants.map(\.userId) == ["kid-42"])
        #expect(world.grants.map(\.orderId) == ["order-9"])
        let transactionId = try #require(delivered?.transactionId)
        #expect(try await world.isFinished(transactionId, account: "kid"))
    }

    @Test("a refund arriving through the updates revokes, and clears the refund-requested mark")
    func refundRevokes() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        guard case .delivered(let item) = await app.purchase(productId: AppWorld.premium, for: "alice") else {
            Issue.record("the purchase was not delivered")
            return
        }

        #expect(try await app.requestRefund(transactionId: item.transactionId) == .success)
        #expect(await app.isRefundRequested(transactionId: item.transactionId))
        #expect(try await app.history().items.first?.refundRequestedAt != nil)
        try await world.appStore.refund(transactionId: item.transactionId)

        try await eventually("the revocation is recorded") { world.revokes.count == 1 }
        try await eventually("the mark is cleared") {
            await !app.isRefundRequested(transactionId: item.transactionId)
        }
        try await eventually("the refund is settled") { await app.pendingDeliveries().isEmpty }
        #expect(world.revokes.first?.userId == "alice")
        let history = try await app.history()
        #expect(history.items.first?.isRevoked == true)
        #expect(history.items.first?.delivery == .revoked)
        #expect(try await world.isFinished(item.transactionId))
    }

    @Test("a refund the history saw first is still submitted to the server before it is finished")
    func refundSeenByHistoryFirst() async throws {
        let world = try AppWorld()
        let store = ScriptedUpdatesStoreClient(device: SimulatedStoreClient(store: world.appStore, account: "alice"))
        let app = PurchaseCoordinator(
            store: store,
            delivery: world.delivery(),
            outbox: InMemoryPurchaseOutboxStorage(),
            configuration: AppWorld.configuration,
            clock: world.clock
        )
        await app.start(signedInUser: "alice")
        guard case .delivered(let item) = await app.purchase(productId: AppWorld.premium, for: "alice") else {
            Issue.record("the purchase was not delivered")
            return
        }
        try await world.appStore.refund(transactionId: item.transactionId)

        // The history screen reads the store's list, revocation included, before the update arrives.
        try await app.refreshHistory()
        #expect(try await app.history().items.first?.isRevoked == true)
        let revoked = try #require(
            try await world.transactions(of: "alice").first { $0.transaction.transactionId == item.transactionId }
        )
        store.send(revoked.transaction.signedTransaction)

        try await eventually("the revocation reached the server") { world.revokes.count == 1 }
        try await eventually("the refund is settled") {
            try await app.history().items.first?.delivery == .revoked
        }
    }

    @Test("a refund the history saw first does not label a delivery the server granted as revoked")
    func deliveryAfterRefundSeenByHistory() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let store = ScriptedUpdatesStoreClient(device: phone)
        let app = PurchaseCoordinator(
            store: store,
            delivery: world.delivery(),
            outbox: InMemoryPurchaseOutboxStorage(),
            configuration: AppWorld.configuration,
            clock: world.clock
        )
        await app.start(signedInUser: "alice")
        world.transport.setReachable(false)
        guard case .pending = await app.purchase(productId: AppWorld.premium, for: "alice") else {
            Issue.record("the purchase should wait for the server")
            return
        }
        let transactionId = try #require(await app.pendingDeliveries().first?.transactionId)
        try await world.appStore.refund(transactionId: transactionId)
        try await app.refreshHistory()

        // The outbox still holds the purchase as bought: the server grants it, it does not revoke it.
        world.transport.setReachable(true)
        await app.drainOutbox(force: true)
        #expect(world.grants.count == 1)
        #expect(world.revokes.isEmpty)
        #expect(try await app.history().items.first?.delivery == .delivered)

        // The revocation then arrives through the updates, and only the server's answer settles it.
        let revoked = try #require(
            try await world.transactions(of: "alice").first { $0.transaction.transactionId == transactionId }
        )
        store.send(revoked.transaction.signedTransaction)
        try await eventually("the revocation reached the server") { world.revokes.count == 1 }
        try await eventually("the refund is settled") {
            try await app.history().items.first?.delivery == .revoked
        }
    }

    @Test("a revocation settled while the refund sheet was open leaves no refund-requested mark behind")
    func revokedWhileRefundSheetOpen() async throws {
        let world = try AppWorld()
        let appStore = world.appStore
        let coordinator = Box<PurchaseCoordinator>()
        let store = RefundSheetStoreClient(device: SimulatedStoreClient(store: appStore, account: "alice")) { id in
            // The App Store settles an earlier refund request while this sheet is still open.
            try await appStore.refund(transactionId: id)
            let app = try #require(coordinator.value)
            try await eventually("the revocation is settled") {
                try await app.history().items.first?.delivery == .revoked
            }
        }
        let app = PurchaseCoordinator(
            store: store,
            delivery: world.delivery(),
            outbox: InMemoryPurchaseOutboxStorage(),
            configuration: AppWorld.configuration,
            clock: world.clock
        )
        coordinator.set(app)
        await app.start(signedInUser: "alice")
        guard case .delivered(let item) = await app.purchase(productId: AppWorld.premium, for: "alice") else {
            Issue.record("the purchase was not delivered")
            return
        }

        #expect(try await app.requestRefund(transactionId: item.transactionId) == .success)

        #expect(world.revokes.count == 1)
        #expect(await !app.isRefundRequested(transactionId: item.transactionId))
        #expect(try await app.history().items.first?.refundRequestedAt == nil)
    }

    @Test("two devices of one account: each sees the other's purchases, delivered once")
    func twoDevices() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let tablet = SimulatedStoreClient(store: world.appStore, account: "alice")
        let phoneApp = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        let tabletApp = try await world.launch(on: tablet, outbox: InMemoryPurchaseOutboxStorage())

        guard case .delivered(let bought) = await phoneApp.purchase(productId: AppWorld.premium, for: "alice") else {
            Issue.record("the phone's purchase was not delivered")
            return
        }
        try await eventually("the tablet saw the phone's purchase") {
            try await tabletApp.history().items.contains { $0.transactionId == bought.transactionId }
        }
        guard case .delivered(let coins) = await tabletApp.purchase(productId: AppWorld.coins, for: "alice") else {
            Issue.record("the tablet's purchase was not delivered")
            return
        }
        try await eventually("the phone saw the tablet's purchase") {
            try await phoneApp.history().items.contains { $0.transactionId == coins.transactionId }
        }
        try await eventually("both devices are settled") {
            let phoneWaiting = await phoneApp.pendingDeliveries()
            let tabletWaiting = await tabletApp.pendingDeliveries()
            return phoneWaiting.isEmpty && tabletWaiting.isEmpty
        }
        #expect(world.grants.count == 2)
        #expect(world.wallet.balance("alice") == 101)
    }

    @Test("with derived tokens, a purchase of another user seen on a device is not given to its signed-in user")
    func derivedTokenOfAnotherUser() async throws {
        let world = try AppWorld()
        var configuration = AppWorld.configuration
        configuration.appAccountTokenNamespace = UUID(uuidString: "6f1b7c7e-3f52-4a8e-9a1e-0c2d9f6b5a10")
        func launch(_ device: SimulatedStoreClient, user: String) async throws -> PurchaseCoordinator {
            let coordinator = PurchaseCoordinator(
                store: device,
                delivery: world.delivery(),
                outbox: InMemoryPurchaseOutboxStorage(),
                configuration: configuration,
                clock: world.clock
            )
            await coordinator.start(signedInUser: user)
            return coordinator
        }
        // One App Store account, two people of the app: alice on the phone, bob on the shared tablet.
        let phoneApp = try await launch(SimulatedStoreClient(store: world.appStore, account: "family"), user: "alice")
        let tabletApp = try await launch(SimulatedStoreClient(store: world.appStore, account: "family"), user: "bob")

        guard case .delivered(let bought) = await phoneApp.purchase(productId: AppWorld.premium, for: "alice") else {
            Issue.record("the phone's purchase was not delivered")
            return
        }
        try await eventually("the tablet saw the phone's purchase") {
            try await tabletApp.history().items.contains { $0.transactionId == bought.transactionId }
        }
        try await eventually("the tablet settled it with the server") {
            await tabletApp.pendingDeliveries().isEmpty
        }
        #expect(world.grants.map(\.userId) == ["alice"])
        #expect(try await tabletApp.history(for: "bob").items.isEmpty)
        let submittedForBob = try world.transport.requests.contains { request in
            let body = try JSONDecoder().decode(TransactionSubmission.self, from: request.body ?? Data())
            return body.userId == "bob"
        }
        #expect(!submittedForBob)
    }

    @Test("a server that rejects (bundle mismatch) leaves the transaction unfinished and reported")
    func serverRejects() async throws {
        let world = try AppWorld(serverBundleId: "com.example.other")
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())

        let result = await app.purchase(productId: AppWorld.premium, for: "alice", orderId: "order-5")

        guard case .failed(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code == .bundleIdMismatch)
        #expect(result.failureKind == .configuration)
        #expect(world.wallet.calls.isEmpty)
        let kept = await app.pendingDeliveries()
        #expect(kept.count == 1)
        #expect(kept.first?.state == .rejected)
        #expect(kept.first?.lastErrorCode == "bundleIdMismatch")
        #expect(kept.first?.orderId == "order-5")
        let transactionId = try #require(kept.first?.transactionId)
        #expect(try await world.isFinished(transactionId) == false)
        #expect(try await app.history().items.first?.delivery == .rejected)
    }

    @Test("a renewal arrives through the updates and is delivered to the subscriber")
    func renewalThroughUpdates() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage(), user: nil)
        guard case .delivered = await app.purchase(productId: AppWorld.monthly, for: "alice") else {
            Issue.record("the subscription was not delivered")
            return
        }

        try await world.appStore.advance(by: .seconds(32 * 86_400))

        try await eventually("the renewal is delivered") { world.grants.count == 2 }
        #expect(Set(world.grants.map(\.userId)) == ["alice"])
        try await eventually("the renewal is finished") { await app.pendingDeliveries().isEmpty }
    }

    @Test("unknown products are reported with what it takes to fix them; products are cached until they expire")
    func products() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())

        let lookup = try await app.products([AppWorld.premium, "pro.lifetime.typo", AppWorld.coins])

        #expect(lookup.products.map(\.id) == [AppWorld.premium, AppWorld.coins])
        let missing = try #require(lookup.missing.first)
        #expect(missing.productId == "pro.lifetime.typo")
        #expect(missing.bundleId == AppWorld.bundleId)
        #expect(missing.environment == .sandbox)
        #expect(missing.appVersion == "2.4.1")
        #expect(missing.error.message.contains("pro.lifetime.typo"))
        #expect(missing.error.message.contains(AppWorld.bundleId))

        let unknown = await app.purchase(productId: "pro.lifetime.typo", for: "alice")
        #expect(unknown.failureKind == .configuration)
        #expect(unknown == .failed(IAPError(.unknownProduct)))

        await phone.setOffline(true)
        #expect(try await app.product(id: AppWorld.premium).id == AppWorld.premium)
        world.clock.advance(by: .seconds(3_601))
        await #expect(throws: IAPError(.transportFailure)) { try await app.product(id: AppWorld.premium) }
    }

    @Test("the order history pages newest first, keeps finished consumables, and new purchases never shift a page")
    func historyPages() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        var bought: [String] = []
        for product in [AppWorld.coins, AppWorld.premium, AppWorld.coins] {
            world.clock.advance(by: .seconds(60))
            guard case .delivered(let item) = await app.purchase(productId: product, for: "alice") else {
                Issue.record("a purchase was not delivered")
                return
            }
            bought.append(item.transactionId)
        }

        let first = try await app.history(limit: 2)
        #expect(first.items.map(\.transactionId) == [bought[2], bought[1]])
        world.clock.advance(by: .seconds(60))
        _ = await app.purchase(productId: AppWorld.coins, for: "alice")
        let second = try await app.history(after: first.nextCursor, limit: 2)
        #expect(second.items.map(\.transactionId) == [bought[0]])
        #expect(second.nextCursor == nil)
        let bobs = try await app.history(for: "bob")
        #expect(bobs.items.isEmpty)
        await #expect(throws: IAPError(.invalidArgument)) { try await app.history(after: "garbage") }
    }
}
