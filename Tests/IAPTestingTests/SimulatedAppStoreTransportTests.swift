import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPServerAPI
import IAPTesting
import Testing

@Suite("Simulated App Store transport")
struct SimulatedAppStoreTransportTests {
    /// A store in Production, where Look Up Order ID exists, selling a non-consumable and a monthly subscription.
    static func store(environment: AppStoreEnvironment = .production) throws -> SimulatedAppStore {
        try SimulatedAppStore(
            products: [
                CatalogProduct(productId: "pro.lifetime", kind: .nonConsumable, entitlements: ["pro"]),
                CatalogProduct(
                    productId: "plus.monthly",
                    kind: .autoRenewable,
                    subscriptionGroupId: "plus",
                    entitlements: ["plus"],
                    duration: SubscriptionPeriod(value: 1, unit: .month)
                ),
            ],
            configuration: .init(environment: environment),
            clock: ManualClock(now: Date(millisecondsSince1970: 1_767_225_600_000))
        )
    }

    @Test func aClientReadsTheStoreWithoutSockets() async throws {
        let store = try Self.store()
        let purchase = try #require(try await store.purchase(productId: "pro.lifetime", account: "alice").transaction)
        let connection = try SimulatedAppStoreTransport.connect(to: store)
        let verifier = try store.makeVerifier()

        let info = try await connection.client.transactionInfo(transactionId: purchase.transactionId)
        let signed = try #require(info.signedTransactionInfo)
        #expect(try await verifier.verifyTransaction(signed).transactionId == purchase.transactionId)
        var seen: [String] = []
        for try await page in connection.client.transactionHistory(anyTransactionId: purchase.transactionId) {
            seen += try await (page.signedTransactions ?? []).asyncMap { try await verifier.verifyTransaction($0) }
                .compactMap(\.transactionId)
        }
        #expect(seen == [purchase.transactionId])
        let order = try await connection.client.lookUpOrderId(try #require(purchase.orderId))
        #expect(order.status == .valid && order.signedTransactions?.count == 1)
        #expect(connection.transport.requestCount == 3)
    }

    @Test func getAppTransactionInfoSignsTheCustomersAppTransaction() async throws {
        let store = try Self.store()
        let purchase = try #require(try await store.purchase(productId: "pro.lifetime", account: "alice").transaction)
        let connection = try SimulatedAppStoreTransport.connect(to: store)
        let info = try await connection.client.appTransactionInfo(anyTransactionId: purchase.transactionId)
        let app = try await store.makeVerifier().verifyAppTransaction(try #require(info.signedAppTransactionInfo))
        // The account's app transaction: the id every transaction of the account carries.
        #expect(app.appTransactionId == purchase.payload.appTransactionId)
        #expect(app.appTransactionId == (await store.appTransactionId(ofAccount: "alice")))
        #expect(app.bundleId == store.configuration.bundleId)
        for (id, code) in [("9999999999", APIErrorCode.transactionIdNotFound), ("abc", .invalidTransactionId)] {
            await #expect {
                try await connection.client.appTransactionInfo(anyTransactionId: id)
            } throws: { error in
                (error as? IAPError)?.apiErrorCode == code.rawValue
            }
        }
    }

    @Test func setAppAccountTokenGivesAPurchaseItsTokenAndItsRenewalsToo() async throws {
        let store = try Self.store()
        let bought = try #require(try await store.purchase(productId: "plus.monthly", account: "alice").transaction)
        #expect(bought.payload.appAccountToken == nil)
        let connection = try SimulatedAppStoreTransport.connect(to: store)
        let verifier = try store.makeVerifier()
        let token = try #require(UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138"))
        try await connection.client.setAppAccountToken(
            originalTransactionId: bought.transactionId,
            appAccountToken: token
        )
        let info = try await connection.client.transactionInfo(transactionId: bought.transactionId)
        let signed = try await verifier.verifyTransaction(try #require(info.signedTransactionInfo))
        #expect(signed.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        // The renewal carries it; a renewal's id is not an original transaction id (4000187).
        try await store.advance(by: .seconds(31 * 86_400))
        let renewal = try #require(try await store.transactions(ofAccount: "alice").last)
        #expect(renewal.transactionId != bought.transactionId)
        #expect(renewal.payload.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        for (id, code) in [(renewal.transactionId, Int64(4_000_187)), ("9999999999", 4_040_010), ("x", 4_000_006)] {
            await #expect {
                try await connection.client.setAppAccountToken(originalTransactionId: id, appAccountToken: token)
            } throws: { error in
                (error as? IAPError)?.apiErrorCode == code
            }
        }
    }

