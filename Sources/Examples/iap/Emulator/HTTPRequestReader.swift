#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCore

/// Reads one HTTP/1.1 request from a connected socket, strictly and within limits.
///
/// The head (request line and headers) may be at most ``Limits/header`` bytes and the body at most
/// ``Limits/body``; only `Content-Length` bodies are accepted. The whole request must arrive before
/// ``Limits/readTimeout`` has passed, so a slow client cannot hold a connection for long. Anything else is a
/// ``Outcome/rejected(status:reason:)`` the server answers before it closes the connection.
struct HTTPRequestReader {
    /// The limits on one request.
    struct Limits: Sendable {
        /// The largest head, request line and headers, in bytes.
        var header = 16 * 1024
        /// The largest body in bytes.
        var body = 1024 * 1024
        /// How long the whole request may take to arrive.
        var readTimeout: Duration = .seconds(10)
    }

    /// What reading produced.
    enum Outcome {
        /// A well-formed request.
        case request(HTTPServerRequest)
        /// A request the server refuses, with the status to answer and why.
        case rejected(status: Int, reason: String)
        /// The client closed the connection before sending anything.
        case closed
    }

    let descriptor: Int32
    let limits: Limits

    /// Reads the request.
    ///
    /// - Returns: The request, a rejection, or `.closed`.
    func read() -> Outcome {
        let deadline = ContinuousClock.now.advanced(by: limits.readTimeout)
        var buffer: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            if buffer.count > limits.header {
                return .rejected(status: 431, reason: "the request head is longer than \(limits.header) bytes")
            }
            let scanned = buffer.count
            switch receive(into: &buffer, upTo: limits.header + 4 - buffer.count, deadline: deadline) {
            case .data:
                // Only the new bytes (and the three before them) can complete the `\r\n\r\n`.
                headEnd = Self.endOfHead(in: buffer, from: max(0, scanned - 3))
            case .end:
                return buffer.isEmpty ? .closed : .rejected(status: 400, reason: "the request ended in its head")
            case .timeout:
                return buffer.isEmpty ? .closed : .rejected(status: 408, reason: "the request took too long")
            case .failure:
                return .closed
            }
        }
        guard let headEnd, headEnd <= limits.header else {
            return .rejected(status: 431, reason: "the request head is longer than \(limits.header) bytes")
        }
        var request: HTTPServerRequest
        let contentLength: Int
        switch Self.parseHead(Array(buffer[..<headEnd]), bodyLimit: limits.body) {
        case .success(let parsed):
            request = parsed.request
            contentLength = parsed.contentLength
        case .failure(let rejection):
            return .rejected(status: rejection.status, reason: rejection.reason)
        }
        var body = Array(buffer[(headEnd + 4)...])
        while body.count < contentLength {
            switch receive(into: &body, upTo: contentLength - body.count, deadline: deadline) {
            case .data:
                continue
            case .end, .failure:
                return .rejected(status: 400, reason: "the body is shorter than its Content-Length")
            case .timeout:
                return .rejected(status: 408, reason: "the request took too long")
            }
        }
        request.body = Data(body.prefix(contentLength))
        return .request(request)
    }

    private enum Received {
        case data, end, timeout, failure
    }

    /// Waits for data until the deadline and appends at most `count` bytes of it.
    private func receive(into buffer: inout [UInt8], upTo count: Int, deadline: ContinuousClock.Instant) -> Received {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return .timeout }
            let milliseconds = max(1, remaining.wholeMilliseconds)
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: milliseconds))
            if ready < 0 {
                if errno == EINTR { continue }
                return .failure
            }
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: max(1, min(count, 64 * 1024)))
            let received = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if received < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .failure
            }
            if received == 0 { return .end }
            buffer.append(contentsOf: chunk[..<received])
            return .data
        }
    }

    /// The index of the `\r\n\r\n` that ends the head, if it has arrived.
    static func endOfHead(in buffer: [UInt8], from start: Int = 0) -> Int? {
        guard buffer.count >= 4, start <= buffer.count - 4 else { return nil }
        for index in start...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// Why a head is refused.
    struct Rejection: Error {
        let status: Int
        let reason: String
    }

    /// Parses the request line and the headers.
    static func parseHead(
        _ head: [UInt8],
        bodyLimit: Int
    ) -> Result<(request: HTTPServerRequest, contentLength: Int), Rejection> {
        func reject(_ reason: String, status: Int = 400) -> Result<
            (request: HTTPServerRequest, contentLength: Int), Rejection
        > {
            .failure(Rejection(status: status, reason: reason))
        }
        guard head.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) || $0 == 13 || $0 == 10 || $0 >= 128 }),
            let text = String(validUTF8: head)
        else {
            return reject("the request head holds bytes that are not allowed")
        }
        let lines = text.components(separatedBy: "\r\n")
        guard !lines.contains(where: { $0.contains("\r") || $0.contains("\n") }) else {
            return reject("the request head has a bare CR or LF")
        }
        guard let requestLine = lines.first else { return reject("the request has no request line") }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return reject("the request line is not 'METHOD TARGET HTTP/1.1'") }
        let method = String(parts[0])
        let target = String(parts[1])
        let version = parts[2]
        guard !method.isEmpty, method.utf8.allSatisfy(isTokenByte) else { return reject("the method is not a token") }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            return reject(
                "the protocol version is not HTTP/1.1 or HTTP/1.0",
                status: version.hasPrefix("HTTP/") ? 505 : 400
            )
        }
        guard target.hasPrefix("/"), !target.contains(where: { $0.isWhitespace }) else {
            return reject("the request target is not an absolute path")
        }
        var headers: [String: String] = [:]
        var contentLengths: Set<String> = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return reject("a header line has no ':'") }
            let name = String(line[..<colon])
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
                return reject("a header name is not a token")
            }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            let key = name.lowercased()
            if key == "content-length" {
                contentLengths.insert(value)
            }
            headers[key] = value
        }
        if headers["transfer-encoding"] != nil {
            return reject("Transfer-Encoding is not supported; send a Content-Length", status: 501)
        }
        var contentLength = 0
        if !contentLengths.isEmpty {
            guard contentLengths.count == 1, let value = contentLengths.first, !value.isEmpty, value.count <= 10,
                value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let length = Int(value)
            else {
                return reject("the Content-Length is not one decimal number")
            }
            guard length <= bodyLimit else {
                return reject("the body is longer than \(bodyLimit) bytes", status: 413)
            }
            contentLength = length
        }
        let path: String
        var query: [(name: String, value: String)] = []
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            for pair in target[target.index(after: mark)...].split(separator: "&") {
                let pieces = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = decodeQueryComponent(pieces[0])
                let value = pieces.count > 1 ? decodeQueryComponent(pieces[1]) : ""
                guard let name, let value else { return reject("the query is not valid percent-encoding") }
                query.append((name, value))
            }
        } else {
            path = target
        }
        guard path.removingPercentEncoding != nil else { return reject("the path is not valid percent-encoding") }
        let request = HTTPServerRequest(method: method, path: path, query: query, headers: headers, body: Data())
        return .success((request, contentLength))
    }

    private static func decodeQueryComponent(_ component: Substring) -> String? {
        String(component).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// Whether a byte may appear in an HTTP token (RFC 9110 `tchar`).
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
