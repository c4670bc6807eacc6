import Foundation
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTestSupport
import IAPTransportURLSession
import Testing

/// An `iap emulate` child process on an ephemeral loopback port, for tests.
///
/// The `iap` binary is the one built next to the test bundle (`swift build` and `swift test` build it), or the one
/// `IAP_BINARY` names. Call ``stop()`` in a `defer`: a test must never leave a server running.
final class EmulatorProcess: Sendable {
    static let bundleId = "com.example.emulated"
    static let appAppleId: Int64 = 987_654_321
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let keyId = "EMULATOR1"

    let baseURL: URL
    /// The control token: the one given with `--control-token`, or the one the emulator printed.
    let controlToken: String
    let key: P256PrivateKey
    let directory: URL
    /// The environment the emulator signs for: Sandbox, or Production (Look Up Order ID answers there only).
    let environment: AppStoreEnvironment
    /// The app the emulator serves.
    let appBundleId: String
    private let process: ChildProcess
    private let logFile: URL
    let transport = URLSessionTransport()

    /// Starts the emulator and waits for its `listening on` line (and its `control token:` line, unless
    /// `--control-token` is among the arguments).
    ///
    /// - Parameters:
    ///   - extraArguments: More `iap emulate` options, such as `--notify-url`.
    ///   - key: The App Store Connect key; a new one by default.
    ///   - directory: Where the `.p8` and the logs go; a new temporary directory by default.
    ///   - environment: `.sandbox` (the default) or `.production`.
    ///   - bundleId: The app the emulator serves; ``bundleId`` by default.
    init(
        extraArguments: [String] = [],
        key: P256PrivateKey? = nil,
        directory: URL? = nil,
        environment: AppStoreEnvironment = .sandbox,
        bundleId: String = EmulatorProcess.bundleId
    ) async throws {
        let key = try key ?? P256PrivateKey()
        let directory =
            directory ?? FileManager.default.temporaryDirectory.appending(path: "iap-emulate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyFile = directory.appending(path: "AuthKey_\(Self.keyId).p8")
        try Data(key.pemRepresentation.utf8).write(to: keyFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)

        let logFile = directory.appending(path: "stderr-\(UUID().uuidString).log")
        let process = try ChildProcess(
            executable: try Self.binary(),
            arguments: [
                "emulate", "--port", "0", "--bundle-id", bundleId, "--app-apple-id", String(Self.appAppleId),
                "--issuer-id", Self.issuerId, "--key-id", Self.keyId, "--auth-key", keyFile.path, "--environment",
                environment.rawValue,
            ] + extraArguments,
            logFile: logFile
        )

        let given = extraArguments.firstIndex(of: "--control-token").map { extraArguments[$0 + 1] }
        let lines = await Self.lines(given == nil ? 2 : 1, of: process.standardOutput)
        guard let line = lines.first, line.hasPrefix("listening on "),
            let url = URL(string: String(line.dropFirst(13))),
            let token = given
                ?? lines.last.flatMap({ $0.hasPrefix("control token: ") ? String($0.dropFirst(15)) : nil })
        else {
            process.stop(gracePeriod: .seconds(10))
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            throw IAPError(.internalError, "iap emulate did not start: \(lines); \(log)")
        }
        self.baseURL = url
        self.controlToken = token
        self.key = key
        self.directory = directory
        self.environment = environment
        self.appBundleId = bundleId
        self.process = process
        self.logFile = logFile
    }

    /// ``init(extraArguments:key:directory:environment:)``.
    static func start(
        extraArguments: [String] = [],
        key: P256PrivateKey? = nil,
        directory: URL? = nil,
        environment: AppStoreEnvironment = .sandbox,
        bundleId: String = EmulatorProcess.bundleId
    ) async throws -> EmulatorProcess {
        try await EmulatorProcess(
            extraArguments: extraArguments,
            key: key,
            directory: directory,
            environment: environment,
            bundleId: bundleId
        )
    }

    /// Stops the emulator with SIGTERM and waits for it to exit (a test issue, and SIGKILL, after a minute).
    func stop(sourceLocation: SourceLocation = #_sourceLocation) {
        process.stop(sourceLocation: sourceLocation)
    }

    /// What the emulator wrote to standard error so far.
    func standardError() throws -> String {
        try String(contentsOf: logFile, encoding: .utf8)
    }

    /// Whether the process is still running.
    var isRunning: Bool { process.isRunning }

    /// Sends the emulator a signal.
    func signal(_ number: Int32) {
        process.signal(number)
    }

    /// Waits up to `timeout` for the emulator to end, without holding a thread; `true` when it has.
    func exit(within timeout: Duration) async -> Bool {
        await process.exit(within: timeout)
    }

    /// The exit status (or the signal number) once stopped; `nil` while it runs.
    var terminationStatus: Int32? { process.terminationStatus }

    static func binary() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["IAP_BINARY"] {
            return URL(filePath: path)
        }
        var candidates: [URL] = []
        let executable = URL(filePath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appending(path: "iap"))
            directory = directory.deletingLastPathComponent()
        }
        candidates.append(Bundle.main.bundleURL.appending(path: "iap"))
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate
        }
        throw IAPError(
            .invalidConfiguration,
            "no iap binary next to the tests (looked at \(candidates.map(\.path))); build it or set IAP_BINARY"
        )
    }

    /// Reads the first `count` lines on a thread of its own, without holding a thread of the concurrency pool; after
    /// `timeout`, or when the output ends first, the lines read so far.
    static func lines(_ count: Int, of handle: FileHandle, timeout: Duration = .seconds(30)) async -> [String] {
        let bytes = LockedValue<[UInt8]>([])
        let split: @Sendable () -> [String] = {
            bytes.withLock { $0 }.split(separator: 10, omittingEmptySubsequences: false).prefix(count)
                .map { String(decoding: $0, as: UTF8.self) }
        }
        return await offPool(
            timeout: timeout,
            onTimeout: { Array(split().dropLast()) },
            {
                while bytes.withLock({ $0.count(where: { $0 == 10 }) }) < count {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    bytes.withLock { $0.append(contentsOf: chunk) }
                }
                return split()
            }
        )
    }

    // MARK: - Clients

    /// A token provider for this emulator's key, or for another key.
    func tokenProvider(key: P256PrivateKey? = nil, bundleId: String = bundleId) throws -> AppStoreServerAPITokenProvider
    {
        try AppStoreServerAPITokenProvider(
            privateKey: key ?? self.key,
            keyId: Self.keyId,
            issuerId: Self.issuerId,
            bundleId: bundleId
        )
    }

    /// An App Store Server API client pointed at the emulator, over `URLSessionTransport`.
    func client(
        key: P256PrivateKey? = nil,
        bundleId: String = bundleId,
        options: AppStoreServerAPIClient.Options = .init(initialBackoff: .milliseconds(20), jitter: 0)
    ) throws -> AppStoreServerAPIClient {
        try AppStoreServerAPIClient(
            environment: environment,
            baseURL: baseURL,
            transport: URLSessionTransport(),
            tokenProvider: try tokenProvider(key: key, bundleId: bundleId),
            options: options
        )
    }

    /// A verifier that trusts the emulator's root certificate, with strict X.509 checks.
    func verifier() async throws -> AppStoreSignedDataVerifier {
        let response = try await get("/emulator/v1/root-certificate")
        guard response.status == 200 else {
            throw IAPError(.internalError, "GET root-certificate answered \(response.status)")
        }
        return try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [try X509Certificate(derEncoded: Array(response.body))],
                bundleId: appBundleId,
                environment: environment,
                appAppleId: Self.appAppleId,
                strictX509: true
            )
        )
    }

    // MARK: - Control endpoints

    /// The headers of a request to `path`: the control token on control paths.
    private func headers(for path: String) -> [String: String] {
        path.hasPrefix("/emulator/") ? ["X-Emulator-Control-Token": controlToken] : [:]
    }

    /// Sends a control request with a JSON body.
    func post(_ path: String, json: String = "") async throws -> HTTPResponse {
        try await transport.send(
            HTTPRequest(
                method: "POST",
                url: baseURL.appending(path: path),
                headers: headers(for: path).merging(["Content-Type": "application/json"]) { $1 },
                body: Data(json.utf8)
            )
        )
    }

    /// Sends a GET request.
    func get(_ path: String) async throws -> HTTPResponse {
        try await transport.send(
            HTTPRequest(method: "GET", url: baseURL.appending(path: path), headers: headers(for: path))
        )
    }

    /// The options of an `iap` command that talks to this emulator: the App Store Connect key, the app, its
    /// environment, and the emulator's root certificate saved as `root` (leave `root` out to test without it).
    ///
    /// - Parameters:
    ///   - urlOption: The option that names the server: `--api-url`, or its alias `--base-url`.
    ///   - root: The emulator's root certificate on disk (``saveRootCertificate()``), or `nil`.
    func commandOptions(urlOption: String = "--api-url", root: URL?) -> [String] {
        [
            "--issuer-id", Self.issuerId, "--key-id", Self.keyId, "--auth-key",
            directory.appending(path: "AuthKey_\(Self.keyId).p8").path, "--bundle-id", appBundleId,
            "--environment", environment.rawValue, urlOption, baseURL.absoluteString, "--app-apple-id",
            String(Self.appAppleId),
        ] + (root.map { ["--root", $0.path] } ?? [])
    }

    /// Saves the emulator's root certificate next to its key, for the `--root` of a command.
    func saveRootCertificate() async throws -> URL {
        let root = directory.appending(path: "root.der")
        try await get("/emulator/v1/root-certificate").body.write(to: root)
        return root
    }

    /// Saves a swift-iap catalog of the emulator's coins (100 a purchase), premium and pro.monthly next to its key, for
    /// the `--catalog` of `iap ledger ingest`.
    func saveCatalog() throws -> URL {
        let catalog = directory.appending(path: "catalog.json")
        try Data(
            #"""
            {"version": 1, "products": [
                {"productId": "coins.100", "type": "consumable", "entitlements": [], "unitsPerPurchase": 100},
                {"productId": "premium", "type": "nonConsumable", "entitlements": ["premium"]},
                {"productId": "pro.monthly", "type": "autoRenewable", "subscriptionGroupId": "pro",
                 "entitlements": ["pro"], "duration": "P1M"}
            ]}
            """#.utf8
        ).write(to: catalog)
        return catalog
    }

    /// Buys a product for an account with an appAccountToken.
    func purchase(_ productId: String, account: String, token: String) async throws -> Purchase {
        let response = try await post(
            "/emulator/v1/purchases",
            json: #"{"productId":"\#(productId)","account":"\#(account)","appAccountToken":"\#(token)"}"#
        )
        guard response.status == 200 else {
            throw IAPError(
                .internalError,
                "purchase answered \(response.status): \(String(decoding: response.body, as: UTF8.self))"
            )
        }
        return try JSONDecoder().decode(Purchase.self, from: response.body)
    }

    /// The answer of a purchase.
    struct Purchase: Decodable {
        let transactionId: String
        let originalTransactionId: String
        let orderId: String?
        let signedTransaction: String
    }

    /// Buys a product through `POST /emulator/v1/purchases`.
    func purchase(_ productId: String, account: String = "customer") async throws -> Purchase {
        let response = try await post(
            "/emulator/v1/purchases",
            json: #"{"productId":"\#(productId)","account":"\#(account)"}"#
        )
        guard response.status == 200 else {
            throw IAPError(
                .internalError,
                "purchase answered \(response.status): \(String(decoding: response.body, as: UTF8.self))"
            )
        }
        return try JSONDecoder().decode(Purchase.self, from: response.body)
    }

    /// Runs a subscription action and returns the answer's status.
    @discardableResult
    func subscription(_ originalTransactionId: String, _ action: String) async throws -> Int {
        try await post("/emulator/v1/subscriptions/\(originalTransactionId)/\(action)").status
    }
}
