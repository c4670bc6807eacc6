import Foundation
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPTesting
import Testing

/// What one user's requests show of another, and what any answer or event shows of the server's secrets.
@Suite("Routes: no user sees another's purchases, no secret leaves the server")
struct IsolationTests {
    typealias World = PurchaseServerWorld

    @Test func bobsEntitlementsAndHistoryNeverShowAlicesPurchases() async throws {
        let world = try World()
        let alices = [
            try await world.buyAndSubmit("pro.lifetime", user: "alice"),
            try await world.buyAndSubmit("plus.monthly", user: "alice"),
            try await world.buyAndSubmit("coins.100", user: "alice"),
        ]
        let bobs = try await world.buyAndSubmit("coins.100", user: "bob")

        let listing = try await world.service("GET", "/iap/v1/users/bob/entitlements")
        let history = try await world.service("GET", "/iap/v1/users/bob/history?limit=200")
        for answer in [listing, history] {
            #expect(answer.status == 200)
            #expect(!answer.text.contains("alice"))
            for purchase in alices {
                #expect(!answer.text.contains(purchase.transactionId))
                #expect(!answer.text.contains(purchase.originalTransactionId))
            }
        }
        let rows = try #require(try listing.json()["entitlements"] as? [[String: Any]])
        #expect(rows.compactMap { $0["productId"] as? String } == ["coins.100"])
        #expect((try listing.json()["balances"] as? [String: Int64]) == ["coins.100": 100])
        let items = try #require(try history.json()["items"] as? [[String: Any]])
        #expect(items.compactMap { $0["transactionId"] as? String } == [bobs.transactionId])

        // alice's cursor does not page bob's history, nor bob's hers.
        let alicePage = try await world.service("GET", "/iap/v1/users/alice/history?limit=1")
        let cursor = try #require(try alicePage.json()["nextCursor"] as? String)
        let escaped = try #require(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        // (A cursor is a position in the ledger: on bob's history it pages bob's entries only.)
        let crossed = try await world.service("GET", "/iap/v1/users/bob/history?cursor=\(escaped)")
        #expect([200, 400].contains(crossed.status))
        #expect(!crossed.text.contains("alice"))
        if crossed.status == 200 {
            let crossedItems = try #require(try crossed.json()["items"] as? [[String: Any]])
            #expect(crossedItems.allSatisfy { $0["transactionId"] as? String == bobs.transactionId })
        }

        // bob submitting alice's purchase, or claiming her token, learns nothing of her.
        let claimed = try await world.submit(alices[0].signedTransaction, as: "bob")
        #expect(claimed.status == 409)
        let token = World.accountToken("alice").uuidString
        _ = try await world.service(
            "POST",
            "/iap/v1/users/alice/account-tokens",
            body: #"{"appAccountToken":"\#(token)"}"#
        )
        let taken = try await world.service(
            "POST",
            "/iap/v1/users/bob/account-tokens",
            body: #"{"appAccountToken":"\#(token)"}"#
        )
        #expect(taken.status == 409)
        for answer in [claimed, taken] {
            #expect(!answer.text.contains("alice"))
            #expect(!answer.text.contains(alices[0].transactionId))
        }
        #expect(world.wallet.balance("bob") == 100)
    }

    @Test func noAnswerOrEventCarriesTheServiceTokenTheJWTSecretOrAUserToken() async throws {
        let world = try World()
        let purchase = try await world.buy("coins.100", user: "alice")
        let orderId = try #require(purchase.orderId)
        let aliceToken = try world.userToken("alice")
        let expired = try world.userToken("alice", expiresIn: -10)
        let forged = try world.userToken("alice", secret: "another-secret-of-enough-length")
        let service = World.serviceToken
        let wrongService = "wrong-token-of-some-length-" + service
        var answers: [TestResponse] = []
        let body = #"{"signedTransaction":"\#(purchase.signedTransaction)"}"#
        for bearer in [aliceToken, expired, forged, service, wrongService] {
            answers.append(try await world.client.send("POST", "/iap/v1/transactions", bearer: bearer, body: body))
            for path in [
                "/iap/v1/users/alice/entitlements", "/iap/v1/users/alice/history", "/healthz", "/readyz", "/metrics",
            ] {
                answers.append(try await world.client.send("GET", path, bearer: bearer))
            }
            for action in ["lookup", "redeliver"] {
                answers.append(
                    try await world.client.send(
                        "POST",
                        "/iap/v1/support/orders/\(orderId)/\(action)",
                        bearer: bearer,
                        headers: [("X-Operator", "carol")]
                    )
                )
            }
            answers.append(
                try await world.client.send(
                    "POST",
                    "/iap/v1/users/alice/account-tokens",
                    bearer: bearer,
                    body: #"{"appAccountToken":"\#(UUID().uuidString)"}"#
                )
            )
        }
        answers.append(try await world.notify("a.b.c"))
        #expect(answers.contains { $0.status == 401 } && answers.contains { $0.status == 200 })
        let seen = answers.map(\.everything).joined(separator: "\n")
        let events = world.eventLog
        #expect(!events.isEmpty)
        for secret in [service, World.userSecret, aliceToken, expired, forged, wrongService] {
            #expect(!seen.contains(secret))
            #expect(!events.contains(secret))
        }
        // Nor any part of a token that could be replayed: its signature.
        for token in [aliceToken, expired, forged] {
            let signature = String(token.split(separator: ".").last ?? "")
            #expect(!seen.contains(signature) && !events.contains(signature))
        }
    }
}
