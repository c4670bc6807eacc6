import Foundation
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPTesting
import Testing

/// `POST /iap/v1/users/{userId}/account-tokens` through the router: a token bound to its user before the purchase.
@Suite("Routes: POST /iap/v1/users/{userId}/account-tokens")
struct AccountTokenRouteTests {
    typealias World = PurchaseServerWorld

    static func register(
        _ world: World,
        _ userId: String,
        _ body: String,
        bearer: String? = World.serviceToken
    ) async throws -> TestResponse {
        try await world.client.send("POST", "/iap/v1/users/\(userId)/account-tokens", bearer: bearer, body: body)
    }

    @Test func aTokenIsBound201ThenAlreadyBound200AndAnotherUsersIs409WithoutNamingThem() async throws {
        let world = try World()
        let token = UUID()
        let lower = token.uuidString.lowercased()
        let bound = try await Self.register(world, "erin", #"{"appAccountToken":"\#(token.uuidString)"}"#)
        #expect(bound.status == 201)
        #expect(try bound.json() as NSDictionary == ["appAccountToken": lower, "outcome": "bound", "userId": "erin"])
        let again = try await Self.register(world, "erin", #"{"appAccountToken":"\#(lower)"}"#)
        #expect(again.status == 200)
        #expect(try again.json()["outcome"] as? String == "alreadyBound")
        let taken = try await Self.register(world, "frank", #"{"appAccountToken":"\#(lower)"}"#)
        #expect(taken.status == 409)
        #expect(taken.text == #"{"code":"ownershipConflict","error":"the token belongs to another user"}"#)
        #expect(!taken.text.contains("erin"))
        // The operator hears who holds it.
        #expect(world.events.events(named: "service.refused").last?.message?.contains("'erin'") == true)
        #expect(await world.ledger.user(forAppAccountToken: lower) == "erin")

        // The binding decides the owner of the purchase that carries it.
        let purchase = try await world.appStore.purchase(
            productId: "pro.lifetime",
            account: "erin",
            appAccountToken: token
        )
        let signed = try #require(purchase.transaction?.signedTransaction)
        #expect(try await world.submit(signed, as: "frank").status == 409)
        #expect(try await world.submit(signed, as: "erin").status == 200)
    }

    @Test func aBodyThatIsNotAUUIDIsAnswered400() async throws {
        let world = try World()
        for body in [#"{"appAccountToken":"not-a-uuid"}"#, "[]", "", "not json", #"{"appAccountToken":42}"#, "{}"] {
            let answer = try await Self.register(world, "bob", body)
            #expect(answer.status == 400, "\(body)")
            #expect(
                answer.text
                    == #"{"code":"malformedRequest","error":"the body is not {\"appAccountToken\": \"<UUID>\"}"}"#,
                "\(body): \(answer.text)"
            )
        }
    }

    @Test func aTokenTheOwnershipCheckRefusesIsAnswered422AndNotBound() async throws {
        let world = try World(tokenOwnership: .derived(namespace: World.namespace))
        let grace = World.accountToken("grace").uuidString
        let stolen = try await Self.register(world, "mallory", #"{"appAccountToken":"\#(grace)"}"#)
        #expect(stolen.status == 422)
        #expect(stolen.text == #"{"code":"ownershipConflict","error":"the token was not made for this user"}"#)
        #expect(await world.ledger.user(forAppAccountToken: grace.lowercased()) == nil)
        #expect(try await Self.register(world, "bob", #"{"appAccountToken":"\#(UUID().uuidString)"}"#).status == 422)
        #expect(try await Self.register(world, "grace", #"{"appAccountToken":"\#(grace)"}"#).status == 201)
    }

    @Test func withoutTheServiceTokenNothingIsBound() async throws {
        let world = try World()
        let token = UUID().uuidString
        for bearer in [nil, try world.userToken("bob"), "wrong-token-of-some-length"] {
            let answer = try await Self.register(world, "bob", #"{"appAccountToken":"\#(token)"}"#, bearer: bearer)
            #expect(answer.status == 401)
            #expect(answer.headers["WWW-Authenticate"] == #"Bearer realm="iap""#)
        }
        #expect(await world.ledger.user(forAppAccountToken: token.lowercased()) == nil)
        #expect(world.events.events(named: "auth.refused").count == 3)
    }
}
