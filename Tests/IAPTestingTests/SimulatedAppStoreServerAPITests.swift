import Foundation
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTesting
import Testing

@Suite("SimulatedAppStore server API queries")
struct SimulatedAppStoreServerAPITests {
    typealias C = SimulatedCatalog
    typealias H = StoreHarness

    /// Reads every page of a history, returning the verified transactions and the last revision.
    func readHistory(
        _ harness: StoreHarness,
        id: String,
        from revision: String? = nil,
        request: TransactionHistoryRequest = TransactionHistoryRequest()
    ) async throws -> (transactions: [TransactionPayload], revision: String?, pages: Int) {
        var revision = revision
        var transactions: [TransactionPayload] = []
        var pages = 0
        while true {
            let page = try await harness.store.transactionHistory(
                anyTransactionId: id,
                revision: revision,
                request: request
            )
            pages += 1
            #expect(page.bundleId == "com.example.app")
            #expect(page.environment == .sandbox)
            #expect(page.appAppleId == 1_234_567_890)
            #expect((page.signedTransactions?.count ?? 0) <= 20)
            transactions += try (page.signedTransactions ?? []).map { try harness.verifier.transaction($0) }
            revision = page.revision
            guard page.hasMore == true else { break }
        }
        return (transactions, revision, pages)
    }

    @Test("History pages 20 at a time, and a saved revision later returns only what changed since")
    func historyPagingAndRevision() async throws {
        let harness = try StoreHarness()
        var bought: [SimulatedTransaction] = []
        for _ in 0..<45 {
            bought.append(try await harness.buy(C.coins))
        }
        let all = try await readHistory(harness, id: bought[7].transactionId)
        #expect(all.pages == 3)
        #expect(all.transactions.map(\.transactionId) == bought.map(\.transactionId))

        let quiet = try await readHistory(harness, id: bought[0].transactionId, from: all.revision)
        #expect(quiet.transactions.isEmpty)

        try await harness.store.refund(transactionId: bought[3].transactionId)
        let newer = try await harness.buy(C.premium)
        let changes = try await readHistory(harness, id: bought[0].transactionId, from: all.revision)
        #expect(changes.transactions.map(\.transactionId) == [bought[3].transactionId, newer.transactionId])
        #expect(changes.transactions.first?.isRevoked == true)

        let appTransactionId = try #require(await harness.store.appTransactionId(ofAccount: "alice"))
        let viaAppTransaction = try await readHistory(harness, id: appTransactionId, from: changes.revision)
        #expect(viaAppTransaction.transactions.isEmpty)
    }

    @Test("An upgrade re-lists the upgraded transaction after a saved revision")
    func historyShowsUpgrade() async throws {
        let harness = try StoreHarness()
        let first = try await harness.buy(C.proMonthly)
        let saved = try await readHistory(harness, id: first.transactionId)
        #expect(saved.transactions.map(\.transactionId) == [first.transactionId])
        let upgraded = try await harness.buy(C.maxMonthly)
        let changes = try await readHistory(harness, id: first.transactionId, from: saved.revision)
        #expect(changes.transactions.map(\.transactionId) == [first.transactionId, upgraded.transactionId])
        #expect(changes.transactions.map(\.isUpgraded) == [true, nil])
    }

