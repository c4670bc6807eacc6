import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTesting
import Testing

@Suite("SimulatedAppStore purchases and signing")
struct SimulatedAppStorePurchaseTests {
    typealias C = SimulatedCatalog

    @Test("Everything the store signs verifies for its app and fails for another bundle id or environment")
    func signedDataVerifies() async throws {
        let harness = try StoreHarness()
        let transaction = try await harness.buy(C.proMonthly)
        let renewal = try await harness.store.renewalInfo(originalTransactionId: transaction.originalTransactionId)
        let notifications = await harness.store.pendingNotifications
        #expect(notifications.count == 1)

        let verified = try harness.verifier.transaction(transaction.signedTransaction)
        #expect(verified == transaction.payload)
        #expect(try harness.verifier.renewalInfo(renewal.signedRenewalInfo) == renewal.payload)
        let notification = try harness.verifier.notification(try #require(notifications.first))
        #expect(notification.transaction?.transactionId == transaction.transactionId)

        var otherApp = harness.store.verifierConfiguration
        otherApp.bundleId = "com.example.other"
        let otherVerifier = try AppStoreSignedDataVerifier(configuration: otherApp)
        #expect(throws: IAPError(.bundleIdMismatch)) { try otherVerifier.transaction(transaction.signedTransaction) }
        #expect(throws: IAPError(.bundleIdMismatch)) { try otherVerifier.notification(notifications[0]) }

        var production = harness.store.verifierConfiguration
        production.environments = [.production]
        let productionVerifier = try AppStoreSignedDataVerifier(configuration: production)
        #expect(throws: IAPError(.environmentMismatch)) {
            try productionVerifier.transaction(transaction.signedTransaction)
        }
        #expect(throws: IAPError(.environmentMismatch)) {
            try productionVerifier.renewalInfo(renewal.signedRenewalInfo)
        }

