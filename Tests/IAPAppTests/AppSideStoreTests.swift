import Foundation
import IAPApp
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTesting
import Testing

/// What else StoreKit offers the app: pending Ask to Buy rows and prices in the history, the refund sheet's errors,
/// the manage-subscriptions sheet, the app transaction.
@Suite("App side of the store")
struct AppSideStoreTests {
    @Test("the history shows prices and currencies, and an Ask to Buy request as a pending row until it is approved")
    func pendingRowsAndPrices() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "kid", askToBuy: true)
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage(), user: "kid")

        let asked = await app.purchase(productId: AppWorld.coins, for: "kid", orderId: "order-1", quantity: 2)
        #expect(asked == .pending(.awaitingApproval))
        var page = try await app.history(for: "kid")
        #expect(page.items.isEmpty)
        let row = try #require(page.pendingApprovals.first)
        #expect(page.pendingApprovals.count == 1)
        #expect(row.productId == AppWorld.coins)
        #expect(row.userId == "kid")
        #expect(row.orderId == "order-1")
        #expect(row.quantity == 2)
        #expect(row.requestedAt == world.clock.now)
        // Asking again shows one row, not two; another user's history shows none.
        _ = await app.purchase(productId: AppWorld.coins, for: "kid", orderId: "order-1", quantity: 2)
        #expect(try await app.history(for: "kid").pendingApprovals.count == 1)
        #expect(try await app.history(for: "someone-else").pendingApprovals.isEmpty)

        // The parent approves: the purchase arrives through the updates and replaces the row.
        let request = try #require(await world.appStore.pendingAskToBuyRequestIds.first)
        _ = try await world.appStore.approveAskToBuy(request)
        try await eventually("the approved purchase is delivered") { !world.grants.isEmpty }
        try await eventually("the row is gone") { try await app.history(for: "kid").pendingApprovals.isEmpty }
        page = try await app.history(for: "kid")
        let item = try #require(page.items.first)
        #expect(item.orderId == "order-1")
        #expect(item.quantity == 2)
        #expect(item.price == 990)
        #expect(item.currency == "USD")
    }

    @Test("an Ask to Buy request nobody answers stops showing after a day")
    func pendingRowsExpire() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "kid", askToBuy: true)
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage(), user: "kid")
        _ = await app.purchase(productId: AppWorld.premium, for: "kid")
        world.clock.advance(by: .seconds(23 * 3_600))
        #expect(try await app.history().pendingApprovals.count == 1)
        world.clock.advance(by: .seconds(2 * 3_600))
        #expect(try await app.history().pendingApprovals.isEmpty)
    }

    @Test(
        "every refund request error maps to a failure kind and leaves no refund mark",
        arguments: [
            (IAPError(.refundAlreadyRequested, "duplicate"), PurchaseFailureKind.alreadyRequested),
            (IAPError(.refundRequestFailed, "failed", isRetryable: true), .retryable),
            (IAPError(.transportFailure, "offline", isRetryable: true), .retryable),
            (IAPError(.userCancelled, "cancelled"), .userCancelled),
            (IAPError(.unsupportedOperation, "no sheet"), .configuration),
            (IAPError(.purchaseNotAllowed, "not in this storefront"), .configuration),
        ]
    )
    func refundErrors(error: IAPError, kind: PurchaseFailureKind) async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        guard case .delivered(let item) = await app.purchase(productId: AppWorld.premium, for: "alice") else {
            Issue.record("the purchase was not delivered")
            return
        }
        await phone.failNextRefundRequest(with: error)
        let thrown = await #expect(throws: IAPError.self) {
            try await app.requestRefund(transactionId: item.transactionId)
        }
        let failure = try #require(thrown)
        #expect(failure.code == error.code)
        #expect(PurchaseFailureKind.classify(failure) == kind)
        #expect(await !app.isRefundRequested(transactionId: item.transactionId))
        #expect(await phone.refundRequests.isEmpty)
    }

    @Test("a device without the App Store's sheets says so for refunds, subscriptions and offer codes")
    func noSheets() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        await phone.setSheetsSupported(false)
        await #expect(throws: IAPError(.unsupportedOperation)) { try await app.showManageSubscriptions() }
        await #expect(throws: IAPError(.unsupportedOperation)) { try await app.presentOfferCodeRedemption() }
        await #expect(throws: IAPError(.unsupportedOperation)) { try await app.requestRefund(transactionId: "1") }
    }

    @Test("the manage-subscriptions sheet is shown for the group asked for")
    func manageSubscriptions() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        let product = try await app.product(id: AppWorld.monthly)
        #expect(product.subscriptionGroupId == "plus")
        try await app.showManageSubscriptions(groupId: product.subscriptionGroupId)
        try await app.showManageSubscriptions()
        #expect(await phone.manageSubscriptionsRequests == ["plus", nil])
    }

    @Test("the app transaction names the customer's download, verifies on the server, and goes with submissions")
    func appTransaction() async throws {
        let world = try AppWorld()
        var configuration = AppWorld.configuration
        configuration.sendsAppTransaction = true
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = PurchaseCoordinator(
            store: phone,
            delivery: world.delivery(),
            outbox: InMemoryPurchaseOutboxStorage(),
            configuration: configuration,
            clock: world.clock
        )
        await app.start(signedInUser: "alice")
        let info = try await app.appTransaction()
        #expect(info.appTransactionId == (await world.appStore.appTransactionId(ofAccount: "alice")))
        #expect(info.originalApplicationVersion == "1")
        #expect(info.environment == .sandbox)
        #expect(info.bundleId == AppWorld.bundleId)
        let verified = try world.appStore.makeVerifier().appTransaction(info.signedAppTransaction)
        #expect(verified.appTransactionId == info.appTransactionId)

        guard case .delivered = await app.purchase(productId: AppWorld.premium, for: "alice") else {
            Issue.record("the purchase was not delivered")
            return
        }
        let sent = try #require(world.submissions.last?.signedAppTransaction)
        #expect(try world.appStore.makeVerifier().appTransaction(sent).appTransactionId == info.appTransactionId)

        // Off by default: nothing more is sent.
        let plain = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "bob"),
            outbox: InMemoryPurchaseOutboxStorage(),
            user: "bob"
        )
        _ = await plain.purchase(productId: AppWorld.premium, for: "bob")
        #expect(world.submissions.last?.signedAppTransaction == nil)
    }

    @Test("with SKIncludeConsumableInAppPurchaseHistory, a new device's history shows finished consumables")
    func consumableHistory() async throws {
        let world = try AppWorld()
        let phone = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "alice"),
            outbox: InMemoryPurchaseOutboxStorage()
        )
        guard case .delivered(let coins) = await phone.purchase(productId: AppWorld.coins, for: "alice") else {
            Issue.record("the coins were not delivered")
            return
        }
        // A new device, whose cache is empty: without the key, StoreKit does not list the finished consumable.
        let tablet = SimulatedStoreClient(store: world.appStore, account: "alice")
        let without = try await world.launch(on: tablet, outbox: InMemoryPurchaseOutboxStorage())
        #expect(try await without.history().items.isEmpty)
        await tablet.setIncludesFinishedConsumables(true)
        let with = try await world.launch(on: tablet, outbox: InMemoryPurchaseOutboxStorage())
        #expect(try await with.history().items.map(\.transactionId) == [coins.transactionId])
        #expect(try await with.latestTransaction(for: AppWorld.coins)?.transactionId == coins.transactionId)
    }
}
