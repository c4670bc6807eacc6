#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// One request as the server received it: method, target, headers, the whole body, and what routing found.
///
/// The body is complete when a handler sees the request, and never larger than
/// ``HTTPServer/Configuration/maximumBodySize``.
public struct HTTPServerRequest: Sendable {
    /// The method as sent, such as `GET`.
    public var method: String
    /// The request target as sent on the request line, path and query, percent-escapes kept.
    public var target: String
    /// The HTTP version as sent, such as `HTTP/1.1`.
    public var version: String
    /// The path as sent, without the query, percent-escapes kept.
    public var path: String
    /// The path's segments, percent-decoded, without empty ones: `/users/a%2Fb/` is `["users", "a/b"]`.
    public var pathSegments: [String]
    /// The query pairs in order, percent-decoded (`+` is a space); a name may repeat.
    public var query: [(name: String, value: String)]
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body; empty when there is none.
    public var body: Data
    /// The values of the matched route's `{name}` segments, percent-decoded; empty before routing.
    public var pathParameters: [String: String] = [:]
    /// The pattern of the route that matched, such as `/iap/v1/users/{userId}/entitlements`; `nil` when none did.
    /// It names the endpoint without naming the user, for logs and metrics.
    public var route: String?
    /// The client's IP address, when known.
    public var remoteAddress: String?

    /// Creates a request, for tests and for answering in process.
    ///
    /// - Parameters:
    ///   - method: The method, such as `GET`.
    ///   - target: The request target, such as `/users/42/history?limit=5`.
    ///   - version: The HTTP version.
    ///   - headers: The header fields.
    ///   - body: The body.
    ///   - remoteAddress: The client's IP address.
    /// - Throws: ``IAPError`` `.malformedRequest` when the target is not a path or holds a malformed
    ///   percent-escape.
    public init(
        method: String,
        target: String,
        version: String = "HTTP/1.1",
        headers: HTTPHeaders = [:],
        body: Data = Data(),
        remoteAddress: String? = nil
    ) throws {
        guard let parsed = HTTPRequestTarget(target) else {
            throw IAPError(.malformedRequest, "the request target is not a path with valid percent-escapes")
        }
        self.method = method
        self.target = target
        self.version = version
        self.path = parsed.path
        self.pathSegments = parsed.segments
        self.query = parsed.query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The value of a `{name}` segment of the matched route.
    ///
    /// - Parameter name: The parameter's name, as in the pattern.
    public func pathParameter(_ name: String) -> String? {
        pathParameters[name]
    }

    /// The first value of a query parameter, or `nil` when it is absent.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// Every value of a query parameter, in order.
    public func queryValues(_ name: String) -> [String] {
        query.filter { $0.name == name }.map(\.value)
    }
}
