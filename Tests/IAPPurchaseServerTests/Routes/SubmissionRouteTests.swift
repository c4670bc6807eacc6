import Foundation
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPTesting
import Testing

/// `POST /iap/v1/transactions` through the router: the app's submission, authenticated by a user token.
@Suite("Routes: POST /iap/v1/transactions")
struct SubmissionRouteTests {
    typealias World = PurchaseServerWorld

    @Test func aValidUserTokenDeliversThePurchaseToThatUser() async throws {
        let world = try World()
        let purchase = try await world.buy("coins.100", user: "alice")
        let answer = try await world.submit(purchase.signedTransaction, as: "alice")
        #expect(answer.status == 200)
        #expect(answer.headers["Content-Type"] == "application/json")
        #expect(
            try answer.json() as NSDictionary
                == ["outcome": "delivered", "finish": true, "transactionId": purchase.transactionId]
        )
        #expect(world.wallet.balance("alice") == 100)
        #expect(world.wallet.calls.map(\.userId) == ["alice"])
        #expect(world.events.events(named: "submission.delivered").map(\.userId) == ["alice"])
    }

    @Test func theSameTransactionSubmittedAgainIsAlreadyDeliveredAndGrantedOnce() async throws {
        let world = try World()
        let purchase = try await world.buyAndSubmit("pro.lifetime", user: "alice")
        let again = try await world.submit(purchase.signedTransaction, as: "alice")
        #expect(again.status == 200)
        #expect(try again.json()["outcome"] as? String == "alreadyDelivered")
        #expect(try again.json()["finish"] as? Bool == true)
        #expect(world.wallet.calls.count == 1)
    }

    @Test func noInvalidOrExpiredUserTokenIsAnswered401InTheSubmissionShapeWithABearerChallenge() async throws {
        let world = try World()
        let purchase = try await world.buy("coins.100", user: "alice")
        let body = #"{"signedTransaction":"\#(purchase.signedTransaction)"}"#
        let now = world.clock.now.millisecondsSince1970 / 1_000
        let algNone = try World.jwt(
            #"{"sub":"alice","exp":\#(now + 60)}"#,
            header: #"{"alg":"none"}"#,
            secret: World.userSecret
        )
        let refused: [(String, [(String, String)])] = [
            ("no Authorization", []),
            ("another scheme", [("Authorization", "Basic YWxpY2U6cGFzcw==")]),
            ("not a JWT", [("Authorization", "Bearer not.a.jwt")]),
            ("expired", [("Authorization", "Bearer \(try world.userToken("alice", expiresIn: -10))")]),
            (
                "another secret",
                [("Authorization", "Bearer \(try world.userToken("alice", secret: "another-secret-of-enough-length"))")]
            ),
            ("alg none", [("Authorization", "Bearer \(algNone)")]),
            ("the service token", [("Authorization", "Bearer \(World.serviceToken)")]),
            (
                "two tokens",
                [
                    ("Authorization", "Bearer \(try world.userToken("alice"))"),
                    ("Authorization", "Bearer \(try world.userToken("alice"))"),
                ]
            ),
        ]
        for (name, headers) in refused {
            let answer = try await world.client.send("POST", "/iap/v1/transactions", headers: headers, body: body)
            #expect(answer.status == 401, "\(name)")
            #expect(answer.headers["WWW-Authenticate"] == #"Bearer realm="iap""#, "\(name)")
            #expect(
                try answer.json() as NSDictionary
                    == [
                        "outcome": "rejected", "finish": false,
                        "error": [
                            "code": "unauthenticated", "message": "the request is not authenticated",
                            "retryable": false,
                        ],
                    ],
                "\(name): \(answer.text)"
            )
        }
        // Nothing was recorded or granted; each refusal is an event with the reason for the operator.
        #expect(await world.ledger.entry(transactionId: purchase.transactionId) == nil)
        #expect(world.wallet.calls.isEmpty)
        let rejected = world.events.events(named: "submission.rejected")
        #expect(rejected.count == refused.count)
        #expect(rejected.allSatisfy { $0.errorCode == "unauthenticated" && $0.userId == nil })
        #expect(rejected.contains { $0.message?.contains("expired") == true })
        #expect(world.metrics.submissions.value(labels: ["rejected"]) == Double(refused.count))
    }

    @Test func aBodyThatNamesAnotherUserIsRefused403AndNothingIsRecorded() async throws {
        let world = try World()
        let purchase = try await world.buy("coins.100", user: "alice")
        let answer = try await world.submit(purchase.signedTransaction, as: "mallory", userId: "alice")
        #expect(answer.status == 403)
        let error = try #require(try answer.json()["error"] as? [String: Any])
        #expect(error["code"] as? String == "userMismatch")
        #expect(!answer.text.contains("alice"))
        #expect(await world.ledger.entry(transactionId: purchase.transactionId) == nil)
        #expect(world.wallet.calls.isEmpty)
    }

    @Test func aMalformedBodyOrSignedTransactionIsAnswered400() async throws {
        let world = try World()
        let token = try world.userToken("alice")
        for body in ["not json", "{}", #"{"signedTransaction":""}"#, #"{"signedTransaction":"x.y.z"}"#] {
            let answer = try await world.client.send("POST", "/iap/v1/transactions", bearer: token, body: body)
            #expect(answer.status == 400, "\(body): \(answer.text)")
            #expect(try answer.json()["outcome"] as? String == "rejected", "\(body)")
            let code = (try answer.json()["error"] as? [String: Any])?["code"] as? String
            #expect(["malformedRequest", "malformedSignedData"].contains(code), "\(body): \(code ?? "none")")
        }
        #expect(world.wallet.calls.isEmpty)
    }

    @Test func aPurchaseOfAProductTheCatalogDoesNotKnowIsParked202WithCodeUnknownProduct() async throws {
        let world = try World()
        let purchase = try await world.buy(World.unknownProductId, user: "alice")
        let answer = try await world.submit(purchase.signedTransaction, as: "alice")
        #expect(answer.status == 202)
        let object = try answer.json()
        #expect(object["outcome"] as? String == "deferred")
        #expect(object["finish"] as? Bool == false)
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["code"] as? String == "unknownProduct")
        #expect(error["retryable"] as? Bool == true)
        // Recorded, granted to nobody.
        #expect(await world.ledger.entry(transactionId: purchase.transactionId) != nil)
        #expect(world.wallet.calls.isEmpty)
    }

    @Test func anotherUsersPurchaseIsRefused409WithoutNamingTheOwner() async throws {
        let world = try World()
        let purchase = try await world.buyAndSubmit("pro.lifetime", user: "alice")
        let answer = try await world.submit(purchase.signedTransaction, as: "mallory")
        #expect(answer.status == 409)
        #expect((try answer.json()["error"] as? [String: Any])?["code"] as? String == "ownershipConflict")
        #expect(!answer.text.contains("alice"))
        #expect(world.wallet.calls.map(\.userId) == ["alice"])
    }
}
