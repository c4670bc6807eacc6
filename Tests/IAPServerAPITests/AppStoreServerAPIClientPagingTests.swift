import Foundation
import IAPCore
import IAPServerAPI
import IAPTestSupport
import IAPTesting
import Testing

@Suite("AppStoreServerAPIClient paging")
struct AppStoreServerAPIClientPagingTests {
    typealias H = APIHarness

    static func historyPage(revision: String, hasMore: Bool, transactions: [String]) -> String {
        let list = transactions.map { "\"\($0)\"" }.joined(separator: ",")
        return """
            {"revision":"\(revision)","hasMore":\(hasMore),"bundleId":"com.example","appAppleId":1,
             "environment":"Sandbox","signedTransactions":[\(list)]}
            """
    }

    @Test func transactionHistoryFollowsRevisionsAndResendsFilters() async throws {
        let h = try H()
        let filters: [(String, String)] = [
            ("productType", "AUTO_RENEWABLE"),
            ("productType", "NON_RENEWABLE"),
            ("sort", "DESCENDING"),
            ("revoked", "false"),
        ]
        let pages = [
            (nil, "r1", true, ["t1", "t2"]),
            ("r1", "r2", true, ["t3"]),
            ("r2", "r3", false, ["t4"]),
        ]
        for (sent, returned, hasMore, transactions) in pages {
            let query = (sent.map { [("revision", $0)] } ?? []) + filters
            h.transport.expect(method: "GET", path: "/inApps/v2/history/42", query: query, headers: H.standardHeaders())
                .respond(
                    status: 200,
                    body: Self.historyPage(revision: returned, hasMore: hasMore, transactions: transactions)
                )
        }
        let history = h.client.transactionHistory(
            anyTransactionId: "42",
            request: TransactionHistoryRequest(
                productTypes: [.autoRenewable, .nonRenewable],
                sort: .descending,
                revoked: false
            )
        )
        #expect(history.lastRevision == nil)
        #expect(h.transport.requests.isEmpty)
        var signed: [String] = []
        for try await page in history {
            signed += page.signedTransactions ?? []
        }
        #expect(signed == ["t1", "t2", "t3", "t4"])
        #expect(history.lastRevision == "r3")
        try h.transport.verify()
    }