    @Test func extendRenewalDateMovesTheSubscriptionsEndOnceARequestAndTwiceAYear() async throws {
        let store = try Self.store()
        let bought = try #require(try await store.purchase(productId: "plus.monthly", account: "alice").transaction)
        let expires = try #require(bought.payload.expiresDate)
        _ = await store.drainNotifications()
        let connection = try SimulatedAppStoreTransport.connect(to: store)
        let client = connection.client
        let verifier = try store.makeVerifier()
        func extend(_ days: Int32, _ request: String, reason: Int32 = 1, id: String? = nil) async throws
            -> ExtendRenewalDateResponse
        {
            try await client.extendSubscriptionRenewalDate(
                originalTransactionId: id ?? bought.transactionId,
                ExtendRenewalDateRequest(
                    extendByDays: days,
                    extendReasonCode: ExtendReasonCode(rawValue: reason),
                    requestIdentifier: request
                )
            )
        }
        let answer = try await extend(30, "outage-1")
        #expect(answer.success == true && answer.originalTransactionId == bought.transactionId)
        #expect(answer.effectiveDate == expires.addingTimeInterval(30 * 86_400))
        #expect(answer.webOrderLineItemId == bought.payload.webOrderLineItemId)
        let info = try await client.transactionInfo(transactionId: bought.transactionId)
        let signed = try await verifier.verifyTransaction(try #require(info.signedTransactionInfo))
        #expect(signed.expiresDate == answer.effectiveDate)
        let notes = await store.drainNotifications()
        #expect(notes.count == 1)
        let note = try await verifier.verifyNotification(try #require(notes.first))
        #expect(note.payload.notificationType == .renewalExtended)
        // The same request again extends nothing more.
        #expect(try await extend(30, "outage-1").effectiveDate == answer.effectiveDate)
        #expect(await store.drainNotifications().isEmpty)
        // A second extension in the year, then no third.
        _ = try await extend(5, "outage-2")
        for (days, request, reason, id, code) in [
            (Int32(5), "outage-3", Int32(1), bought.transactionId, Int64(4_030_005)),
            (0, "bad-days", 1, bought.transactionId, 4_000_009),
            (91, "bad-days", 1, bought.transactionId, 4_000_009),
            (5, "bad-reason", 7, bought.transactionId, 4_000_010),
            (5, "unknown", 1, "9999999999", 4_040_005),
        ] {
            await #expect {
                try await extend(days, request, reason: reason, id: id)
            } throws: { error in
                (error as? IAPError)?.apiErrorCode == code
            }
        }
    }

    @Test func extendingEveryActiveSubscriberCountsWhoWasExtendedAndSaysSoInASummary() async throws {
        let store = try Self.store()
        let alice = try #require(try await store.purchase(productId: "plus.monthly", account: "alice").transaction)
        let bob = try #require(try await store.purchase(productId: "plus.monthly", account: "bob").transaction)
        // bob already had his two extensions of the year.
        for request in ["bob-1", "bob-2"] {
            _ = try await store.extendRenewalDate(
                originalTransactionId: bob.transactionId,
                days: 1,
                requestIdentifier: request
            )
        }
        _ = await store.drainNotifications()
        let client = try SimulatedAppStoreTransport.connect(to: store).client
        let verifier = try store.makeVerifier()
        let asked = MassExtendRenewalDateRequest(
            extendByDays: 7,
            extendReasonCode: .serviceIssueOrOutage,
            requestIdentifier: "outage-2026-01",
            productId: "plus.monthly"
        )
        #expect(try await client.extendRenewalDateForAllActiveSubscribers(asked).requestIdentifier == "outage-2026-01")
        let status = try await client.statusOfSubscriptionRenewalDateExtensions(
            productId: "plus.monthly",
            requestIdentifier: "outage-2026-01"
        )
        #expect(status.complete == true && status.succeededCount == 1 && status.failedCount == 1)
        let info = try await client.transactionInfo(transactionId: alice.transactionId)
        let extended = try await verifier.verifyTransaction(try #require(info.signedTransactionInfo))
        #expect(extended.expiresDate == alice.payload.expiresDate?.addingTimeInterval(7 * 86_400))
        var types: [String] = []
        for note in await store.drainNotifications() {
            let payload = try await verifier.verifyNotification(note).payload
            types.append(
                [payload.notificationType?.rawValue, payload.subtype?.rawValue].compactMap { $0 }.joined(separator: " ")
            )
            if let summary = payload.summary {
                #expect(summary.succeededCount == 1 && summary.failedCount == 1 && summary.productId == "plus.monthly")
            }
        }
        #expect(types == ["RENEWAL_EXTENDED", "RENEWAL_EXTENSION SUMMARY"])
        // The same request again changes nothing.
        _ = try await client.extendRenewalDateForAllActiveSubscribers(asked)
        #expect(await store.drainNotifications().isEmpty)
        var notSubscription = asked
        notSubscription.productId = "pro.lifetime"
        await #expect {
            try await client.extendRenewalDateForAllActiveSubscribers(notSubscription)
        } throws: { error in
            (error as? IAPError)?.apiErrorCode == 4_000_023
        }
        await #expect {
            try await client.statusOfSubscriptionRenewalDateExtensions(
                productId: "plus.monthly",
                requestIdentifier: "nope"
            )
        } throws: { error in
            (error as? IAPError)?.apiErrorCode == 4_040_009
        }
    }

