public import IAPHTTPServer

extension PurchaseServer {
    /// The operations console, served on a listener of its own so that it can stay on an internal network while the
    /// app and the App Store reach the purchase server's.
    public struct Console: Sendable {
        /// Who may sign in.
        public var operators: ConsoleOperators
        /// The sessions' cookies (keyed by the console secret, the same on every instance).
        public var sessions: ConsoleSessions
        /// Where the console listens and its limits: `127.0.0.1` by default.
        public var http: HTTPServer.Configuration

        /// Creates the console's settings.
        ///
        /// - Parameters:
        ///   - operators: Who may sign in.
        ///   - sessions: The sessions.
        ///   - host: The address to listen on; `127.0.0.1` by default.
        ///   - port: The port; `0` picks a free one (``PurchaseServer/consoleOrigin`` tells which).
        public init(
            operators: ConsoleOperators,
            sessions: ConsoleSessions,
            host: String = "127.0.0.1",
            port: UInt16 = 0
        ) {
            self.operators = operators
            self.sessions = sessions
            var http = HTTPServer.Configuration(host: host, port: port)
            http.maximumBodySize = 64 * 1_024
            http.maximumConnections = 64
            http.maximumConnectionsPerAddress = 16
            http.idleTimeout = .seconds(30)
            http.requestDeadline = .seconds(30)
            http.shutdownGracePeriod = .seconds(5)
            self.http = http
        }
    }

    /// Where the console listens, such as `http://127.0.0.1:8081`, while the server runs with one.
    public var consoleOrigin: String? {
        runningConsole?.origin
    }
}
