#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// A ``DeliveryClient`` that posts to the app's server: `POST {baseURL}/iap/v1/transactions`, answered by
/// ``TransactionSubmissionHandler``.
///
/// The HTTP status decides first: `401` and `403` are ``IAPError/Code/authenticationRequired`` (the customer must
/// sign in again; the purchase is kept, unfinished, and ``PurchaseCoordinator/signIn(_:)`` submits it again); `5xx`,
/// `408` and `429` are rejections that may pass (the purchase is kept and submitted again); any other `4xx` is a
/// rejection (`deliveryRejected`, or the code the server's JSON names); `200` and `202` carry the outcome in their
/// JSON body. Only a `200` whose body says `"finish": true` is taken as settled, and an answer whose body cannot be
/// read is never taken for a delivery.
///
/// The header fields come from a provider called for every request, so that a session token refreshed after the
/// client was created is the one sent:
///
/// ```swift
/// let delivery = HTTPDeliveryClient(baseURL: api, transport: URLSessionTransport()) {
///     ["Authorization": "Bearer \(try await session.freshAccessToken())"]
/// }
/// ```
public struct HTTPDeliveryClient: DeliveryClient {
    /// Provides the extra header fields of a request (an `Authorization` header, say); called for every request.
    /// A provider that throws (nobody signed in) makes the submission fail with `authenticationRequired` before
    /// anything is sent.
    public typealias HeaderProvider = @Sendable () async throws -> [String: String]

    /// The server's base URL, such as `https://api.example.com`.
    public let baseURL: URL
    /// How long one exchange may take.
    public let timeout: Duration
    private let transport: any Transport
    private let headers: HeaderProvider

    /// The path the client posts to, below ``baseURL``.
    public static let path = "/iap/v1/transactions"

    /// Creates a client whose header fields come from a provider, called for every request.
    ///
    /// - Parameters:
    ///   - baseURL: The server's base URL.
    ///   - transport: Sends the requests (`URLSessionTransport` in an app).
    ///   - timeout: How long one exchange may take.
    ///   - headers: Provides the extra header fields of each request.
    public init(
        baseURL: URL,
        transport: some Transport,
        timeout: Duration = .seconds(30),
        headers: @escaping HeaderProvider
    ) {
        self.baseURL = baseURL
        self.transport = transport
        self.headers = headers
        self.timeout = timeout
    }

    /// Creates a client with fixed header fields, for servers whose credentials never change (an API key); use a
    /// header provider for session tokens, which expire.
    ///
    /// - Parameters:
    ///   - baseURL: The server's base URL.
    ///   - transport: Sends the requests (`URLSessionTransport` in an app).
    ///   - headers: Extra header fields for every request.
    ///   - timeout: How long one exchange may take.
    public init(
        baseURL: URL,
        transport: some Transport,
        headers: [String: String] = [:],
        timeout: Duration = .seconds(30)
    ) {
        self.init(baseURL: baseURL, transport: transport, timeout: timeout) { headers }
    }

