import Foundation
import IAPCore
import IAPServerAPI
import IAPTestSupport
import IAPTesting
import Testing

@Suite("AppStoreServerAPIClient endpoints")
struct AppStoreServerAPIClientEndpointTests {
    typealias H = APIHarness

    @Test func transactionInfo() async throws {
        let h = try H()
        h.transport.expect(
            method: "GET",
            path: "/inApps/v1/transactions/1234",
            query: [],
            headers: H.standardHeaders(),
            body: .empty
        ).respond(status: 200, body: try fixtureText("transactionInfoResponse"))
        let response = try await h.client.transactionInfo(transactionId: "1234")
        #expect(response.signedTransactionInfo == "signed_transaction_info_value")
        try h.transport.verify()
        let request = try #require(h.transport.requests.first)
        #expect(request.url.absoluteString == "https://local-testing-base-url/inApps/v1/transactions/1234")
        #expect(request.headers["Content-Type"] == nil)
        #expect(request.timeout == .seconds(30))
    }

    @Test func appTransactionInfo() async throws {
        let h = try H()
        h.transport.expect(
            method: "GET",
            path: "/inApps/v1/transactions/appTransactions/1234",
            query: [],
            headers: H.standardHeaders(),
            body: .empty
        ).respond(status: 200, body: try fixtureText("appTransactionInfoResponse"))
        let response = try await h.client.appTransactionInfo(anyTransactionId: "1234")
        #expect(response.signedAppTransactionInfo == "signed_app_transaction_info_value")
        try h.transport.verify()
    }

    @Test func transactionHistoryPageSendsEveryFilter() async throws {
        let h = try H()
        h.transport.expect(
            method: "GET",
            path: "/inApps/v2/history/1234",
            query: [
                ("revision", "revision_input"),
                ("startDate", "123455"),
                ("endDate", "123456"),
                ("productId", "com.example.1"),
                ("productId", "com.example.2"),
                ("productType", "CONSUMABLE"),
                ("productType", "AUTO_RENEWABLE"),
                ("sort", "ASCENDING"),
                ("subscriptionGroupIdentifier", "sub_group_id"),
                ("subscriptionGroupIdentifier", "sub_group_id_2"),
                ("inAppOwnershipType", "FAMILY_SHARED"),
                ("revoked", "false"),
            ],
            headers: H.standardHeaders(),
            body: .empty
        ).respond(status: 200, body: try fixtureText("transactionHistoryResponse"))
        let request = TransactionHistoryRequest(
            startDate: Date(millisecondsSince1970: 123_455),
            endDate: Date(millisecondsSince1970: 123_456),
            productIds: ["com.example.1", "com.example.2"],
            productTypes: [.consumable, .autoRenewable],
            sort: .ascending,
            subscriptionGroupIdentifiers: ["sub_group_id", "sub_group_id_2"],
            inAppOwnershipType: .familyShared,
            revoked: false
        )
        let page = try await h.client.transactionHistoryPage(
            anyTransactionId: "1234",
            request: request,
            revision: "revision_input"
        )
        #expect(page.revision == "revision_output")
        #expect(page.hasMore == true)
        #expect(page.bundleId == "com.example")
        #expect(page.appAppleId == 323_232)
        #expect(page.environment == .localTesting)
        #expect(page.signedTransactions == ["signed_transaction_value", "signed_transaction_value2"])
        try h.transport.verify()
        let url = try #require(h.transport.requests.first?.url.absoluteString)
        #expect(url.contains("productType=CONSUMABLE&productType=AUTO_RENEWABLE"))
    }

    @Test func transactionHistoryWithoutFiltersHasNoQuery() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v2/history/1234", query: [])
            .respond(status: 200, body: #"{"revision":"r1","hasMore":false,"signedTransactions":[]}"#)
        let page = try await h.client.transactionHistoryPage(anyTransactionId: "1234")
        #expect(page.revision == "r1")
        try h.transport.verify()
    }

    @Test func revokedTrueIsSentAsTrue() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v2/history/1", query: [("revoked", "true")])
            .respond(status: 200, body: #"{"revision":"r","hasMore":false}"#)
        _ = try await h.client.transactionHistoryPage(
            anyTransactionId: "1",
            request: TransactionHistoryRequest(revoked: true)
        )
        try h.transport.verify()
    }