    @Test("History is the customer's own: other customers' transactions stay out, and their revisions are refused")
    func historyIsPerCustomer() async throws {
        let harness = try StoreHarness()
        let alices = try await harness.buy(C.coins, account: "alice")
        let bobs = try await harness.buy(C.coins, account: "bob")
        let alice = try await readHistory(harness, id: alices.transactionId)
        #expect(alice.transactions.map(\.transactionId) == [alices.transactionId])
        await #expect(throws: IAPError(.apiError)) {
            try await harness.store.transactionHistory(anyTransactionId: bobs.transactionId, revision: alice.revision)
        }
        do {
            _ = try await harness.store.transactionHistory(anyTransactionId: bobs.transactionId, revision: "bogus")
            Issue.record("a bogus revision was accepted")
        } catch let error as IAPError {
            #expect(error.apiErrorCode == 4_000_005 && error.httpStatus == 400)
        }
    }

    @Test("History filters: product, type, group, revoked, ownership, dates; and descending order")
    func historyFilters() async throws {
        let harness = try StoreHarness()
        let coins = try await harness.buy(C.coins)
        harness.clock.advance(by: H.days(1))
        let premium = try await harness.buy(C.premium)
        harness.clock.advance(by: H.days(1))
        let pro = try await harness.buy(C.proMonthly)
        try await harness.store.refund(transactionId: coins.transactionId)
        let id = pro.transactionId

        func ids(_ request: TransactionHistoryRequest) async throws -> [String?] {
            try await readHistory(harness, id: id, request: request).transactions.map(\.transactionId)
        }
        #expect(try await ids(.init(productIds: [C.premium])) == [premium.transactionId])
        #expect(try await ids(.init(productTypes: [.autoRenewable])) == [pro.transactionId])
        #expect(
            try await ids(.init(productTypes: [.consumable, .nonConsumable]))
                == [premium.transactionId, coins.transactionId]
        )
        #expect(try await ids(.init(subscriptionGroupIdentifiers: [C.group])) == [pro.transactionId])
        #expect(try await ids(.init(revoked: true)) == [coins.transactionId])
        #expect(try await ids(.init(revoked: false)) == [premium.transactionId, pro.transactionId])
        #expect(try await ids(.init(inAppOwnershipType: .familyShared)).isEmpty)
        #expect(try await ids(.init(startDate: H.day(1), endDate: H.day(2))) == [premium.transactionId])
        #expect(
            try await ids(.init(sort: .descending))
                == [coins.transactionId, pro.transactionId, premium.transactionId]
        )
        await #expect(throws: IAPError(.apiError)) {
            try await harness.store.transactionHistory(
                anyTransactionId: id,
                request: .init(startDate: H.day(2), endDate: H.day(1))
            )
        }
    }

    @Test("Descending history also pages 20 at a time, newest first")
    func descendingPaging() async throws {
        let harness = try StoreHarness()
        var bought: [String] = []
        for _ in 0..<25 {
            bought.append(try await harness.buy(C.coins).transactionId)
        }
        let read = try await readHistory(harness, id: bought[0], request: .init(sort: .descending))
        #expect(read.pages == 2)
        #expect(read.transactions.map(\.transactionId) == bought.reversed())
    }

    @Test("History v2 leaves out finished consumables unless refunded")
    func finishedConsumables() async throws {
        let harness = try StoreHarness()
        let first = try await harness.buy(C.coins)
        let second = try await harness.buy(C.coins)
        let premium = try await harness.buy(C.premium)
        try await harness.store.finishTransaction(transactionId: first.transactionId)
        try await harness.store.finishTransaction(transactionId: second.transactionId)
        try await harness.store.finishTransaction(transactionId: premium.transactionId)
        try await harness.store.refund(transactionId: second.transactionId)
        let read = try await readHistory(harness, id: premium.transactionId)
        #expect(Set(read.transactions.map(\.transactionId)) == [premium.transactionId, second.transactionId])
    }

    @Test("Refund history lists revoked transactions, pages, and resumes from a revision")
    func refundHistory() async throws {
        let harness = try StoreHarness()
        var bought: [SimulatedTransaction] = []
        for _ in 0..<25 {
            bought.append(try await harness.buy(C.coins))
        }
        for transaction in bought.prefix(22) {
            try await harness.store.refund(transactionId: transaction.transactionId)
        }
        let firstPage = try await harness.store.refundHistory(anyTransactionId: bought[24].transactionId)
        #expect(firstPage.signedTransactions?.count == 20)
        #expect(firstPage.hasMore == true)
        let secondPage = try await harness.store.refundHistory(
            anyTransactionId: bought[24].transactionId,
            revision: firstPage.revision
        )
        #expect(secondPage.signedTransactions?.count == 2)
        #expect(secondPage.hasMore == false)
        let refunded = try ((firstPage.signedTransactions ?? []) + (secondPage.signedTransactions ?? [])).map {
            try harness.verifier.transaction($0)
        }
        #expect(refunded.map(\.transactionId) == bought.prefix(22).map(\.transactionId))
        #expect(refunded.allSatisfy { $0.isRevoked })

        try await harness.store.refund(transactionId: bought[23].transactionId)
        let later = try await harness.store.refundHistory(
            anyTransactionId: bought[0].transactionId,
            revision: secondPage.revision
        )
        #expect(
            try later.signedTransactions?.map { try harness.verifier.transaction($0).transactionId } == [
                bought[23].transactionId
            ]
        )
    }

    @Test("All subscription statuses: per group, each subscription's status, latest transaction and renewal info")
    func subscriptionStatuses() async throws {
        var configuration = C.configuration
        configuration.gracePeriodDays = 6
        let harness = try StoreHarness(configuration: configuration)
        try await harness.store.addFamilyMember("bob", toFamilyOf: "alice")
        let alices = try await harness.buy(C.proMonthly, account: "alice")
        let bobsOwn = try await harness.buy(C.basicMonthly, account: "bob")
        try await harness.store.setBillingFailure(originalTransactionId: alices.originalTransactionId, failing: true)
        try await harness.store.advance(by: H.days(32))

        let response = try await harness.store.allSubscriptionStatuses(anyTransactionId: bobsOwn.transactionId)
        #expect(response.bundleId == "com.example.app")
        #expect(response.environment == .sandbox)
        let group = try #require(response.data?.first)
        #expect(response.data?.count == 1)
        #expect(group.subscriptionGroupIdentifier == C.group)
        let items = group.lastTransactions ?? []
        #expect(items.count == 2)
        var statuses: [String: SubscriptionStatus] = [:]
        for item in items {
            let transaction = try harness.verifier.transaction(try #require(item.signedTransactionInfo))
            let renewal = try harness.verifier.renewalInfo(try #require(item.signedRenewalInfo))
            #expect(transaction.originalTransactionId == item.originalTransactionId)
            #expect(renewal.originalTransactionId == item.originalTransactionId)
            statuses[transaction.inAppOwnershipType?.rawValue ?? "?"] = item.status
        }
        // Bob's own subscription renewed; the one Alice shares with him is in its grace period, as hers is.
        #expect(statuses == ["PURCHASED": .active, "FAMILY_SHARED": .billingGracePeriod])

        let graceOnly = try await harness.store.allSubscriptionStatuses(
            anyTransactionId: alices.transactionId,
            status: [.billingGracePeriod]
        )
        #expect(graceOnly.data?.first?.lastTransactions?.map(\.originalTransactionId) == [alices.transactionId])
        let none = try await harness.store.allSubscriptionStatuses(
            anyTransactionId: alices.transactionId,
            status: [.revoked]
        )
        #expect(none.data?.isEmpty == true)
    }

    @Test("Order lookup returns the transactions of a valid order id, and invalid for an unknown one")
    func orderLookup() async throws {
        let harness = try StoreHarness()
        let bought = try await harness.buy(C.premium)
        let orderId = try #require(bought.orderId)
        let found = try await harness.store.lookUpOrderId(orderId)
        #expect(found.status == .valid)
        let transactions = try (found.signedTransactions ?? []).map { try harness.verifier.transaction($0) }
        #expect(transactions.map(\.transactionId) == [bought.transactionId])

        let missing = try await harness.store.lookUpOrderId("MZZZZZZZZZ")
        #expect(missing.status == .invalid)
        #expect(missing.signedTransactions == [])
    }

    @Test("Transaction info signs the transaction now, and reports Apple's error codes for bad or unknown ids")
    func transactionInfo() async throws {
        let harness = try StoreHarness()
        let bought = try await harness.buy(C.coins)
        harness.clock.advance(by: .seconds(60))
        let info = try await harness.store.transactionInfo(transactionId: bought.transactionId)
        let payload = try harness.verifier.transaction(try #require(info.signedTransactionInfo))
        #expect(payload.transactionId == bought.transactionId)
        #expect(payload.signedDate == C.start.addingTimeInterval(60))

        for (id, code, status) in [("abc", Int64(4_000_006), 400), ("2000000000099999", 4_040_010, 404)] {
            do {
                _ = try await harness.store.transactionInfo(transactionId: id)
                Issue.record("\(id) was found")
            } catch let error as IAPError {
                #expect(error.code == .apiError)
                #expect(error.apiErrorCode == code)
                #expect(error.httpStatus == status)
            }
        }
    }

    @Test("Response bodies encode with Apple's JSON names")
    func responseJSON() async throws {
        let harness = try StoreHarness()
        let bought = try await harness.buy(C.proMonthly)
        let history = try await harness.store.transactionHistory(anyTransactionId: bought.transactionId)
        let json = String(decoding: try AppStoreJSON.makeEncoder().encode(history), as: UTF8.self)
        for key in ["\"revision\"", "\"hasMore\"", "\"bundleId\"", "\"appAppleId\"", "\"environment\":\"Sandbox\""] {
            #expect(json.contains(key))
        }
        #expect(json.contains("\"signedTransactions\""))
        let decoded = try AppStoreJSON.makeDecoder().decode(HistoryResponse.self, from: Data(json.utf8))
        #expect(decoded == history)

        let statuses = try await harness.store.allSubscriptionStatuses(anyTransactionId: bought.transactionId)
        let statusJSON = String(decoding: try AppStoreJSON.makeEncoder().encode(statuses), as: UTF8.self)
        for key in ["\"subscriptionGroupIdentifier\"", "\"lastTransactions\"", "\"status\":1", "\"signedRenewalInfo\""]
        {
            #expect(statusJSON.contains(key))
        }
        let order = try await harness.store.lookUpOrderId(try #require(bought.orderId))
        let orderJSON = String(decoding: try AppStoreJSON.makeEncoder().encode(order), as: UTF8.self)
        #expect(orderJSON.contains("\"status\":0"))
    }
}
