#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Dispatch
import Foundation
import IAPCore

/// A small HTTP/1.1 server over POSIX sockets, for the emulator: one request per connection.
///
/// A thread accepts connections; each connection gets a thread of its own that reads one request with
/// ``HTTPRequestReader`` (bounded head, body and time), runs the handler, writes the answer with
/// `Connection: close` and closes. Blocking reads never run on the Swift concurrency pool, so a slow client holds
/// one thread of its own and nothing else. At most ``maximumConnections`` are served at once; more are answered
/// 503 at once. Malformed requests are answered 400 (or 408, 413, 431, 501, 505) and closed.
final class HTTPServer: Sendable {
    /// Answers one request.
    typealias Handler = @Sendable (HTTPServerRequest) async -> HTTPServerResponse

    /// The most connections served at the same time.
    static let maximumConnections = 64

    /// The IPv4 address the server listens on.
    let host: String
    /// The port it listens on (the one the system picked when asked for 0).
    let port: UInt16

    private let listener: Int32
    private let limits: HTTPRequestReader.Limits
    private let handler: Handler
    private let state = LockedValue(State())

    private struct State {
        var active = 0
        var stopped = false
    }

    /// Binds and listens.
    ///
    /// - Parameters:
    ///   - host: An IPv4 address such as `127.0.0.1`.
    ///   - port: The port, or 0 for one the system picks.
    ///   - limits: The limits on each request.
    ///   - handler: What answers each request.
    /// - Throws: ``ServerError`` when the address is invalid or the socket cannot be bound.
    init(host: String, port: UInt16, limits: HTTPRequestReader.Limits = .init(), handler: @escaping Handler) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw ServerError(message: "'\(host)' is not an IPv4 address")
        }
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw ServerError(message: "socket() failed: errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(descriptor)
            throw ServerError(message: "cannot bind \(host):\(port): \(String(cString: strerror(code)))")
        }
        guard listen(descriptor, 128) == 0 else {
            let code = errno
            close(descriptor)
            throw ServerError(message: "listen() failed: \(String(cString: strerror(code)))")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.host = host
        self.port = UInt16(bigEndian: actual.sin_port)
        self.listener = descriptor
        self.limits = limits
        self.handler = handler
    }

    /// Why the server cannot start.
    struct ServerError: Error {
        let message: String
    }

    /// Starts accepting connections on a thread of its own.
    func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "iap-emulate-accept"
        thread.start()
    }

    /// Stops accepting connections and waits, at most `timeout`, for the ones being served to finish.
    func stop(timeout: Duration = .seconds(3)) {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        if first {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while state.withLock({ $0.active }) > 0, ContinuousClock.now < deadline {
            usleep(10_000)
        }
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE {
                    if state.withLock({ $0.stopped }) { return }
                    if errno == EMFILE || errno == ENFILE { usleep(50_000) }
                    continue
                }
                return
            }
            var noSignal: Int32 = 1
            #if canImport(Darwin)
                setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &noSignal, socklen_t(MemoryLayout<Int32>.size))
            #endif
            _ = noSignal
            var sendTimeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
            let admitted = state.withLock { state -> Bool in
                guard !state.stopped, state.active < Self.maximumConnections else { return false }
                state.active += 1
                return true
            }
            guard admitted else {
                let busy = HTTPServerResponse(status: 503, body: Data("the emulator is busy\n".utf8))
                Self.send(busy.serialized(closing: true), to: connection)
                close(connection)
                continue
            }
            let thread = Thread { [self] in
                serve(connection)
                state.withLock { $0.active -= 1 }
            }
            thread.name = "iap-emulate-connection"
            thread.start()
        }
    }

    /// Serves one connection: one request, one answer, close.
    private func serve(_ connection: Int32) {
        defer { close(connection) }
        let response: HTTPServerResponse
        switch HTTPRequestReader(descriptor: connection, limits: limits).read() {
        case .closed:
            return
        case .rejected(let status, let reason):
            response = HTTPServerResponse(
                status: status,
                headers: [("Content-Type", "text/plain; charset=utf-8")],
                body: Data("\(reason)\n".utf8)
            )
        case .request(let request):
            response = run(request)
        }
        Self.send(response.serialized(closing: true), to: connection)
        // Half-close, then read what the client still sends for a moment, so that closing does not reset the
        // connection before the client has read the answer.
        shutdown(connection, Int32(SHUT_WR))
        var poller = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        var scratch = [UInt8](repeating: 0, count: 4096)
        var rounds = 0
        while rounds < 16, poll(&poller, 1, 100) > 0 {
            let received = scratch.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if received <= 0 { break }
            rounds += 1
        }
    }

    /// Runs the async handler from this connection's thread and waits for its answer.
    private func run(_ request: HTTPServerRequest) -> HTTPServerResponse {
        let result = ResponseBox()
        let done = DispatchSemaphore(value: 0)
        let handler = self.handler
        Task {
            let response = await handler(request)
            result.value.withLock { $0 = response }
            done.signal()
        }
        done.wait()
        return result.value.withLock { $0 } ?? HTTPServerResponse(status: 500)
    }

    /// Writes all bytes, giving up on an error or when the peer stops reading for the send timeout.
    private static func send(_ bytes: [UInt8], to connection: Int32) {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                #if canImport(Glibc)
                    let written = Glibc.send(connection, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                #else
                    let written = Darwin.send(connection, base + offset, raw.count - offset, 0)
                #endif
                if written <= 0 {
                    if written < 0, errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}

/// Where a handler's answer crosses from its task to the connection's thread.
private final class ResponseBox: Sendable {
    let value = LockedValue<HTTPServerResponse?>(nil)
}