    @Test func allSubscriptionStatuses() async throws {
        let h = try H()
        h.transport.expect(
            method: "GET",
            path: "/inApps/v1/subscriptions/4321",
            query: [("status", "2"), ("status", "1")],
            headers: H.standardHeaders(),
            body: .empty
        ).respond(status: 200, body: try fixtureText("getAllSubscriptionStatusesResponse"))
        let response = try await h.client.allSubscriptionStatuses(
            anyTransactionId: "4321",
            status: [.expired, .active]
        )
        #expect(response.environment == .localTesting)
        #expect(response.bundleId == "com.example")
        #expect(response.appAppleId == 5_454_545)
        let groups = try #require(response.data)
        #expect(groups.map(\.subscriptionGroupIdentifier) == ["sub_group_one", "sub_group_two"])
        let first = try #require(groups.first?.lastTransactions)
        #expect(first.map(\.status) == [.active, .revoked])
        #expect(first.first?.originalTransactionId == "3749183")
        #expect(first.first?.signedTransactionInfo == "signed_transaction_one")
        #expect(first.first?.signedRenewalInfo == "signed_renewal_one")
        #expect(groups.last?.lastTransactions?.first?.status == .expired)
        try h.transport.verify()
    }

    @Test func refundHistoryPage() async throws {
        let h = try H()
        h.transport.expect(
            method: "GET",
            path: "/inApps/v2/refund/lookup/555555",
            query: [("revision", "revision_input")],
            headers: H.standardHeaders(),
            body: .empty
        ).respond(status: 200, body: try fixtureText("getRefundHistoryResponse"))
        let page = try await h.client.refundHistoryPage(anyTransactionId: "555555", revision: "revision_input")
        #expect(page.signedTransactions == ["signed_transaction_one", "signed_transaction_two"])
        #expect(page.revision == "revision_output")
        #expect(page.hasMore == true)
        try h.transport.verify()
    }

    @Test func lookUpOrderId() async throws {
        let h = try H()
        h.transport.expect(
            method: "GET",
            path: "/inApps/v1/lookup/W002182",
            query: [],
            headers: H.standardHeaders(),
            body: .empty
        ).respond(status: 200, body: try fixtureText("lookupOrderIdResponse"))
        let response = try await h.client.lookUpOrderId("W002182")
        #expect(response.status == .invalid)
        #expect(response.signedTransactions == ["signed_transaction_one", "signed_transaction_two"])
        try h.transport.verify()
    }

    @Test func extendSubscriptionRenewalDate() async throws {
        let h = try H()
        h.transport.expect(
            method: "PUT",
            path: "/inApps/v1/subscriptions/extend/4124214",
            query: [],
            headers: H.jsonHeaders(),
            body: .json(
                #"{"extendByDays":45,"extendReasonCode":1,"requestIdentifier":"fdf964a4-233b-486c-aac1-97d8d52688ac"}"#
            )
        ).respond(status: 200, body: try fixtureText("extendSubscriptionRenewalDateResponse"))
        let response = try await h.client.extendSubscriptionRenewalDate(
            originalTransactionId: "4124214",
            ExtendRenewalDateRequest(
                extendByDays: 45,
                extendReasonCode: .customerSatisfaction,
                requestIdentifier: "fdf964a4-233b-486c-aac1-97d8d52688ac"
            )
        )
        #expect(response.originalTransactionId == "2312412")
        #expect(response.webOrderLineItemId == "9993")
        #expect(response.success == true)
        #expect(ms(response.effectiveDate) == 1_698_148_900_000)
        try h.transport.verify()
    }

    @Test func extendRenewalDateForAllActiveSubscribers() async throws {
        let h = try H()
        h.transport.expect(
            method: "POST",
            path: "/inApps/v1/subscriptions/extend/mass",
            query: [],
            headers: H.jsonHeaders(),
            body: .json(
                """
                {"extendByDays":45,"extendReasonCode":1,"requestIdentifier":"fdf964a4-233b-486c-aac1-97d8d52688ac",
                 "storefrontCountryCodes":["USA","MEX"],"productId":"com.example.productId"}
                """
            )
        ).respond(status: 200, body: try fixtureText("extendRenewalDateForAllActiveSubscribersResponse"))
        let response = try await h.client.extendRenewalDateForAllActiveSubscribers(
            MassExtendRenewalDateRequest(
                extendByDays: 45,
                extendReasonCode: .customerSatisfaction,
                requestIdentifier: "fdf964a4-233b-486c-aac1-97d8d52688ac",
                storefrontCountryCodes: ["USA", "MEX"],
                productId: "com.example.productId"
            )
        )
        #expect(response.requestIdentifier == "758883e8-151b-47b7-abd0-60c4d804c2f5")
        try h.transport.verify()
    }