    @Test func appleErrorsComeBackAsTheClientsErrors() async throws {
        let connection = try SimulatedAppStoreTransport.connect(to: try Self.store())
        await #expect {
            try await connection.client.transactionInfo(transactionId: "9999999999")
        } throws: { error in
            (error as? IAPError)?.apiErrorCode == APIErrorCode.transactionIdNotFound.rawValue
        }
        let invalid = try await connection.client.lookUpOrderId("NOSUCHORDER")
        #expect(invalid.status == .invalid)
    }

    @Test func lookUpOrderIdExistsInProductionOnly() async throws {
        let store = try Self.store(environment: .sandbox)
        let purchase = try #require(try await store.purchase(productId: "pro.lifetime", account: "alice").transaction)
        let connection = try SimulatedAppStoreTransport.connect(to: store)
        // Apple's sandbox has no order ids: it answers 404, and so does a sandbox store.
        await #expect {
            try await connection.client.lookUpOrderId(try #require(purchase.orderId))
        } throws: { error in
            (error as? IAPError)?.httpStatus == 404
        }
    }

    @Test func aTokenSignedWithAnotherKeyIsRefusedWith401() async throws {
        let store = try Self.store()
        let connection = try SimulatedAppStoreTransport.connect(to: store)
        let intruder = try P256PrivateKey()
        let tokens = try AppStoreServerAPITokenProvider(
            privateKey: intruder,
            keyId: connection.transport.tokenChecker.keyId,
            issuerId: connection.transport.tokenChecker.issuerId,
            bundleId: store.configuration.bundleId
        )
        let client = try AppStoreServerAPIClient(
            environment: .production,
            baseURL: URL(string: "https://simulated-app-store.invalid"),
            transport: connection.transport,
            tokenProvider: tokens
        )
        await #expect {
            try await client.lookUpOrderId("NOSUCHORDER")
        } throws: { error in
            (error as? IAPError)?.httpStatus == 401
        }
        let bare = try await connection.transport.send(
            HTTPRequest(method: "GET", url: try #require(URL(string: "https://x.invalid/inApps/v1/lookup/A")))
        )
        #expect(bare.status == 401)
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self {
            result.append(try await transform(element))
        }
        return result
    }
}
