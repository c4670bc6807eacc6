package import Foundation
import IAPCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 and an ephemeral port, for tests against real sockets: the transport, and a
/// webhook receiver the command-line tool posts to.
///
/// Each connection runs on its own thread: the server reads one request (head and `Content-Length` body),
/// records it, asks the handler what to do, and answers or hangs until the client goes away.
package final class LoopbackServer: Sendable {
    package struct Request: Sendable {
        package var method: String
        package var target: String
        package var headers: [String: String]
        package var body: Data
    }

    package enum Reply: Sendable {
        /// Answers with this status line code, headers and body, then closes.
        case respond(status: Int, headers: [String: String], body: Data)
        /// Never answers; waits until the client closes the connection.
        case hang
    }

    package let port: UInt16
    private let listener: Int32
    private let handler: @Sendable (Request) -> Reply
    private let recorded = LockedValue<[Request]>([])

    package init(handler: @escaping @Sendable (Request) -> Reply) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else {
            throw POSIXError(.EIO)
        }
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = UInt16(bigEndian: address.sin_port)
        self.listener = fd
        self.handler = handler
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// The requests received so far.
    package var requests: [Request] {
        recorded.withLock { $0 }
    }

    /// The base URL of the server.
    package var url: URL {
        URL(string: "http://127.0.0.1:\(port)")!
    }

    /// Stops accepting connections.
    ///
    /// Only shuts the listener down: the accept loop closes it when `accept` fails. Closing it here could
    /// let the descriptor number be reused by another test's socket while the loop still accepts on it,
    /// and this server would then answer that test's requests.
    package func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR {
                    continue
                }
                return
            }
            let thread = Thread { [self] in serve(connection) }
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        guard let request = readRequest(connection) else {
            return
        }
        recorded.withLock { $0.append(request) }
        switch handler(request) {
        case .respond(let status, let headers, let body):
            var head = "HTTP/1.1 \(status) Status\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
            for (name, value) in headers {
                head += "\(name): \(value)\r\n"
            }
            head += "\r\n"
            writeAll(connection, Data(head.utf8) + body)
        case .hang:
            var byte: UInt8 = 0
            while recv(connection, &byte, 1, 0) > 0 {}
        }
    }

    private func readRequest(_ connection: Int32) -> Request? {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 4096)
        let separator = Data("\r\n\r\n".utf8)
        var headEnd: Range<Data.Index>?
        while headEnd == nil {
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else {
                return nil
            }
            buffer.append(contentsOf: chunk[0..<count])
            headEnd = buffer.range(of: separator)
        }
        guard let headEnd else {
            return nil
        }
        let head = String(decoding: buffer[..<headEnd.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        var headers: [String: String] = [:]
        for line in lines {
            if let colon = line.firstIndex(of: ":") {
                let name = line[..<colon].lowercased()
                headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        var body = Data(buffer[headEnd.upperBound...])
        let expected = Int(headers["content-length"] ?? "0") ?? 0
        while body.count < expected {
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else {
                // The client went away before its body was whole (a process killed mid-request): no request, as an
                // HTTP server would have it, rather than a truncated body that fails its signature.
                return nil
            }
            body.append(contentsOf: chunk[0..<count])
        }
        return Request(
            method: requestLine.first.map(String.init) ?? "",
            target: requestLine.count > 1 ? String(requestLine[1]) : "",
            headers: headers,
            body: body
        )
    }

    private func writeAll(_ connection: Int32, _ data: Data) {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = send(connection, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                guard written > 0 else {
                    return
                }
                offset += written
            }
        }
    }
}