    @Test func statusOfSubscriptionRenewalDateExtensions() async throws {
        let h = try H()
        h.transport.expect(
            method: "GET",
            path: "/inApps/v1/subscriptions/extend/mass/com.example.product/20fba8a0-2b80-4a7d-a17f-85c1854727f8",
            query: [],
            headers: H.standardHeaders(),
            body: .empty
        ).respond(status: 200, body: try fixtureText("getStatusOfSubscriptionRenewalDateExtensionsResponse"))
        let response = try await h.client.statusOfSubscriptionRenewalDateExtensions(
            productId: "com.example.product",
            requestIdentifier: "20fba8a0-2b80-4a7d-a17f-85c1854727f8"
        )
        #expect(response.requestIdentifier == "20fba8a0-2b80-4a7d-a17f-85c1854727f8")
        #expect(response.complete == true)
        #expect(ms(response.completeDate) == 1_698_148_900_000)
        #expect(response.succeededCount == 30)
        #expect(response.failedCount == 2)
        try h.transport.verify()
    }

    @Test func sendConsumptionInformation() async throws {
        let h = try H()
        h.transport.expect(
            method: "PUT",
            path: "/inApps/v2/transactions/consumption/49571273",
            query: [],
            headers: H.jsonHeaders(),
            body: .json(
                """
                {"customerConsented":true,"consumptionPercentage":50000,"deliveryStatus":"DELIVERED",
                 "refundPreference":"GRANT_PRORATED","sampleContentProvided":false}
                """
            )
        ).respond(status: 202)
        try await h.client.sendConsumptionInformation(
            transactionId: "49571273",
            ConsumptionRequest(
                customerConsented: true,
                consumptionPercentage: 50_000,
                deliveryStatus: .delivered,
                refundPreference: .grantProrated,
                sampleContentProvided: false
            )
        )
        try h.transport.verify()
    }

