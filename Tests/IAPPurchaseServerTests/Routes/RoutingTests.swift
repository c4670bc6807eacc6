import Foundation
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPTesting
import Testing

/// What the router answers for a path no route has, or a method a path does not take.
@Suite("Routes: unknown paths and wrong methods")
struct RoutingTests {
    typealias World = PurchaseServerWorld

    @Test func anUnknownPathIsAnswered404() async throws {
        let world = try World()
        for path in ["/nowhere", "/iap/v1", "/iap/v1/users/alice", "/iap/v1/users/alice/entitlements/extra", "/"] {
            let answer = try await world.service("GET", path)
            #expect(answer.status == 404, "\(path)")
            #expect(answer.text == #"{"error":"no such endpoint"}"#)
        }
    }

    @Test func aKnownPathWithAnotherMethodIsAnswered405NamingTheAllowedOnes() async throws {
        let world = try World()
        let cases: [(method: String, path: String, allow: String)] = [
            ("DELETE", "/iap/v1/transactions", "POST"), ("GET", "/iap/v1/transactions", "POST"),
            ("GET", "/iap/v1/notifications", "POST"), ("POST", "/iap/v1/users/alice/entitlements", "GET, HEAD"),
            ("PUT", "/iap/v1/users/alice/history", "GET, HEAD"), ("GET", "/iap/v1/users/alice/account-tokens", "POST"),
            ("GET", "/iap/v1/support/orders/ABC/lookup", "POST"),
            ("DELETE", "/iap/v1/support/orders/ABC/redeliver", "POST"),
            ("POST", "/healthz", "GET, HEAD"), ("POST", "/readyz", "GET, HEAD"), ("POST", "/metrics", "GET, HEAD"),
            ("post", "/iap/v1/transactions", "POST"),
        ]
        for item in cases {
            let answer = try await world.service(item.method, item.path)
            #expect(answer.status == 405, "\(item.method) \(item.path)")
            #expect(answer.headers["Allow"] == item.allow, "\(item.method) \(item.path)")
            #expect(answer.text == #"{"error":"method not allowed"}"#)
        }
        // Nothing reached a handler: no refusal was reported, nothing counted.
        #expect(world.events.events.isEmpty)
        #expect(world.metrics.responses.value(labels: ["/iap/v1/transactions", "405"]) == 0)
    }

    @Test func headIsRoutedToTheGetRoute() async throws {
        let world = try World()
        let health = try await world.client.send("HEAD", "/healthz")
        #expect(health.status == 200)
        let entitlements = try await world.client.send("HEAD", "/iap/v1/users/alice/entitlements")
        #expect(entitlements.status == 401)
    }
}
