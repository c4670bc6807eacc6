import Foundation
import IAPCore
import IAPHTTPServer
import Testing

/// Drives an ``HTTPRouter`` in process, as a client would over a socket: it builds the request (method, target with
/// its query, headers, body), hands it to `respond(to:)`, which routes it and fills in its route and path parameters,
/// and returns what came back.
struct RouterTester: Sendable {
    let router: HTTPRouter

    /// Sends one request.
    ///
    /// - Parameters:
    ///   - method: The method, such as `GET`.
    ///   - target: The path and query, escapes kept, such as `/iap/v1/users/alice/history?limit=2`.
    ///   - bearer: The token of an `Authorization: Bearer` header; none when `nil`.
    ///   - headers: Further header fields, in order (a name may repeat).
    ///   - body: The body.
    func send(
        _ method: String,
        _ target: String,
        bearer: String? = nil,
        headers: [(String, String)] = [],
        body: String = ""
    ) async throws -> TestResponse {
        var fields = HTTPHeaders()
        if let bearer {
            fields.add(name: "Authorization", value: "Bearer \(bearer)")
        }
        for (name, value) in headers {
            fields.add(name: name, value: value)
        }
        let request = try HTTPServerRequest(method: method, target: target, headers: fields, body: Data(body.utf8))
        return TestResponse(try await router.respond(to: request))
    }
}

/// What the router answered.
struct TestResponse: Sendable {
    let status: Int
    let headers: HTTPHeaders
    let body: Data

    init(_ response: HTTPServerResponse) {
        status = response.status
        headers = response.headers
        body = response.body
    }

    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }

    /// Everything the client sees: the status, the header fields and the body.
    var everything: String {
        "\(status)\n" + headers.map { "\($0.name): \($0.value)\n" }.joined() + text
    }

    /// The body as a JSON object.
    func json() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: body)
        return try #require(object as? [String: Any], "not a JSON object: \(text)")
    }

    /// The body decoded as `type`.
    func decode<T: Decodable>(_ type: T.Type, with decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: body)
    }

    /// The `code` and `error` of an error answer (`{"code": ..., "error": ...}`).
    func failure() throws -> (code: String?, error: String?) {
        let object = try json()
        return (object["code"] as? String, object["error"] as? String)
    }
}
