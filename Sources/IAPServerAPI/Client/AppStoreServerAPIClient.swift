#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// A client of the App Store Server API.
///
/// The client builds each request (path, query, JSON body, `Authorization: Bearer` token, `Accept`,
/// `User-Agent`), sends it through a ``Transport``, and turns the answer into a model or an ``IAPError``. It
/// retries what is safe to retry, with exponential backoff and jitter, honouring `Retry-After`; it asks the
/// token provider for a fresh token once after an HTTP 401; and it can fall back from Production to Sandbox
/// when a transaction is not found. Paged endpoints are `AsyncSequence`s.
///
/// ```swift
/// let tokens = try AppStoreServerAPITokenProvider(
///     pemRepresentation: p8, keyId: "ABCDEFGHIJ", issuerId: issuerId, bundleId: "com.example.app")
/// let client = try AppStoreServerAPIClient(
///     environment: .production, transport: URLSessionTransport(), tokenProvider: tokens)
/// let info = try await client.transactionInfo(transactionId: "2000000123456789")
/// for try await page in client.transactionHistory(anyTransactionId: "2000000123456789") {
///     for signed in page.signedTransactions ?? [] { /* verify and record */ }
/// }
/// ```
///
/// The client is immutable and safe to share between tasks.
public final class AppStoreServerAPIClient: Sendable {
    /// The base URL of the production App Store Server API.
    public static let productionBaseURL = URL(string: "https://api.storekit.apple.com")!
    /// The base URL of the sandbox App Store Server API.
    public static let sandboxBaseURL = URL(string: "https://api.storekit-sandbox.apple.com")!
    /// The placeholder base URL Apple's libraries use for the `LocalTesting` environment.
    public static let localTestingBaseURL = URL(string: "https://local-testing-base-url")!
    /// The version of swift-iap that the `User-Agent` header names.
    public static let libraryVersion = "0.1.0"
    /// The `User-Agent` header of every request.
    public static let userAgent = "swift-iap/\(libraryVersion)"

    /// The environment the client calls first.
    public let environment: AppStoreEnvironment
    /// The base URL of ``environment``: the one passed to the initializer, or Apple's.
    public let baseURL: URL
    /// The options the client was made with.
    public let options: Options

    let transport: any Transport
    let tokenProvider: any BearerTokenProvider
    let timer: RetryTimer
    let wallClock: any WallClock

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - environment: `.production`, `.sandbox` or `.localTesting`. `.xcode` is rejected, as Apple's libraries
    ///     reject it: data from StoreKit Testing in Xcode has no server.
    ///   - baseURL: A base URL to use instead of Apple's for `environment`, such as a proxy or a local emulator.
    ///   - transport: What sends the HTTP requests.
    ///   - tokenProvider: What signs the bearer tokens.
    ///   - options: Retries, timeouts, size cap and the sandbox fallback.
    ///   - clock: The monotonic clock that backoff waits sleep on and the retry budget is measured with.
    ///   - wallClock: The clock that a `Retry-After` instant is compared with.
    /// - Throws: ``IAPError`` with code `invalidConfiguration` for the Xcode or an unknown environment, a base
    ///   URL that is not `http` or `https`, the sandbox fallback outside Production, or out-of-range options.
    public init(
        environment: AppStoreEnvironment,
        baseURL: URL? = nil,
        transport: some Transport,
        tokenProvider: some BearerTokenProvider,
        options: Options = Options(),
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: any WallClock = SystemClock()
    ) throws {
        let defaultURL: URL
        switch environment {
        case .production:
            defaultURL = Self.productionBaseURL
        case .sandbox:
            defaultURL = Self.sandboxBaseURL
        case .localTesting:
            defaultURL = Self.localTestingBaseURL
        case .xcode:
            throw IAPError(
                .invalidConfiguration,
                "Xcode is not a supported environment for an AppStoreServerAPIClient"
            )
        default:
            throw IAPError(.invalidConfiguration, "\(environment) is not an App Store Server API environment")
        }
        let resolved = baseURL ?? defaultURL
        try Self.checkBaseURL(resolved)
        if let fallbackURL = options.sandboxFallbackBaseURL {
            try Self.checkBaseURL(fallbackURL)
        }
        if options.fallsBackToSandbox && environment != .production {
            throw IAPError(.invalidConfiguration, "the sandbox fallback applies only to the Production environment")
        }
        try options.validate()
        self.environment = environment
        self.baseURL = resolved
        self.options = options
        self.transport = transport
        self.tokenProvider = tokenProvider
        self.timer = RetryTimer(clock)
        self.wallClock = wallClock
    }

    private static func checkBaseURL(_ url: URL) throws {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            url.host?.isEmpty == false
        else {
            throw IAPError(.invalidConfiguration, "\(url) is not an http or https base URL")
        }
        guard url.query == nil, url.fragment == nil else {
            throw IAPError(.invalidConfiguration, "the base URL \(url) must not have a query or a fragment")
        }
    }
}