    @Test func consumptionInformationOmitsAbsentFields() async throws {
        let h = try H()
        h.transport.expect(
            method: "PUT",
            path: "/inApps/v2/transactions/consumption/1",
            body: .json(#"{"customerConsented":true,"sampleContentProvided":true}"#)
        ).respond(status: 202)
        try await h.client.sendConsumptionInformation(
            transactionId: "1",
            ConsumptionRequest(customerConsented: true, sampleContentProvided: true)
        )
        try h.transport.verify()
    }

    @Test func setAppAccountToken() async throws {
        let h = try H()
        let token = try #require(UUID(uuidString: "7389a31a-fb6d-4569-a2a6-db7d85d84813"))
        h.transport.expect(
            method: "PUT",
            path: "/inApps/v1/transactions/49571273/appAccountToken",
            query: [],
            headers: H.jsonHeaders(),
            body: .json(#"{"appAccountToken":"7389A31A-FB6D-4569-A2A6-DB7D85D84813"}"#)
        ).respond(status: 200)
        try await h.client.setAppAccountToken(originalTransactionId: "49571273", appAccountToken: token)
        try h.transport.verify()
    }

    @Test func requestTestNotificationSendsNoBody() async throws {
        let h = try H()
        h.transport.expect(
            method: "POST",
            path: "/inApps/v1/notifications/test",
            query: [],
            headers: H.standardHeaders(),
            body: .empty
        ).respond(status: 200, body: try fixtureText("requestTestNotificationResponse"))
        let response = try await h.client.requestTestNotification()
        #expect(response.testNotificationToken == "ce3af791-365e-4c60-841b-1674b43c1609")
        #expect(h.transport.requests.first?.headers["Content-Type"] == nil)
        try h.transport.verify()
    }

    @Test func testNotificationStatus() async throws {
        let h = try H()
        h.transport.expect(
            method: "GET",
            path: "/inApps/v1/notifications/test/8cd2974c-f905-492a-bf9a-b2f47c791d19",
            query: [],
            headers: H.standardHeaders(),
            body: .empty
        ).respond(status: 200, body: try fixtureText("getTestNotificationStatusResponse"))
        let response = try await h.client.testNotificationStatus(
            testNotificationToken: "8cd2974c-f905-492a-bf9a-b2f47c791d19"
        )
        #expect(response.signedPayload == "signed_payload")
        #expect(response.sendAttempts?.map(\.sendAttemptResult) == [.noResponse, .success])
        #expect(response.sendAttempts?.map { ms($0.attemptDate) } == [1_698_148_900_000, 1_698_148_950_000])
        try h.transport.verify()
    }

    @Test func notificationHistoryPageTruncatesMicroseconds() async throws {
        let h = try H()
        h.transport.expect(
            method: "POST",
            path: "/inApps/v1/notifications/history",
            query: [("paginationToken", "a036bc0e-52b8-4bee-82fc-8c24cb6715d6")],
            headers: H.jsonHeaders(),
            body: .json(
                """
                {"startDate":1698148900000,"endDate":1698148950000,"notificationType":"SUBSCRIBED",
                 "notificationSubtype":"INITIAL_BUY","transactionId":"999733843","onlyFailures":true}
                """
            )
        ).respond(status: 200, body: try fixtureText("getNotificationHistoryResponse"))
        let request = NotificationHistoryRequest(
            startDate: Date(timeIntervalSince1970: 1_698_148_900.000_123),
            endDate: Date(timeIntervalSince1970: 1_698_148_950.000_321),
            notificationType: .subscribed,
            notificationSubtype: .initialBuy,
            transactionId: "999733843",
            onlyFailures: true
        )
        let page = try await h.client.notificationHistoryPage(
            request,
            paginationToken: "a036bc0e-52b8-4bee-82fc-8c24cb6715d6"
        )
        #expect(page.paginationToken == "57715481-805a-4283-8499-1c19b5d6b20a")
        #expect(page.hasMore == true)
        let items = try #require(page.notificationHistory)
        #expect(items.map(\.signedPayload) == ["signed_payload_one", "signed_payload_two"])
        #expect(items.first?.sendAttempts?.map(\.sendAttemptResult) == [.noResponse, .success])
        #expect(items.last?.sendAttempts?.first?.sendAttemptResult == .circularRedirect)
        #expect(ms(items.last?.sendAttempts?.first?.attemptDate) == 1_698_148_800_000)
        try h.transport.verify()
    }

    @Test func finishTransaction() async throws {
        let h = try H()
        h.transport.expect(
            method: "POST",
            path: "/inApps/v1/transactions/1234/finish",
            query: [],
            headers: H.standardHeaders(),
            body: .empty
        ).respond(status: 200)
        try await h.client.finishTransaction(transactionId: "1234")
        try h.transport.verify()
    }

    @Test func identifiersArePercentEncoded() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/a%2Fb%3Fc%23d%26e%3Df%20g%25")
            .respond(status: 200, body: "{}")
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/%2E%2E")
            .respond(status: 200, body: "{}")
        h.transport.expect(method: "GET", path: "/inApps/v1/lookup/%C3%A9t%C3%A9")
            .respond(status: 200, body: "{}")
        _ = try await h.client.transactionInfo(transactionId: "a/b?c#d&e=f g%")
        _ = try await h.client.transactionInfo(transactionId: "..")
        _ = try await h.client.lookUpOrderId("été")
        try h.transport.verify()
    }

    @Test func queryValuesArePercentEncoded() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v2/history/1", query: [("productId", "a&b=c d+e")])
            .respond(status: 200, body: #"{"hasMore":false}"#)
        _ = try await h.client.transactionHistoryPage(
            anyTransactionId: "1",
            request: TransactionHistoryRequest(productIds: ["a&b=c d+e"])
        )
        try h.transport.verify()
        let url = try #require(h.transport.requests.first?.url.absoluteString)
        #expect(url.hasSuffix("?productId=a%26b%3Dc%20d%2Be"))
    }

    @Test func emptyIdentifierIsRejectedBeforeSending() async throws {
        let h = try H()
        let error = await apiFailure { _ = try await h.client.transactionInfo(transactionId: "") }
        #expect(error?.code == .invalidArgument)
        #expect(h.transport.requests.isEmpty)
    }

    @Test func environmentsSelectApplesBaseURLs() async throws {
        for (environment, host) in [
            (AppStoreEnvironment.production, "api.storekit.apple.com"),
            (.sandbox, "api.storekit-sandbox.apple.com"),
            (.localTesting, "local-testing-base-url"),
        ] {
            let h = try H(environment: environment)
            h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1").respond(status: 200, body: "{}")
            _ = try await h.client.transactionInfo(transactionId: "1")
            #expect(h.transport.requests.first?.url.host == host)
            #expect(h.transport.requests.first?.url.scheme == "https")
        }
    }

    @Test func customBaseURLKeepsItsPath() async throws {
        let h = try H(environment: .sandbox, baseURL: URL(string: "http://127.0.0.1:8080/apple/"))
        h.transport.expect(method: "GET", path: "/apple/inApps/v1/transactions/1").respond(status: 200, body: "{}")
        _ = try await h.client.transactionInfo(transactionId: "1")
        #expect(
            h.transport.requests.first?.url.absoluteString == "http://127.0.0.1:8080/apple/inApps/v1/transactions/1"
        )
        try h.transport.verify()
    }

    @Test func xcodeAndUnknownEnvironmentsAreRejected() throws {
        #expect(throws: IAPError(.invalidConfiguration)) { try H(environment: .xcode) }
        #expect(throws: IAPError(.invalidConfiguration)) { try H(environment: AppStoreEnvironment(rawValue: "Beta")) }
        #expect(throws: IAPError(.invalidConfiguration)) {
            try H(environment: .sandbox, options: H.options { $0.fallsBackToSandbox = true })
        }
        #expect(throws: IAPError(.invalidConfiguration)) {
            try H(options: H.options { $0.maximumAttempts = 0 })
        }
        #expect(throws: IAPError(.invalidConfiguration)) {
            try H(baseURL: URL(string: "ftp://example.com"))
        }
    }
}
