#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// One answer: a status, header fields and a body.
///
/// The server adds `Content-Length`, `Date` and, when it closes the connection, `Connection: close`; fields of
/// those names set here are left out (`Connection: close` here closes the connection after the answer). A status
/// outside 200...599, or a field whose name is not an HTTP token or whose value holds a line break, is replaced
/// by a `500` and reported as an `http.response.invalid` event.
public struct HTTPServerResponse: Sendable, Hashable {
    /// The status code.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Data

    /// Creates a response.
    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON answer of bytes already encoded.
    ///
    /// - Parameters:
    ///   - body: The JSON text.
    ///   - status: The status; `200` by default.
    public static func json(_ body: Data, status: Int = 200) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: ["Content-Type": "application/json"], body: body)
    }

    /// A JSON answer of an `Encodable` value.
    ///
    /// - Parameters:
    ///   - value: What to encode.
    ///   - status: The status; `200` by default.
    ///   - encoder: The encoder; keys sorted, slashes unescaped by default.
    /// - Throws: The encoder's error.
    public static func json(
        _ value: some Encodable,
        status: Int = 200,
        encoder: JSONEncoder = defaultEncoder()
    ) throws -> HTTPServerResponse {
        .json(try encoder.encode(value), status: status)
    }

    /// A `text/plain; charset=utf-8` answer.
    public static func text(_ text: String, status: Int = 200) -> HTTPServerResponse {
        HTTPServerResponse(
            status: status,
            headers: ["Content-Type": "text/plain; charset=utf-8"],
            body: Data(text.utf8)
        )
    }

    /// The server's own error answer: `{"error": "<message>"}` with the status.
    ///
    /// The message goes to the client: keep it neutral (what was wrong with the request, never another user's data
    /// or the server's state).
    public static func error(_ status: Int, _ message: String) -> HTTPServerResponse {
        let encoded = (try? JSONEncoder().encode(["error": message])) ?? Data(#"{"error":"error"}"#.utf8)
        return .json(encoded, status: status)
    }

    /// The encoder of ``json(_:status:encoder:)``: keys sorted, slashes unescaped.
    public static func defaultEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
