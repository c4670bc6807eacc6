#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCore

/// A blocking HTTP/1.1 client of one keep-alive connection to a loopback port, for `iap-bench serve`: light enough that
/// the benchmark measures the server, not the client. It sends a request with `Content-Length` and reads one answer
/// with `Content-Length` (what the purchase server sends); anything else is an error, and the connection is opened
/// again for the next request.
final class LoopbackHTTPClient {
    private let port: UInt16
    private var socket: Int32 = -1
    private var buffer: [UInt8] = []

    init(port: UInt16) {
        self.port = port
    }

    deinit {
        disconnect()
    }

    /// Sends one request and returns the answer's status, or `nil` when the exchange failed.
    ///
    /// - Parameter request: The request's bytes (head and body).
    /// - Returns: The status code.
    func exchange(_ request: [UInt8]) -> Int? {
        for attempt in 0..<2 {
            if socket < 0, !connect() {
                return nil
            }
            if send(request), let status = readAnswer() {
                return status
            }
            disconnect()
            if attempt == 1 {
                return nil
            }
        }
        return nil
    }

    private func connect() -> Bool {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return false
        }
        socket = fd
        buffer.removeAll(keepingCapacity: true)
        return true
    }

    private func disconnect() {
        if socket >= 0 {
            close(socket)
            socket = -1
        }
    }

    private func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { return false }
            sent += written
        }
        return true
    }

    /// Reads more bytes into the buffer; `false` at the end of the stream or on an error.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }

    private func readAnswer() -> Int? {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            if let range = buffer.firstRange(of: separator) {
                headEnd = range.upperBound
            } else if !fill() {
                return nil
            }
        }
        guard let headEnd else { return nil }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self).lowercased()
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("http/1.1 "),
            let status = Int(statusLine.dropFirst(9).prefix(3))
        else { return nil }
        var length = 0
        for line in lines.dropFirst() where line.hasPrefix("content-length:") {
            length = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? -1
        }
        guard length >= 0 else { return nil }
        while buffer.count < headEnd + length {
            guard fill() else { return nil }
        }
        buffer.removeFirst(headEnd + length)
        if lines.contains("connection: close") {
            disconnect()
        }
        return status
    }
}