        let appleRootVerifier = try AppStoreSignedDataVerifier(
            configuration: .init(bundleId: "com.example.app", environment: .sandbox)
        )
        #expect(throws: IAPError(.untrustedRoot)) { try appleRootVerifier.transaction(transaction.signedTransaction) }
    }

    @Test("The JWS header is Apple's: alg ES256 and a three-certificate x5c, nothing else")
    func headerShape() async throws {
        let harness = try StoreHarness()
        let transaction = try await harness.buy(C.coins)
        let headerSegment = try #require(transaction.signedTransaction.split(separator: ".").first)
        let headerBytes = try #require(Base64.decodeURL(headerSegment))
        let header = try #require(try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any])
        #expect(Set(header.keys) == ["alg", "x5c"])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["x5c"] as? [String] == harness.store.pki.x5c)
    }

    @Test("A consumable purchase carries every field Apple sets")
    func consumableFields() async throws {
        let harness = try StoreHarness()
        let token = UUID()
        let transaction = try await harness.buy(C.coins, token: token, quantity: 3)
        let payload = transaction.payload
        #expect(payload.transactionId == "2000000000000001")
        #expect(payload.originalTransactionId == payload.transactionId)
        #expect(payload.webOrderLineItemId == nil)
        #expect(payload.bundleId == "com.example.app")
        #expect(payload.productId == C.coins)
        #expect(payload.subscriptionGroupIdentifier == nil)
        #expect(payload.purchaseDate == C.start)
        #expect(payload.originalPurchaseDate == C.start)
        #expect(payload.expiresDate == nil)
        #expect(payload.quantity == 3)
        #expect(payload.type == .consumable)
        #expect(payload.appAccountToken == token.uuidString.lowercased())
        #expect(payload.inAppOwnershipType == .purchased)
        #expect(payload.signedDate == C.start)
        #expect(payload.environment == .sandbox)
        #expect(payload.storefront == "USA")
        #expect(payload.storefrontId == "143441")
        #expect(payload.transactionReason == .purchase)
        #expect(payload.currency == "USD")
        #expect(payload.price == 990)
        #expect(payload.revocationDate == nil)
        let appTransactionId = await harness.store.appTransactionId(ofAccount: "alice")
        #expect(payload.appTransactionId == appTransactionId)
        #expect(appTransactionId != nil)

        let orderId = try #require(transaction.orderId)
        #expect(orderId.count == 10 && orderId.first == "M")
        #expect(orderId.dropFirst().allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) })

        let notifications = try await harness.notifications()
        #expect(notifications.map(Event.init) == [Event(.oneTimeCharge)])
        #expect(notifications[0].transaction == payload)
        #expect(notifications[0].payload.version == "2.0")
        #expect(notifications[0].payload.data?.status == nil)
        #expect(notifications[0].payload.data?.bundleVersion == "1")
        #expect(notifications[0].payload.data?.appAppleId == nil)
        #expect(UUID(uuidString: notifications[0].payload.notificationUUID ?? "") != nil)
    }

    @Test("Consumables are each their own original transaction; ids and order ids increase and differ")
    func consumableIds() async throws {
        let harness = try StoreHarness()
        var transactions: [SimulatedTransaction] = []
        for _ in 0..<5 {
            transactions.append(try await harness.buy(C.coins))
        }
        let ids = transactions.map(\.transactionId)
        #expect(ids == (1...5).map { String(2_000_000_000_000_000 + $0) })
        #expect(transactions.map(\.originalTransactionId) == ids)
        #expect(Set(transactions.compactMap(\.orderId)).count == 5)
    }

    @Test("A non-consumable is bought once; buying it again restores it without a new charge")
    func nonConsumable() async throws {
        let harness = try StoreHarness()
        let first = try await harness.buy(C.premium)
        #expect(first.payload.type == .nonConsumable)
        #expect(first.payload.price == 4990)
        #expect(first.payload.expiresDate == nil)
        let again = try await harness.buy(C.premium)
        #expect(again.transactionId == first.transactionId)
        #expect(try await harness.events() == [Event(.oneTimeCharge)])
    }

    @Test("A non-renewing subscription has its own transaction and, as Apple's, no expiresDate")
    func nonRenewing() async throws {
        let harness = try StoreHarness()
        let transaction = try await harness.buy(C.seasonPass)
        #expect(transaction.payload.type == .nonRenewingSubscription)
        #expect(transaction.payload.expiresDate == nil)
        #expect(transaction.payload.webOrderLineItemId == nil)
        #expect(try await harness.events() == [Event(.oneTimeCharge)])
    }

    @Test("An auto-renewable subscription has a group, an expiry one period later and a web order line item id")
    func subscriptionFields() async throws {
        let harness = try StoreHarness()
        let transaction = try await harness.buy(C.proYearly)
        let payload = transaction.payload
        #expect(payload.type == .autoRenewableSubscription)
        #expect(payload.subscriptionGroupIdentifier == C.group)
        #expect(payload.expiresDate == Date(millisecondsSince1970: 1_798_761_600_000))  // 2027-01-01
        #expect(payload.webOrderLineItemId != nil)
        #expect(payload.price == 99990)
        #expect(payload.transactionReason == .purchase)

        let notifications = try await harness.notifications()
        #expect(notifications.map(Event.init) == [Event(.subscribed, .initialBuy)])
        #expect(notifications[0].payload.data?.status == .active)
        let renewal = try #require(notifications[0].renewalInfo)
        #expect(renewal.originalTransactionId == transaction.originalTransactionId)
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.autoRenewProductId == C.proYearly)
        #expect(renewal.productId == C.proYearly)
        #expect(renewal.renewalDate == payload.expiresDate)
        #expect(renewal.renewalPrice == 99990)
        #expect(renewal.isInBillingRetryPeriod == false)
        #expect(renewal.expirationIntent == nil)
        #expect(renewal.signedDate == C.start)
        #expect(renewal.recentSubscriptionStartDate == C.start)
    }

    @Test("Ask to Buy: pending until approved, then the purchase happens at approval time")
    func askToBuyApproved() async throws {
        let harness = try StoreHarness()
        let result = try await harness.store.purchase(productId: C.premium, account: "kid", askToBuy: true)
        guard case .pending(let requestId) = result else {
            Issue.record("expected pending, got \(result)")
            return
        }
        #expect(await harness.store.pendingAskToBuyRequestIds == [requestId])
        #expect(try await harness.store.transactions(ofAccount: "kid").isEmpty)
        #expect(await harness.store.pendingNotifications.isEmpty)

        harness.clock.advance(by: .seconds(3_600))
        let approved = try await harness.store.approveAskToBuy(requestId)
        let transaction = try #require(approved.transaction)
        #expect(transaction.payload.productId == C.premium)
        #expect(transaction.payload.purchaseDate == C.start.addingTimeInterval(3_600))
        #expect(try await harness.events() == [Event(.oneTimeCharge)])
        #expect(await harness.store.pendingAskToBuyRequestIds.isEmpty)
        await #expect(throws: IAPError(.notFound)) { try await harness.store.approveAskToBuy(requestId) }
    }

    @Test("Ask to Buy declined grants nothing")
    func askToBuyDeclined() async throws {
        let harness = try StoreHarness()
        let result = try await harness.store.purchase(productId: C.proMonthly, account: "kid", askToBuy: true)
        guard case .pending(let requestId) = result else {
            Issue.record("expected pending, got \(result)")
            return
        }
        try await harness.store.declineAskToBuy(requestId)
        #expect(try await harness.store.transactions(ofAccount: "kid").isEmpty)
        #expect(await harness.store.pendingNotifications.isEmpty)
        await #expect(throws: IAPError(.notFound)) { try await harness.store.declineAskToBuy(requestId) }
    }

    @Test("An injected failure fails the next purchase only, recording nothing")
    func failureInjection() async throws {
        let harness = try StoreHarness()
        await harness.store.failNextPurchase(with: IAPError(.transportFailure, "network down"))
        let failed = try await harness.store.purchase(productId: C.coins, account: "alice")
        #expect(failed == .failed(IAPError(.transportFailure)))
        #expect(try await harness.store.transactions(ofAccount: "alice").isEmpty)
        #expect(await harness.store.pendingNotifications.isEmpty)

        let next = try await harness.buy(C.coins)
        #expect(next.transactionId == "2000000000000001")
    }

    @Test("Unknown products and bad quantities fail without recording anything")
    func invalidPurchases() async throws {
        let harness = try StoreHarness()
        let unknown = try await harness.store.purchase(productId: "com.example.nope", account: "alice")
        #expect(unknown == .failed(IAPError(.unknownProduct)))
        for (product, quantity) in [(C.coins, 0), (C.coins, 11), (C.premium, 2), (C.proMonthly, 2)] {
            let result = try await harness.store.purchase(productId: product, account: "alice", quantity: quantity)
            #expect(result == .failed(IAPError(.invalidArgument)))
        }
        #expect(try await harness.store.transactions(ofAccount: "alice").isEmpty)
        #expect(await harness.store.pendingNotifications.isEmpty)
    }

    @Test("Production: notifications carry the App Apple ID and verify with it; another App Apple ID is refused")
    func production() async throws {
        var configuration = SimulatedCatalog.configuration
        configuration.environment = .production
        configuration.appAppleId = 6_450_284_872
        let harness = try StoreHarness(configuration: configuration)
        let transaction = try await harness.buy(C.premium)
        #expect(transaction.payload.environment == .production)
        try await harness.store.requestTestNotification()
        let signed = await harness.store.pendingNotifications
        let notifications = try signed.map { try harness.verifier.notification($0) }
        #expect(notifications.map(Event.init) == [Event(.oneTimeCharge), Event(.test)])
        #expect(notifications.allSatisfy { $0.payload.data?.appAppleId == 6_450_284_872 })
        #expect(notifications[1].payload.data?.signedTransactionInfo == nil)

        var other = harness.store.verifierConfiguration
        other.appAppleId = 1
        let otherVerifier = try AppStoreSignedDataVerifier(configuration: other)
        #expect(throws: IAPError(.appAppleIdMismatch)) { try otherVerifier.notification(signed[0]) }
    }

    @Test("The TEST notification names the app and environment and has a token shaped like Apple's")
    func testNotification() async throws {
        let harness = try StoreHarness()
        let token = try await harness.store.requestTestNotification()
        #expect(token.hasSuffix("_\(C.start.millisecondsSince1970)"))
        let notifications = try await harness.notifications()
        #expect(notifications.map(Event.init) == [Event(.test)])
        #expect(notifications[0].payload.data?.bundleId == "com.example.app")
        #expect(notifications[0].payload.data?.environment == .sandbox)
        // The token names its notification: Get Test Notification Status can find it.
        #expect(token.hasPrefix("\(notifications[0].payload.notificationUUID ?? "none")_"))
        #expect(await harness.store.pendingNotifications.isEmpty)
        #expect(await harness.store.notificationHistory.count == 1)
    }

    @Test("A configuration that cannot work is refused")
    func invalidConfiguration() throws {
        let clock = ManualClock(now: C.start)
        let duplicate = [C.products[0], C.products[0]]
        #expect(throws: IAPError(.invalidConfiguration)) {
            try SimulatedAppStore(products: duplicate, clock: clock)
        }
        let noGroup = [CatalogProduct(productId: "sub", kind: .autoRenewable)]
        #expect(throws: IAPError(.invalidConfiguration)) { try SimulatedAppStore(products: noGroup, clock: clock) }
        #expect(throws: IAPError(.invalidConfiguration)) {
            try SimulatedAppStore(products: C.products, configuration: .init(gracePeriodDays: 60), clock: clock)
        }
        #expect(throws: IAPError(.invalidConfiguration)) {
            try SimulatedAppStore(products: C.products, configuration: .init(environment: .xcode), clock: clock)
        }
    }

    @Test("advance(by:) needs a ManualClock")
    func advanceNeedsManualClock() async throws {
        let store = try SimulatedAppStore(products: C.products, clock: SystemClock())
        await #expect(throws: IAPError(.invalidConfiguration)) { try await store.advance(by: .seconds(1)) }
    }
}
