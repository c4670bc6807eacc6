#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// One HTTP request, as the App Store Server API client and the delivery client send it.
public struct HTTPRequest: Sendable, Hashable {
    /// The HTTP method, such as `GET`.
    public var method: String
    /// The absolute URL, with the query already encoded.
    public var url: URL
    /// Header fields. Names are case-insensitive on the wire; keep them as Apple documents them.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?
    /// How long the whole exchange may take.
    public var timeout: Duration

    /// Creates a request.
    public init(
        method: String,
        url: URL,
        headers: [String: String] = [:],
        body: Data? = nil,
        timeout: Duration = .seconds(30)
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// One HTTP response.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code, such as `200`.
    public var status: Int
    /// Header fields, with names lowercased.
    public var headers: [String: String]
    /// The body; empty when the response had none.
    public var body: Data

    /// Creates a response. Header names are lowercased.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(
            headers.map { ($0.key.lowercased(), $0.value) },
            uniquingKeysWith: { _, last in last }
        )
        self.body = body
    }

    /// The value of a header field, looked up case-insensitively.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}

/// Performs one HTTP exchange.
///
/// A `Transport` does exactly one request and reports exactly what happened; retries, backoff and
/// authentication live above it, in `IAPCore`. `URLSessionTransport` (in `IAPTransportURLSession`)
/// is the production implementation and `ScriptedTransport` (in `IAPTesting`) the test double.
///
/// ## Implementation requirements
/// - Any HTTP status, including 4xx and 5xx, is a response, not an error.
/// - A failure before a complete response throws ``IAPError`` with code
///   ``IAPError/Code/timeout`` (the request's ``HTTPRequest/timeout`` elapsed),
///   ``IAPError/Code/cancelled`` (the calling task was cancelled) or
///   ``IAPError/Code/transportFailure`` (anything else: DNS, connection refused, TLS, reset, ...).
/// - A transport that caps the size of a response body throws ``IAPError/Code/decodingFailure`` for a larger
///   one, which the API client does not retry.
/// - Never follow a redirect to another host silently; never retry by itself.
/// - Safe to call from many tasks at once.
public protocol Transport: Sendable {
    /// Sends a request and returns the response.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response, whatever its status.
    /// - Throws: ``IAPError`` with code `timeout`, `cancelled` or `transportFailure`.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
