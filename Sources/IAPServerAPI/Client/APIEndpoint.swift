#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// One App Store Server API call, before the base URL, the token and the headers are added.
struct APIEndpoint: Sendable {
    /// The HTTP method.
    var method: String
    /// The raw path segments after the host, such as `["inApps", "v1", "transactions", "123"]`.
    var pathSegments: [String]
    /// Ordered query pairs; a name may repeat.
    var query: [(name: String, value: String)] = []
    /// The JSON body, if any.
    var body: Data?
    /// Whether sending the request twice has the same effect as sending it once.
    var isIdempotent: Bool
    /// Whether a "not found" answer in Production may be retried in Sandbox.
    var allowsSandboxFallback: Bool = false

    /// The percent-encoded path, starting with `/`.
    var encodedPath: String {
        "/" + pathSegments.map(APIPercentEncoding.pathSegment).joined(separator: "/")
    }

    /// A short description for error messages, such as `GET /inApps/v1/transactions/123`.
    var summary: String {
        "\(method) \(encodedPath)"
    }

    /// Makes an endpoint, rejecting an empty identifier.
    ///
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - path: The fixed leading segments.
    ///   - identifiers: The caller-supplied segments after `path`, each of which must not be empty.
    ///   - suffix: Fixed segments after the identifiers.
    ///   - isIdempotent: Whether the request is safe to repeat.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty identifier.
    init(
        _ method: String,
        _ path: [String],
        identifiers: [(name: String, value: String)] = [],
        suffix: [String] = [],
        isIdempotent: Bool
    ) throws {
        for identifier in identifiers where identifier.value.isEmpty {
            throw IAPError(.invalidArgument, "\(identifier.name) must not be empty")
        }
        self.method = method
        self.pathSegments = path + identifiers.map(\.value) + suffix
        self.isIdempotent = isIdempotent
    }
}
