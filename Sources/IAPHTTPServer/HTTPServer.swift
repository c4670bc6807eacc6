import IAPCore

/// An HTTP/1.1 server on GNU libmicrohttpd that answers with Swift handlers: routes with path parameters,
/// asynchronous handlers, a body size cap, connection limits, idle and total timeouts, and a graceful shutdown.
///
/// ```swift
/// var router = HTTPRouter()
/// router.get("/healthz") { _ in .text("ok") }
/// let server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), router: router)
/// print("listening on \(server.origin)")
/// _ = await ShutdownSignals().wait()  // SIGINT or SIGTERM
/// await server.shutdown()
/// ```
///
/// The server listens as soon as it is created and serves until ``shutdown(gracePeriod:)``. Its limits are those of
/// its ``Configuration``; what it answers by itself:
///
/// | when | answer |
/// |---|---|
/// | a malformed request line or head | `400` (libmicrohttpd), then close |
/// | a request line or head larger than the connection's memory | `414` / `431`, then close |
/// | a body larger than ``Configuration/maximumBodySize`` | `413` (for a chunked body, as soon as it passes the cap), then close |
/// | a `Transfer-Encoding` other than exactly `chunked`, or two of them | `501` at once, then close |
/// | `Transfer-Encoding` and `Content-Length` together | `400` at once, then close |
/// | no route for the path / none for the method | `404` / `405` with `Allow` |
/// | a connection beyond ``Configuration/maximumConnections`` | `503` with `Retry-After: 1` at once, then close |
/// | a handler still running at ``Configuration/requestDeadline`` | `503`, then close; the handler is cancelled |
/// | a handler that throws or answers something unsendable | `500` |
/// | a request still arriving at its deadline, or idle for ``Configuration/idleTimeout`` | the connection is closed |
///
/// The answers the module writes carry `{"error": "<neutral message>"}`; libmicrohttpd's own (`400`, `414`, `431`)
/// a short text of its own. What went wrong in detail goes to ``Configuration/events``, never to the client.
public final class HTTPServer: Sendable {
    /// The configuration it runs with.
    public let configuration: Configuration
    /// The address it listens on, as a URL names it: `127.0.0.1`, `[::1]`.
    public let host: String
    /// The port it listens on: the one the system picked when the configuration asked for 0.
    public let port: UInt16

    private let core: ServerCore
    private let daemon: MicroHTTPDDaemon

    /// Starts a server that answers every request with one handler.
    ///
    /// - Parameters:
    ///   - configuration: Where to listen and the limits.
    ///   - handler: What answers each request.
    /// - Throws: ``IAPError`` `.invalidConfiguration` for a configuration out of range or an address that cannot
    ///   be listened on (the system's reason in the message).
    public convenience init(
        configuration: Configuration = Configuration(),
        handler: @escaping HTTPRequestHandler
    ) throws {
        var router = HTTPRouter()
        router.fallback = handler
        try self.init(configuration: configuration, router: router)
    }

    /// Starts a server that answers with a router's routes.
    ///
    /// - Parameters:
    ///   - configuration: Where to listen and the limits.
    ///   - router: The routes.
    /// - Throws: ``IAPError`` `.invalidConfiguration` for a configuration out of range or an address that cannot
    ///   be listened on (the system's reason in the message).
    public init(configuration: Configuration = Configuration(), router: HTTPRouter) throws {
        try configuration.validate()
        let socket = try ListeningSocket(host: configuration.host, port: configuration.port)
        let core = ServerCore(configuration: configuration, router: router)
        do {
            daemon = try MicroHTTPDDaemon(socket: socket, core: core)
        } catch {
            socket.close()
            throw error
        }
        core.startSweeping()
        self.configuration = configuration
        self.core = core
        self.host = socket.urlHost
        self.port = socket.port
    }

    deinit {
        if !core.isStopped {
            _ = core.beginShutdown()
            daemon.quiesce()
            core.forceStop()
            daemon.stop()
            core.stopSweeping()
            core.markStopped()
        }
    }

    /// The server's origin, as a browser would send it in `Origin`: `http://127.0.0.1:8080`.
    public var origin: String {
        "http://\(host):\(port)"
    }

    /// The connections open now, those answered `503` for overflow included.
    public var openConnections: Int {
        core.openConnections
    }

    /// The requests between their request line and the end of their answer.
    public var requestsInFlight: Int {
        core.requestsInFlight
    }

    /// Stops the server gracefully: stops accepting connections (new ones are refused), lets the requests in flight
    /// finish for up to `gracePeriod` (their answers close their connections), then answers `503` to any handler
    /// still running (it is cancelled), closes every connection and stops.
    ///
    /// Closing the embedder's store comes after: when this returns, no handler will be started again. Calling it
    /// again, or while it runs, waits for the same stop.
    ///
    /// - Parameter gracePeriod: How long requests in flight may take; ``Configuration/shutdownGracePeriod`` by
    ///   default.
    public func shutdown(gracePeriod: Duration? = nil) async {
        let clock = ContinuousClock()
        guard core.beginShutdown() else {
            while !core.isStopped {
                try? await clock.sleep(for: .milliseconds(10))
            }
            return
        }
        daemon.quiesce()
        let deadline = clock.now.advanced(by: gracePeriod ?? configuration.shutdownGracePeriod)
        while core.requestsInFlight > 0, clock.now < deadline {
            try? await clock.sleep(for: .milliseconds(10))
        }
        if core.forceStop() > 0 {
            // Give the 503s a moment to leave before the connections are closed.
            let flush = clock.now.advanced(by: .milliseconds(250))
            while core.requestsInFlight > 0, clock.now < flush {
                try? await clock.sleep(for: .milliseconds(10))
            }
        }
        daemon.stop()
        core.stopSweeping()
        core.markStopped()
    }
}
