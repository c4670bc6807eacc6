import Foundation
import IAPApp
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPTesting
import Testing

/// `GET /iap/v1/me/entitlements`: the app reads its user's entitlements with the user's token, and
/// `HTTPDeliveryClient.entitlements()` is its client.
@Suite("Routes: the app's own entitlements")
struct MyEntitlementsRouteTests {
    typealias World = PurchaseServerWorld

    @Test func theUsersTokenReadsTheSameListingAsTheServiceRouteAndNothingElseGetsIn() async throws {
        let world = try World()
        _ = try await world.buyAndSubmit("plus.monthly", user: "alice")
        _ = try await world.buyAndSubmit("pro.lifetime", user: "bob")

        let mine = try await world.client.send("GET", "/iap/v1/me/entitlements", bearer: try world.userToken("alice"))
        #expect(mine.status == 200)
        let service = try await world.service("GET", "/iap/v1/users/alice/entitlements")
        #expect(mine.text == service.text)
        #expect(!mine.text.contains("bob"))

        for bearer in [
            nil, World.serviceToken, try world.userToken("alice", secret: "another-secret-of-enough-length"),
        ] {
            let refused = try await world.client.send("GET", "/iap/v1/me/entitlements", bearer: bearer)
            #expect(refused.status == 401)
            #expect(refused.headers["WWW-Authenticate"] == #"Bearer realm="iap""#)
            #expect(!refused.text.contains("alice"))
        }
        let at = try await world.client.send(
            "GET",
            "/iap/v1/me/entitlements?at=0",
            bearer: try world.userToken("alice")
        )
        #expect(at.status == 400)
    }

    @Test func theAppsClientReadsThemWithTheHeadersOfItsSubmissions() async throws {
        let world = try World()
        let plus = try await world.buyAndSubmit("plus.monthly", user: "alice")
        let token = try world.userToken("alice")
        let tester = world.client
        let transport = InProcessTransport { request in
            var target = request.url.path
            if let query = request.url.query {
                target += "?" + query
            }
            let bearer = request.headers["Authorization"].map { String($0.dropFirst("Bearer ".count)) }
            let answer = try await tester.send(request.method, target, bearer: bearer)
            return HTTPResponse(status: answer.status, body: answer.body)
        }
        let client = HTTPDeliveryClient(
            baseURL: URL(string: "https://api.example.com/")!,
            transport: transport,
            headers: ["Authorization": "Bearer \(token)"]
        )
        let entitlements = try await client.entitlements()
        #expect(entitlements.userId == "alice")
        #expect(entitlements.hasAccess(to: "plus.monthly"))
        #expect(entitlements.entitlements.first?.originalTransactionId == plus.originalTransactionId)
        #expect(entitlements.instant == world.clock.now)

        let stranger = HTTPDeliveryClient(baseURL: URL(string: "https://api.example.com/")!, transport: transport)
        await #expect(throws: IAPError(.authenticationRequired)) { _ = try await stranger.entitlements() }
    }
}
