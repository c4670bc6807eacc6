public import IAPCore

extension HTTPServer {
    /// Where the server listens and the limits it keeps. The defaults suit a server behind a reverse proxy.
    public struct Configuration: Sendable {
        /// The address to listen on: an IPv4 or IPv6 literal (`127.0.0.1`, `::1`, `[::1]`, `0.0.0.0`, `::`) or
        /// `localhost` (`127.0.0.1`). Loopback by default: listening on a network is the embedder's decision.
        public var host: String
        /// The TCP port; `0` lets the system pick a free one, which ``HTTPServer/port`` then tells.
        public var port: UInt16
        /// The largest body accepted, in bytes: a larger `Content-Length` is answered `413` before the body is
        /// read (a body up to 4 MiB past it, or twice it when that is more, is then read and dropped, so that a client
        /// already sending it reads the answer instead of a reset connection); a chunked body is answered `413` as soon as it passes the limit (what follows is read and dropped,
        /// up to as much again, then the connection is closed). Never buffered beyond this.
        public var maximumBodySize: Int
        /// The most connections served at once. Beyond it, up to a quarter more (at least 16) are accepted only to
        /// be answered `503` with `Retry-After: 1` as soon as their request head arrives, and closed after
        /// ``overflowGracePeriod``; past that, new connections wait in the kernel's backlog until one closes.
        public var maximumConnections: Int
        /// The most connections from one IP address, or `nil` for no such limit. A connection beyond it is closed
        /// at once, unanswered, so that one client cannot take ``maximumConnections`` from the others. Behind a
        /// reverse proxy every connection comes from the proxy: leave it `nil` or set it to ``maximumConnections``.
        public var maximumConnectionsPerAddress: Int?
        /// The memory each connection may use for its request head and buffers, in bytes; a request line or head
        /// that does not fit is answered `414` or `431`.
        public var connectionMemoryLimit: Int
        /// How long a connection may stay without sending or receiving anything before it is closed: a client that
        /// stops sending in the middle of a request, or a kept-alive connection left idle. Whole seconds (rounded
        /// up).
        public var idleTimeout: Duration
        /// How long one request may take, from the moment its connection is ready for it (accepted, or the previous
        /// answer sent) to its answer: receiving the head and the body, and the handler. A request still arriving
        /// then is cut off (the connection is closed); a handler still running is cancelled and answered `503`.
        /// Sending the answer then has ``idleTimeout`` more.
        public var requestDeadline: Duration
        /// How long an overflow connection (beyond ``maximumConnections``) is kept before it is closed.
        public var overflowGracePeriod: Duration
        /// Whether a connection may carry several requests (HTTP keep-alive). When `false`, every answer closes
        /// its connection.
        public var keepAlive: Bool
        /// The threads that read and write connections (libmicrohttpd's polling threads, each with its own
        /// `epoll` set on Linux). Handlers never run on them: they run as tasks on Swift's concurrency pool.
        public var ioThreads: Int
        /// How long ``HTTPServer/shutdown(gracePeriod:)`` lets requests in flight finish by default.
        public var shutdownGracePeriod: Duration
        /// Where the server reports what the operator should know: `http.request` for each answer (`outcome` the
        /// status, `durationMs`, `message` the method and route pattern), `http.handler.failed`,
        /// `http.deadline.exceeded`, `http.response.invalid`. Never a request's body or headers.
        public var events: any EventSink
        /// The clock that dates events.
        public var clock: any WallClock

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - host: The address to listen on; loopback by default.
        ///   - port: The port; `0` picks a free one.
        public init(host: String = "127.0.0.1", port: UInt16 = 0) {
            self.host = host
            self.port = port
            maximumBodySize = 1 << 20
            maximumConnections = 256
            maximumConnectionsPerAddress = nil
            connectionMemoryLimit = 32 * 1024
            idleTimeout = .seconds(10)
            requestDeadline = .seconds(30)
            overflowGracePeriod = .seconds(2)
            keepAlive = true
            ioThreads = 1
            shutdownGracePeriod = .seconds(10)
            events = DiscardingEventSink()
            clock = SystemClock()
        }

        /// The connections libmicrohttpd accepts in all: the served ones and the overflow answered `503`.
        var acceptedConnections: Int {
            maximumConnections + max(16, maximumConnections / 4)
        }

        /// The idle timeout in whole seconds, at least one.
        var idleTimeoutSeconds: Int {
            let (seconds, attoseconds) = idleTimeout.components
            return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
        }

        /// Checks the values without binding anything: what ``HTTPServer/init(configuration:router:)`` checks before it
        /// listens, for a program that wants to know before it opens anything else.
        ///
        /// - Throws: ``IAPError`` `invalidConfiguration` naming the first value out of range, or a `host` that is not an
        ///   IPv4 or IPv6 address (nor `localhost`); an address that cannot be bound is found only when listening.
        public func validate() throws(IAPError) {
            func invalid(_ message: String) -> IAPError { IAPError(.invalidConfiguration, message) }
            guard ListeningSocket.isAddress(host) else { throw invalid("'\(host)' is not an IPv4 or IPv6 address") }
            guard maximumBodySize >= 0 else { throw invalid("maximumBodySize must not be negative") }
            guard (1...100_000).contains(maximumConnections) else {
                throw invalid("maximumConnections must be 1...100000")
            }
            if let perAddress = maximumConnectionsPerAddress, perAddress < 1 {
                throw invalid("maximumConnectionsPerAddress must be at least 1, or nil")
            }
            guard (4096...(16 << 20)).contains(connectionMemoryLimit) else {
                throw invalid("connectionMemoryLimit must be 4 KiB...16 MiB")
            }
            guard idleTimeout > .zero, idleTimeout <= .seconds(86_400) else {
                throw invalid("idleTimeout must be more than zero and at most a day")
            }
            guard requestDeadline > .zero else { throw invalid("requestDeadline must be more than zero") }
            guard overflowGracePeriod > .zero else { throw invalid("overflowGracePeriod must be more than zero") }
            guard (1...64).contains(ioThreads) else { throw invalid("ioThreads must be 1...64") }
            guard shutdownGracePeriod >= .zero else { throw invalid("shutdownGracePeriod must not be negative") }
        }
    }
}
