#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCore
import IAPTestSupport

/// A raw TCP connection for requests no HTTP client would send: malformed heads, slow clients, pipelined bytes.
///
/// Its reads wait on a thread of their own, never on Swift's concurrency pool, where the server's handlers run.
/// `@unchecked Sendable`: a test uses one connection from one task at a time.
final class RawHTTPConnection: @unchecked Sendable {
    /// An answer as read off the wire.
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: Data
    }

    private var descriptor: Int32

    /// Connects to a loopback port over IPv4, or IPv6 with `ipv6`.
    init(port: UInt16, ipv6: Bool = false) throws {
        #if canImport(Glibc)
            descriptor = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            descriptor = socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0)
        #endif
        let connected: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            inet_pton(AF_INET6, "::1", &address.sin6_addr)
            connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close()
            throw IAPError(.transportFailure, "cannot connect to port \(port): \(reason)")
        }
    }

    deinit {
        close()
    }

    func close() {
        if descriptor >= 0 {
            #if canImport(Glibc)
                _ = Glibc.close(descriptor)
            #else
                _ = Darwin.close(descriptor)
            #endif
            descriptor = -1
        }
    }

    /// Sends text; `false` when the server has closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool {
        send(Array(text.utf8))
    }

    /// Sends bytes; `false` when the server has closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { raw in
                #if canImport(Glibc)
                    Glibc.send(descriptor, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
                #else
                    Darwin.send(descriptor, raw.baseAddress, raw.count, 0)
                #endif
            }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    /// Reads what arrives until the server closes the connection or `timeout` passes (long by default: the tests run
    /// beside others that can keep the concurrency pool busy for a while).
    ///
    /// - Returns: The bytes, and whether the server closed the connection.
    func readUntilClosed(timeout: Duration = .seconds(60)) async -> (bytes: [UInt8], closed: Bool) {
        await offPool { self.blockingReadUntilClosed(timeout: timeout) }
    }

    private func blockingReadUntilClosed(timeout: Duration) -> (bytes: [UInt8], closed: Bool) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while ContinuousClock.now < deadline {
            let left = deadline - ContinuousClock.now
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(max(1, min(1000, (left / .milliseconds(1)).rounded(.up))))
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (bytes, true) }
            bytes.append(contentsOf: buffer[..<count])
        }
        return (bytes, false)
    }

    /// Reads one answer: the head, then `Content-Length` bytes of body; `nil` when the connection closes first or
    /// `timeout` passes.
    func readAnswer(timeout: Duration = .seconds(60), head: Bool = false) async -> Answer? {
        await offPool { self.blockingReadAnswer(timeout: timeout, head: head) }
    }

    private func blockingReadAnswer(timeout: Duration, head: Bool) -> Answer? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while ContinuousClock.now < deadline {
            if let answer = Self.parse(bytes, head: head) { return answer }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return Self.parse(bytes, head: head) }
            bytes.append(contentsOf: buffer[..<count])
        }
        return nil
    }

    /// Sends a request and reads its answer.
    static func exchange(port: UInt16, _ text: String, ipv6: Bool = false, head: Bool = false) async throws -> Answer? {
        let connection = try RawHTTPConnection(port: port, ipv6: ipv6)
        connection.send(text)
        return await connection.readAnswer(head: head)
    }

    /// Parses an answer; the answer to `HEAD` has no body whatever its `Content-Length`.
    static func parse(_ bytes: [UInt8], head toHead: Bool = false) -> Answer? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = head.first, statusLine.hasPrefix("HTTP/1."),
            let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                .trimmingCharacters(in: .whitespaces)
        }
        let length = toHead ? 0 : (Int(headers["content-length"] ?? "0") ?? 0)
        let body = bytes[(end + 4)...]
        guard body.count >= length else { return nil }
        return Answer(status: status, headers: headers, body: Data(body.prefix(length)))
    }
}
