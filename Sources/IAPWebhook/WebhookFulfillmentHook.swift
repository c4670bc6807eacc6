#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// A ``FulfillmentHook`` that POSTs each grant and take-back to the integrator's backend, so that a backend in any
/// language can be the wallet.
///
/// Each call is `POST url` with `Content-Type: application/json`, `Idempotency-Key: <key>` and
/// `X-IAP-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 over "<t>.<body>">` (see ``WebhookSignature``); the
/// body is a ``WebhookDelivery``.
///
/// - A 2xx or a 409 (the key was applied before) means applied.
/// - A 410 (Gone) or a 422 (Unprocessable Content) is a final refusal (``IAPError/Code/fulfillmentRefused``, not
///   retryable): the receiver read the delivery and will never apply it, so the pipeline dead-letters it at once for
///   a person to look at, instead of waiting out the retry schedule.
/// - Any other status — a 5xx, a 408 or a 429 (transient), any other 4xx (400, 401, 403, 404, ...: a receiver
///   that is misconfigured, which gets fixed) — and a timeout or a refused connection are retryable failures
///   (``IAPError/Code/fulfillmentFailed``): the pipeline's retry queue tries again with backoff under the same
///   idempotency key, and dead-letters the delivery after its last attempt. A support redelivery calls again at once.
///
/// ```swift
/// let hook = WebhookFulfillmentHook(
///     url: URL(string: "https://wallet.internal/iap/deliveries")!,
///     authenticator: try HMACSHA256(key: secret),
///     transport: URLSessionTransport()
/// )
/// let pipeline = DeliveryPipeline(verifier: verifier, catalog: catalog, store: ledger, hook: hook)
/// ```
public struct WebhookFulfillmentHook: FulfillmentHook {
    /// Where deliveries go.
    public let url: URL
    private let authenticator: any MessageAuthenticator
    private let transport: any Transport
    private let clock: any WallClock
    private let timeout: Duration

    /// Creates a hook.
    ///
    /// - Parameters:
    ///   - url: The receiver's endpoint.
    ///   - authenticator: HMAC-SHA256 keyed with the shared secret (`HMACSHA256` in `IAPCrypto`).
    ///   - transport: What sends the requests.
    ///   - clock: The signing time.
    ///   - timeout: How long one request may take.
    public init(
        url: URL,
        authenticator: some MessageAuthenticator,
        transport: some Transport,
        clock: some WallClock = SystemClock(),
        timeout: Duration = .seconds(10)
    ) {
        self.url = url
        self.authenticator = authenticator
        self.transport = transport
        self.clock = clock
        self.timeout = timeout
    }

    public func grant(_ delivery: Delivery) async throws {
        try await send(delivery)
    }

    public func revoke(_ delivery: Delivery) async throws {
        try await send(delivery)
    }

    /// The request a delivery becomes, signed now.
    ///
    /// - Parameter delivery: The grant or take-back.
    /// - Returns: The signed `POST`.
    public func request(for delivery: Delivery) throws -> HTTPRequest {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = try encoder.encode(WebhookDelivery(delivery))
        let timestamp = Int64(clock.now.timeIntervalSince1970.rounded(.down))
        let signature = WebhookSignature(signing: body, at: timestamp, authenticator: authenticator)
        return HTTPRequest(
            method: "POST",
            url: url,
            headers: [
                "Content-Type": "application/json",
                "Idempotency-Key": delivery.idempotencyKey,
                WebhookSignature.headerName: signature.header,
            ],
            body: body,
            timeout: timeout
        )
    }

    private func send(_ delivery: Delivery) async throws {
        let request = try request(for: delivery)
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            var failure = IAPError.wrapping(
                error,
                as: .fulfillmentFailed,
                "the \(delivery.action.rawValue) webhook for \(delivery.transactionId) could not be sent"
            )
            failure.isRetryable = true
            throw failure
        }
        try Self.check(response, what: "the \(delivery.action.rawValue) webhook for \(delivery.transactionId)")
    }

    /// Maps a receiver's answer: 2xx and 409 applied; 410 and 422 refused for good (`fulfillmentRefused`); anything
    /// else a retryable `fulfillmentFailed`.
    ///
    /// - Parameters:
    ///   - response: The answer.
    ///   - what: How messages name the request, such as `the grant webhook for 2000000000000001`.
    static func check(_ response: HTTPResponse, what: String) throws {
        switch response.status {
        case 200...299, 409:
            return
        case 300...399:
            var failure = IAPError(
                .fulfillmentFailed,
                "\(what) answered a redirect, HTTP "
                    + "\(response.status), which is never followed: configure the address it redirects to",
                isRetryable: true
            )
            failure.httpStatus = response.status
            throw failure
        case 410, 422:
            var failure = IAPError(
                .fulfillmentRefused,
                "\(what) was refused for good with HTTP "
                    + "\(response.status)"
            )
            failure.httpStatus = response.status
            throw failure
        default:
            var failure = IAPError(
                .fulfillmentFailed,
                "\(what) answered HTTP \(response.status)",
                isRetryable: true
            )
            failure.httpStatus = response.status
            throw failure
        }
    }
}
