import Foundation

/// One HTTP/1.1 request as the emulator's server read it: method, path, query, headers and body.
struct HTTPServerRequest: Sendable {
    /// The method, such as `GET`, as sent.
    var method: String
    /// The path without its query, percent-decoded per segment by ``pathSegments``.
    var path: String
    /// The query pairs in order; a name may repeat.
    var query: [(name: String, value: String)]
    /// The headers, names lowercased; a repeated header keeps its last value.
    var headers: [String: String]
    /// The body (`Content-Length` bytes), empty when there is none.
    var body: Data

    /// The path's segments, percent-decoded, without the empty leading one.
    var pathSegments: [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map {
            String($0).removingPercentEncoding ?? String($0)
        }
    }

    /// Every value of a query parameter, in order.
    func queryValues(_ name: String) -> [String] {
        query.filter { $0.name == name }.map(\.value)
    }

    /// The single value of a query parameter, or `nil` when it is absent.
    func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}
