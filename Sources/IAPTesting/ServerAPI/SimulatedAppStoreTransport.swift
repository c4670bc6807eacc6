import Foundation
public import IAPCore
import IAPCrypto
public import IAPServerAPI

/// A ``Transport`` that answers the App Store Server API from a ``SimulatedAppStore`` in process, without sockets.
///
/// It answers exactly as `iap emulate` does, from the same ``SimulatedAppStoreServerAPI``, and checks every
/// request's bearer token as the emulator does (``ServerAPITokenChecker``: ES256 with the configured key, `kid`,
/// `iss`, `aud`, `bid`, lifetime), so a client misconfigured for the real App Store fails here too, with HTTP 401.
/// The host of the URL is ignored; its path and query are read. It counts the requests it answered, so a test can
/// tell how many calls a piece of code made.
///
/// ```swift
/// let connection = try SimulatedAppStoreTransport.connect(to: appStore)
/// let info = try await connection.client.transactionInfo(transactionId: id)
/// #expect(connection.transport.requestCount == 1)
/// ```
public final class SimulatedAppStoreTransport: Transport {
    /// A client wired to a transport of a store, with the token provider and checker made for it.
    public struct Connection: Sendable {
        /// The client, in the store's environment.
        public let client: AppStoreServerAPIClient
        /// The transport the client sends through.
        public let transport: SimulatedAppStoreTransport
    }

    /// The API that answers.
    public let api: SimulatedAppStoreServerAPI
    /// What checks the bearer tokens.
    public let tokenChecker: ServerAPITokenChecker
    private let log = LockedValue<[HTTPRequest]>([])

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - store: The simulated store.
    ///   - tokenChecker: Checks each request's bearer token; its bundle id should be the store's.
    public init(store: SimulatedAppStore, tokenChecker: ServerAPITokenChecker) {
        self.api = SimulatedAppStoreServerAPI(store: store)
        self.tokenChecker = tokenChecker
    }

    /// Makes a new App Store Connect key, a token provider and a checker for it, and a client of the store's
    /// environment over a new transport.
    ///
    /// - Parameters:
    ///   - store: The simulated store.
    ///   - options: The client's options (retries, sandbox fallback, ...).
    ///   - clock: The monotonic clock the client's backoff sleeps on.
    ///   - wallClock: Real time: the tokens are minted and checked with it.
    /// - Returns: The client and its transport.
    /// - Throws: ``IAPError`` if a key cannot be made, or the store's environment has no server API (Xcode).
    public static func connect(
        to store: SimulatedAppStore,
        options: AppStoreServerAPIClient.Options = .init(),
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: any WallClock = SystemClock()
    ) throws -> Connection {
        let key = try P256PrivateKey()
        let keyId = "SIMULATED1"
        let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
        let bundleId = store.configuration.bundleId
        let tokens = try AppStoreServerAPITokenProvider(
            privateKey: key,
            keyId: keyId,
            issuerId: issuerId,
            bundleId: bundleId,
            clock: wallClock
        )
        let transport = SimulatedAppStoreTransport(
            store: store,
            tokenChecker: ServerAPITokenChecker(
                publicKey: key.publicKey,
                keyId: keyId,
                issuerId: issuerId,
                bundleId: bundleId,
                clock: wallClock
            )
        )
        let client = try AppStoreServerAPIClient(
            environment: store.configuration.environment,
            baseURL: URL(string: "https://simulated-app-store.invalid"),
            transport: transport,
            tokenProvider: tokens,
            options: options,
            clock: clock,
            wallClock: wallClock
        )
        return Connection(client: client, transport: transport)
    }

    /// Every request answered so far (401s included), oldest first.
    public var requests: [HTTPRequest] {
        log.withLock { $0 }
    }

    /// How many requests were answered so far.
    public var requestCount: Int {
        log.withLock { $0.count }
    }

    /// Answers a request from the store.
    ///
    /// - Parameter request: The request.
    /// - Returns: 401 for a missing or bad bearer token, 404 outside `/inApps`, else the API's answer.
    /// - Throws: ``IAPError`` `.cancelled` when the calling task is cancelled.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if Task.isCancelled {
            throw IAPError(.cancelled, "the request was cancelled")
        }
        log.withLock { $0.append(request) }
        let authorization = request.headers.first { $0.key.lowercased() == "authorization" }?.value
        if tokenChecker.rejection(of: authorization) != nil {
            return HTTPResponse(status: 401)
        }
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        let segments = (components?.percentEncodedPath ?? request.url.path).split(separator: "/").map {
            String($0).removingPercentEncoding ?? String($0)
        }
        guard segments.first == "inApps" else {
            return HTTPResponse(status: 404)
        }
        let query = (components?.queryItems ?? []).map { (name: $0.name, value: $0.value ?? "") }
        return await api.respond(
            to: .init(
                method: request.method,
                segments: Array(segments.dropFirst()),
                query: query,
                body: request.body ?? Data()
            )
        )
    }
}