    @Test func incrementalSyncResumesFromASavedRevision() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v2/history/42", query: [("revision", "saved")])
            .respond(status: 200, body: Self.historyPage(revision: "next", hasMore: false, transactions: ["refunded"]))
        let history = h.client.transactionHistory(anyTransactionId: "42", revision: "saved")
        #expect(history.lastRevision == "saved")
        var pages = 0
        for try await _ in history {
            pages += 1
        }
        #expect(pages == 1)
        #expect(history.lastRevision == "next")
        try h.transport.verify()
    }

    @Test func pagesAfterAFallbackStayInSandbox() async throws {
        let h = try H(environment: .production, options: H.options { $0.fallsBackToSandbox = true })
        h.transport.expect(method: "GET", path: "/inApps/v2/history/42", query: [])
            .respond(status: 404, body: try fixtureText("transactionIdNotFoundError"))
        h.transport.expect(method: "GET", path: "/inApps/v2/history/42", query: [])
            .respond(status: 200, body: Self.historyPage(revision: "r1", hasMore: true, transactions: ["t1"]))
        h.transport.expect(method: "GET", path: "/inApps/v2/history/42", query: [("revision", "r1")])
            .respond(status: 200, body: Self.historyPage(revision: "r2", hasMore: false, transactions: ["t2"]))
        var environments: [AppStoreEnvironment?] = []
        for try await page in h.client.transactionHistory(anyTransactionId: "42") {
            environments.append(page.environment)
        }
        #expect(environments == [.sandbox, .sandbox])
        #expect(
            h.transport.requests.map { $0.url.host } == [
                "api.storekit.apple.com", "api.storekit-sandbox.apple.com", "api.storekit-sandbox.apple.com",
            ]
        )
        try h.transport.verify()
    }

    @Test func aPageThatRepeatsItsRevisionEndsTheSequenceWithAnError() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v2/history/42", query: [("revision", "same")])
            .respond(status: 200, body: Self.historyPage(revision: "same", hasMore: true, transactions: ["t1"]))
        var received: [String] = []
        let error = await apiFailure {
            for try await page in h.client.transactionHistory(anyTransactionId: "42", revision: "same") {
                received += page.signedTransactions ?? []
            }
        }
        #expect(received == ["t1"])
        #expect(error?.code == .decodingFailure)
        try h.transport.verify()
    }

    @Test func anErrorMidwayKeepsTheLastRevision() async throws {
        let h = try H(options: H.options { $0.maximumAttempts = 1 })
        h.transport.expect(method: "GET", path: "/inApps/v2/history/42", query: [])
            .respond(status: 200, body: Self.historyPage(revision: "r1", hasMore: true, transactions: ["t1"]))
        h.transport.expect(method: "GET", path: "/inApps/v2/history/42", query: [("revision", "r1")])
            .respond(status: 500, body: try fixtureText("apiException"))
        let history = h.client.transactionHistory(anyTransactionId: "42")
        let error = await apiFailure {
            for try await _ in history {}
        }
        #expect(error?.apiError == .generalInternal)
        #expect(history.lastRevision == "r1")
    }

    @Test func refundHistoryFollowsRevisions() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v2/refund/lookup/7", query: [])
            .respond(status: 200, body: #"{"signedTransactions":["a"],"revision":"r1","hasMore":true}"#)
        h.transport.expect(method: "GET", path: "/inApps/v2/refund/lookup/7", query: [("revision", "r1")])
            .respond(status: 200, body: #"{"signedTransactions":["b"],"revision":"r2","hasMore":true}"#)
        h.transport.expect(method: "GET", path: "/inApps/v2/refund/lookup/7", query: [("revision", "r2")])
            .respond(status: 200, body: #"{"signedTransactions":[],"revision":"r3","hasMore":false}"#)
        let refunds = h.client.refundHistory(anyTransactionId: "7")
        var signed: [String] = []
        for try await page in refunds {
            signed += page.signedTransactions ?? []
        }
        #expect(signed == ["a", "b"])
        #expect(refunds.lastRevision == "r3")
        try h.transport.verify()
    }

    @Test func notificationHistoryFollowsTokensAndResendsTheBody() async throws {
        let h = try H()
        let body = #"{"startDate":1698148900000,"endDate":1698235300000,"onlyFailures":true}"#
        h.transport.expect(method: "POST", path: "/inApps/v1/notifications/history", query: [], body: .json(body))
            .respond(
                status: 200,
                body: #"{"paginationToken":"p1","hasMore":true,"notificationHistory":[{"signedPayload":"n1"}]}"#
            )
        h.transport.expect(
            method: "POST",
            path: "/inApps/v1/notifications/history",
            query: [("paginationToken", "p1")],
            headers: H.jsonHeaders(),
            body: .json(body)
        ).respond(
            status: 200,
            body: #"{"paginationToken":"p2","hasMore":true,"notificationHistory":[{"signedPayload":"n2"}]}"#
        )
        h.transport.expect(
            method: "POST",
            path: "/inApps/v1/notifications/history",
            query: [("paginationToken", "p2")],
            body: .json(body)
        ).respond(status: 200, body: #"{"hasMore":false,"notificationHistory":[{"signedPayload":"n3"}]}"#)
        let history = h.client.notificationHistory(
            NotificationHistoryRequest(
                startDate: Date(millisecondsSince1970: 1_698_148_900_000),
                endDate: Date(millisecondsSince1970: 1_698_235_300_000),
                onlyFailures: true
            )
        )
        var payloads: [String?] = []
        for try await page in history {
            payloads += page.notificationHistory?.map(\.signedPayload) ?? []
        }
        #expect(payloads == ["n1", "n2", "n3"])
        #expect(history.lastPaginationToken == "p2")
        try h.transport.verify()
    }
}
