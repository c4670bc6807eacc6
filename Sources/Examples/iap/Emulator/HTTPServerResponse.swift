import Foundation
import IAPCore

/// One HTTP/1.1 response the emulator's server writes.
struct HTTPServerResponse: Sendable {
    /// The status code.
    var status: Int
    /// The headers besides `Content-Length`, `Connection` and `Date`, which the server adds.
    var headers: [(name: String, value: String)]
    /// The body.
    var body: Data

    /// Creates a response.
    init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The response of an in-process answer; a JSON body keeps its `Content-Type`.
    init(_ response: HTTPResponse) {
        var headers: [(name: String, value: String)] = []
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) {
            headers.append((name == "content-type" ? "Content-Type" : name, value))
        }
        self.init(status: response.status, headers: headers, body: response.body)
    }

    /// A JSON response.
    static func json(_ status: Int, _ body: Data) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }

    /// The reason phrase of a status code.
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 202: "Accepted"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }

    /// The bytes on the wire: status line, headers, an empty line, the body.
    func serialized(closing: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for header in headers {
            head += "\(header.name): \(header.value)\r\n"
        }
        head += "Content-Length: \(body.count)\r\n"
        if closing {
            head += "Connection: close\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + Array(body)
    }
}