    /// Whether a base URL keeps the submission private on the way: `https`, or `http` to a loopback host
    /// (`localhost`, `127.x.x.x`, `::1`: a simulator talking to a server on the same machine).
    static func isPrivate(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https":
            return true
        case "http":
            let host = (url.host(percentEncoded: false) ?? "").lowercased()
            if host == "localhost" || host == "::1" || host == "[::1]" {
                return true
            }
            // 127.x.x.x as an address, never a name that begins so (`127.example.com`).
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
        default:
            return false
        }
    }

    /// Posts the submission and reads the server's answer.
    ///
    /// - Parameter submission: The signed transaction and its context.
    /// - Returns: The server's outcome.
    /// - Throws: ``IAPError`` `transportFailure`, `timeout` or `cancelled` (retryable) when no answer arrived;
    ///   `authenticationRequired` (retryable) when the header provider failed, before anything was sent;
    ///   `invalidConfiguration` when ``baseURL`` cannot take the path, or is plain `http` to a host other than a
    ///   loopback one (nothing is sent; the purchase stays unfinished until the app is fixed).
    public func submit(_ submission: TransactionSubmission) async throws -> TransactionSubmissionResult {
        let url = try endpoint(Self.path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var requestHeaders = try await credentials()
        requestHeaders["Content-Type"] = "application/json"
        requestHeaders["Accept"] = "application/json"
        let request = HTTPRequest(
            method: "POST",
            url: url,
            headers: requestHeaders,
            body: try encoder.encode(submission),
            timeout: timeout
        )
        return Self.result(of: try await send(request))
    }

    /// The signed-in user's entitlements as the server's ledger says: `GET /iap/v1/me/entitlements` under
    /// ``baseURL``, with the same header fields as a submission (the user's token).
    ///
    /// - Returns: The server's answer.
    /// - Throws: ``IAPError`` `authenticationRequired` for a `401` or `403` (or when the header provider failed),
    ///   `transportFailure` (retryable) when no answer arrived, `invalidConfiguration` for a base URL that cannot be
    ///   used, `decodingFailure` for an answer that is not the entitlements JSON, `deliveryRejected` for another
    ///   status.
    public func entitlements() async throws -> ServerEntitlements {
        let url = try endpoint(Self.entitlementsPath)
        var requestHeaders = try await credentials()
        requestHeaders["Accept"] = "application/json"
        let response = try await send(HTTPRequest(method: "GET", url: url, headers: requestHeaders, timeout: timeout))
        switch response.status {
        case 200:
            do {
                return try JSONDecoder().decode(ServerEntitlements.self, from: response.body)
            } catch {
                throw IAPError(.decodingFailure, "the server's entitlements are not the documented JSON: \(error)")
            }
        case 401, 403:
            var failure = IAPError(
                .authenticationRequired,
                "the server answered \(response.status): the customer must sign in again",
                isRetryable: true
            )
            failure.httpStatus = response.status
            throw failure
        default:
            var failure = IAPError(
                .deliveryRejected,
                "the server answered \(response.status) for the entitlements",
                isRetryable: response.status >= 500 || response.status == 408 || response.status == 429
            )
            failure.httpStatus = response.status
            throw failure
        }
    }

    /// The path of the signed-in user's entitlements under ``baseURL``.
    public static let entitlementsPath = "/iap/v1/me/entitlements"

    /// The URL of `path` under ``baseURL``, refused when it would cross the network in the clear.
    private func endpoint(_ path: String) throws -> URL {
        guard Self.isPrivate(baseURL) else {
            throw IAPError(
                .invalidConfiguration,
                "the delivery base URL '\(baseURL)' is not https: the purchase and the user's credentials would cross "
                    + "the network in the clear (plain http is for a loopback host only)"
            )
        }
        guard let url = baseURL.appending(encodedPath: path) else {
            throw IAPError(.invalidConfiguration, "the delivery base URL '\(baseURL)' cannot take \(path)")
        }
        return url
    }

    /// The header fields of a request, from the provider.
    private func credentials() async throws -> [String: String] {
        do {
            return try await headers()
        } catch {
            let reason = (error as? IAPError)?.message ?? "\(error)"
            var failure = IAPError(
                .authenticationRequired,
                "the app has no credentials for the delivery server: \(reason)",
                underlying: error
            )
            failure.isRetryable = true
            throw failure
        }
    }

    /// Sends a request; no answer is a retryable `transportFailure`.
    private func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        do {
            return try await transport.send(request)
        } catch {
            var failure = IAPError.wrapping(error, as: .transportFailure, "the delivery server could not be reached")
            failure.isRetryable = true
            throw failure
        }
    }

    /// Maps an HTTP answer to a result.
    static func result(of response: HTTPResponse) -> TransactionSubmissionResult {
        let decoded = try? JSONDecoder().decode(TransactionSubmissionResult.self, from: response.body)
        let status = response.status
        func rejection(_ code: IAPError.Code, _ message: String, retryable: Bool) -> TransactionSubmissionResult {
            var error = IAPError(code, message, isRetryable: retryable)
            error.httpStatus = status
            return TransactionSubmissionResult(outcome: .rejected, transactionId: decoded?.transactionId, error: error)
        }
        if status == 401 || status == 403 {
            let reason = decoded?.error.map { "\($0.code): \($0.message)" } ?? "no explanation"
            // The purchase stays unfinished, and is submitted again once the customer signed in.
            return rejection(
                .authenticationRequired,
                "the delivery server answered \(status) (\(reason)): the customer must sign in again; the purchase is "
                    + "kept and submitted after the sign-in",
                retryable: true
            )
        }
        if status >= 500 || status == 408 || status == 429 {
            let reason = decoded?.error.map { "\($0.code): \($0.message)" } ?? "no explanation"
            return rejection(
                decoded?.error?.code ?? .deliveryRejected,
                "the delivery server answered \(status) (\(reason)); the purchase is kept and submitted again",
                retryable: true
            )
        }
        if (400..<500).contains(status) {
            if var error = decoded?.error {
                error.isRetryable = false
                error.httpStatus = status
                return TransactionSubmissionResult(
                    outcome: .rejected,
                    transactionId: decoded?.transactionId,
                    error: error
                )
            }
            let code: IAPError.Code = status == 404 || status == 405 ? .invalidConfiguration : .deliveryRejected
            return rejection(code, "the delivery server answered \(status) without a result", retryable: false)
        }
        guard (200..<300).contains(status), let decoded else {
            return rejection(
                .decodingFailure,
                "the delivery server answered \(status) without a readable result; nothing is finished",
                retryable: true
            )
        }
        if decoded.finish,
            status != 200 || (try? JSONDecoder().decode(FinishFlag.self, from: response.body))?.finish != true
        {
            // A settled outcome must come with 200 and `"finish": true`; anything else is not taken as settled.
            return TransactionSubmissionResult(
                outcome: .pending,
                transactionId: decoded.transactionId,
                error: IAPError(
                    .deliveryRejected,
                    "the delivery server answered \(status) \(decoded.outcome.rawValue) without \"finish\": true; "
                        + "nothing is finished",
                    isRetryable: true
                )
            )
        }
        return decoded
    }

    /// The answer's `finish` field, which ``TransactionSubmissionResult`` derives from the outcome instead.
    private struct FinishFlag: Decodable {
        var finish: Bool?
    }
}
