import Foundation
import IAPApp
import IAPCore
import IAPCrypto
import IAPTesting
import Testing

/// The simulated App Store's client face: devices of one account, updates like StoreKit's, offline.
@Suite("Simulated store client")
struct SimulatedStoreClientTests {
    /// Reads the next `count` updates, failing the test after 10 seconds.
    func next(_ count: Int, of updates: AsyncStream<String>, verifier: AppStoreSignedDataVerifier) async throws
        -> [TransactionPayload]
    {
        try await withThrowingTaskGroup(of: [TransactionPayload]?.self) { group in
            group.addTask {
                var received: [TransactionPayload] = []
                for await signed in updates {
                    received.append(try verifier.transaction(signed))
                    if received.count == count {
                        break
                    }
                }
                return received
            }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return try #require(first, "fewer than \(count) updates arrived")
        }
    }

    @Test("a purchase returns a transaction the verifier accepts, with the token and quantity")
    func purchase() async throws {
        let harness = try StoreHarness()
        let phone = SimulatedStoreClient(store: harness.store, account: "alice")
        let token = UUID()

        let result = try await phone.purchase(productId: SimulatedCatalog.coins, appAccountToken: token, quantity: 3)

        guard case .success(let signed) = result else {
            Issue.record("expected a success, got \(result)")
            return
        }
        let transaction = try harness.verifier.transaction(signed)
        #expect(transaction.appAccountToken == token.uuidString.lowercased())
        #expect(transaction.quantity == 3)
        await phone.cancelNextPurchase()
        #expect(
            try await phone.purchase(productId: SimulatedCatalog.coins, appAccountToken: token, quantity: 1)
                == .userCancelled
        )
    }

    @Test("another device's purchase, a refund and a renewal arrive through the updates; one's own purchase does not")
    func updates() async throws {
        let harness = try StoreHarness()
        let phone = SimulatedStoreClient(store: harness.store, account: "alice")
        let tablet = SimulatedStoreClient(store: harness.store, account: "alice")
        _ = try await tablet.purchase(productId: SimulatedCatalog.seasonPass, appAccountToken: UUID(), quantity: 1)
        let phoneUpdates = phone.transactionUpdates()
        // The phone watches from the moment the first update arrives (here, the tablet's unfinished purchase).
        let first = try await next(1, of: phoneUpdates, verifier: harness.verifier)
        #expect(first.map(\.productId) == [SimulatedCatalog.seasonPass])

        _ = try await phone.purchase(productId: SimulatedCatalog.coins, appAccountToken: UUID(), quantity: 1)
        guard
            case .success(let signed) = try await tablet.purchase(
                productId: SimulatedCatalog.premium,
                appAccountToken: UUID(),
                quantity: 1
            )
        else {
            Issue.record("the tablet's purchase failed")
            return
        }
        let premium = try harness.verifier.transaction(signed)
        try await harness.store.refund(transactionId: premium.transactionId ?? "")

        let received = try await next(2, of: phoneUpdates, verifier: harness.verifier)

        #expect(received.map(\.productId) == [SimulatedCatalog.premium, SimulatedCatalog.premium])
        #expect(received[0].revocationDate == nil)
        #expect(received[1].revocationDate != nil)
    }

    @Test("unfinished transactions are sent again when the app launches again; finished ones are not")
    func unfinishedAtLaunch() async throws {
        let harness = try StoreHarness()
        let phone = SimulatedStoreClient(store: harness.store, account: "alice")
        var ids: [String] = []
        for product in [SimulatedCatalog.coins, SimulatedCatalog.premium] {
            guard
                case .success(let signed) = try await phone.purchase(
                    productId: product,
                    appAccountToken: UUID(),
                    quantity: 1
                )
            else {
                Issue.record("a purchase failed")
                return
            }
            ids.append(try harness.verifier.transaction(signed).transactionId ?? "")
        }
        try await phone.finish(transactionId: ids[0])
        try await phone.finish(transactionId: ids[0])

        let relaunched = SimulatedStoreClient(store: harness.store, account: "alice")
        let received = try await next(1, of: relaunched.transactionUpdates(), verifier: harness.verifier)

        #expect(received.map(\.transactionId) == [ids[1]])
        // Transaction.all leaves the finished consumable out; current entitlements never list consumables.
        #expect(try await relaunched.allTransactions().count == 1)
        #expect(try await relaunched.currentEntitlements().count == 1)
    }

    @Test("finishing is idempotent, as StoreKit's: an unknown transaction or another account's is left alone")
    func finishIsIdempotent() async throws {
        let harness = try StoreHarness()
        let phone = SimulatedStoreClient(store: harness.store, account: "alice")
        let otherPhone = SimulatedStoreClient(store: harness.store, account: "bob")
        let bought = try await phone.purchase(
            productId: SimulatedCatalog.coins,
            appAccountToken: UUID(),
            quantity: 1
        )
        guard case .success(let signed) = bought else {
            Issue.record("expected a success, got \(bought)")
            return
        }
        let transactionId = try harness.verifier.transaction(signed).transactionId ?? ""
        func isFinished() async throws -> Bool {
            try await harness.store.accountTransactions(ofAccount: "alice")
                .first { $0.transaction.transactionId == transactionId }?.isFinished ?? false
        }

        try await phone.finish(transactionId: "9999999999")
        try await otherPhone.finish(transactionId: transactionId)
        #expect(try await !isFinished())

        try await phone.finish(transactionId: transactionId)
        try await phone.finish(transactionId: transactionId)
        #expect(try await isFinished())
    }

    @Test("offline, products, purchases, sync and refund requests fail with a retryable transport error")
    func offline() async throws {
        let harness = try StoreHarness()
        let phone = SimulatedStoreClient(store: harness.store, account: "alice")
        await phone.setOffline(true)

        let failure = await #expect(throws: IAPError(.transportFailure)) {
            try await phone.purchase(productId: SimulatedCatalog.premium, appAccountToken: UUID(), quantity: 1)
        }
        #expect(failure?.isRetryable == true)
        await #expect(throws: IAPError(.transportFailure)) { try await phone.sync() }
        await #expect(throws: IAPError(.transportFailure)) { try await phone.products(for: [SimulatedCatalog.coins]) }
        #expect(try await harness.store.transactions(ofAccount: "alice").isEmpty)

        await phone.setOffline(false)
        try await phone.sync()
        #expect(try await phone.products(for: [SimulatedCatalog.coins, "nope"]).map(\.id) == [SimulatedCatalog.coins])
    }

    @Test("current entitlements hold live subscriptions and owned non-consumables, not refunded ones")
    func currentEntitlements() async throws {
        let harness = try StoreHarness()
        let phone = SimulatedStoreClient(store: harness.store, account: "alice")
        let premium = try await harness.buy(SimulatedCatalog.premium)
        let pro = try await harness.buy(SimulatedCatalog.proMonthly)
        _ = try await harness.buy(SimulatedCatalog.coins)

        var current = try await phone.currentEntitlements().map { try harness.verifier.transaction($0).productId }
        #expect(Set(current) == [SimulatedCatalog.premium, SimulatedCatalog.proMonthly])

        try await harness.store.refund(transactionId: premium.transactionId)
        try await harness.store.setAutoRenew(originalTransactionId: pro.originalTransactionId, enabled: false)
        try await harness.store.advance(by: StoreHarness.days(40))
        current = try await phone.currentEntitlements().map { try harness.verifier.transaction($0).productId }
        #expect(current.isEmpty)
    }

    @Test("unfinished transactions, the latest of a product and the group's statuses, as StoreKit lists them")
    func storeKitLists() async throws {
        let harness = try StoreHarness()
        let phone = SimulatedStoreClient(store: harness.store, account: "alice")
        #expect(try await phone.unfinishedTransactions().isEmpty)
        #expect(try await phone.latestTransaction(for: SimulatedCatalog.coins) == nil)
        #expect(try await phone.subscriptionStatuses(groupId: SimulatedCatalog.group).isEmpty)

        let first = try await harness.buy(SimulatedCatalog.coins)
        harness.clock.advance(by: .seconds(60))
        let second = try await harness.buy(SimulatedCatalog.coins)
        let monthly = try await harness.buy(SimulatedCatalog.proMonthly)
        #expect(
            try await phone.unfinishedTransactions().map { try harness.verifier.transaction($0).transactionId } == [
                first.transactionId, second.transactionId, monthly.transactionId,
            ]
        )
        let latest = try #require(try await phone.latestTransaction(for: SimulatedCatalog.coins))
        #expect(try harness.verifier.transaction(latest).transactionId == second.transactionId)

        // A finished consumable leaves both lists, as in StoreKit.
        try await phone.finish(transactionId: second.transactionId)
        #expect(try await phone.unfinishedTransactions().count == 2)
        let latestUnfinished = try #require(try await phone.latestTransaction(for: SimulatedCatalog.coins))
        #expect(try harness.verifier.transaction(latestUnfinished).transactionId == first.transactionId)

        let status = try #require(try await phone.subscriptionStatuses(groupId: SimulatedCatalog.group).first)
        #expect(status.state == .active)
        #expect(try harness.verifier.transaction(status.signedTransaction).transactionId == monthly.transactionId)
        #expect(try harness.verifier.renewalInfo(status.signedRenewalInfo).autoRenewStatus == .on)
    }

    @Test("the app transaction verifies as Apple's, and names the account's download")
    func appTransaction() async throws {
        let harness = try StoreHarness()
        let phone = SimulatedStoreClient(store: harness.store, account: "alice")
        let signed = try await phone.appTransaction(refresh: false)
        let payload = try harness.verifier.appTransaction(signed)
        #expect(payload.appTransactionId == (await harness.store.appTransactionId(ofAccount: "alice")))
        #expect(payload.bundleId == harness.store.configuration.bundleId)
        #expect(payload.originalPurchaseDate == SimulatedCatalog.start)
        await phone.setOffline(true)
        await #expect(throws: IAPError(.transportFailure)) { try await phone.appTransaction(refresh: true) }
    }
}
