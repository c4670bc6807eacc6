import Foundation
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTestSupport
import IAPWebhook

extension LoopbackServer {
    /// A webhook receiver as a wallet runs one: 200 to a JSON `POST` of a ``WebhookDelivery`` whose
    /// `X-IAP-Signature` verifies under `secret` and whose `Idempotency-Key` header is the body's, and 401 to anything
    /// else (counted in `refused`, when given).
    ///
    /// - Parameters:
    ///   - secret: The grant secret the tool signs with.
    ///   - path: The target the deliveries must be posted to; any target when `nil`.
    ///   - refused: Counts the requests answered 401.
    ///   - delayMilliseconds: How long each request waits before its answer (each connection has a thread).
    static func wallet(
        secret: String,
        path: String? = nil,
        refused: LockedValue<Int>? = nil,
        delayMilliseconds: UInt32 = 0
    ) throws -> LoopbackServer {
        let hmac = try HMACSHA256(key: Array(secret.utf8))
        return try LoopbackServer { request in
            if delayMilliseconds > 0 {
                usleep(delayMilliseconds * 1_000)
            }
            guard request.method == "POST", path == nil || request.target == path,
                request.headers["content-type"] == "application/json",
                let header = request.headers["x-iap-signature"],
                let signature = try? WebhookSignature(header: header),
                signature.isValid(for: Array(request.body), authenticator: hmac, now: SystemClock().now),
                let delivery = try? JSONDecoder().decode(WebhookDelivery.self, from: request.body),
                request.headers["idempotency-key"] == delivery.idempotencyKey
            else {
                refused?.withLock { $0 += 1 }
                return .respond(status: 401, headers: [:], body: Data())
            }
            return .respond(status: 200, headers: [:], body: Data())
        }
    }
}
