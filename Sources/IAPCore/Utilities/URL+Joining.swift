#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

extension URL {
    /// This URL with a path appended to its own, and a query: how the package's clients build an endpoint's URL
    /// under a configured base (`https://api.example.com/base/` + `/iap/v1/transactions`).
    ///
    /// The base keeps its scheme, host, port and path; its trailing slashes are dropped, so that a base with or
    /// without one gives the same URL.
    ///
    /// - Parameters:
    ///   - encodedPath: The path to append, percent-encoded, starting with `/`.
    ///   - encodedQuery: The query, percent-encoded, without `?`; `nil` or empty for none.
    /// - Returns: The URL, or `nil` when the text is not a URL.
    package func appending(encodedPath: String, encodedQuery: String? = nil) -> URL? {
        var text = absoluteString
        while text.hasSuffix("/") {
            text.removeLast()
        }
        text += encodedPath
        if let encodedQuery, !encodedQuery.isEmpty {
            text += "?" + encodedQuery
        }
        return URL(string: text)
    }
}
