import Foundation
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTestSupport
import IAPWebhook
import IAPTesting
import IAPTransportURLSession
import Testing

@Suite("A webhook over URLSessionTransport never follows a redirect")
struct WebhookRedirectTests {
    @Test(arguments: [302, 307])
    func aRedirectIsAFailedAttemptWithItsStatusAndItsTargetIsNeverCalled(status: Int) async throws {
        let shop = try SimulatedShop()
        let server = try LoopbackServer { request in
            request.target == "/iap/deliveries"
                ? .respond(status: status, headers: ["Location": "/elsewhere"], body: Data())
                : .respond(status: 200, headers: [:], body: Data())
        }
        defer { server.stop() }
        let hook = WebhookFulfillmentHook(
            url: try #require(URL(string: "\(server.url)/iap/deliveries")),
            authenticator: try HMACSHA256(key: Array("a-shared-secret-of-32-bytes-long".utf8)),
            transport: URLSessionTransport(redirects: .none),
            clock: shop.clock
        )
        let pipeline = DeliveryPipeline(
            verifier: shop.verifier,
            catalog: shop.catalog,
            store: shop.ledger,
            hook: hook,
            clock: shop.clock,
            retryPolicy: RetryPolicy(jitter: 0)
        )
        let bought = try await shop.buy("coins.100", user: "alice")
        let outcome = await pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        guard case .deferred(_, let error) = outcome else {
            Issue.record("expected deferred, got \(outcome)")
            return
        }
        #expect(error.code == .fulfillmentFailed)
        #expect(error.httpStatus == status)
        #expect(error.isRetryable)
        #expect(server.requests.map(\.target) == ["/iap/deliveries"])
    }
}
