import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTransportURLSession

/// What the common options of `iap api` make: a client over `URLSession` that records the answers, and a
/// verifier when `--decode` asks for one.
struct APISession {
    /// The options every command that calls the App Store Server API takes, as its usage lists them.
    static let options: [CommandSpec.Option] = [
        .value("issuer-id", "ID", "the issuer id of the App Store Connect API key (required)"),
        .value("key-id", "ID", "the key id of the API key (required)"),
        .value(
            "auth-key",
            "FILE.p8",
            "the API key's private key, as downloaded from App Store Connect, mode 0600 (required)"
        ),
        .value("bundle-id", "ID", "the app's bundle id (required)"),
        .value("environment", "ENV", "Production, Sandbox or LocalTesting (required; LocalTesting needs --api-url)"),
        urlOption,
        .value("root", "FILE.der", "verify against this root instead of Apple Root CA - G3", repeatable: true),
        .value("app-apple-id", "N", "the App Apple ID signed data must carry"),
    ]
    /// The option that replaces Apple's base URL of the App Store Server API, by the same name in every command
    /// (`--base-url`, its old name in `iap api` and `iap support`, is an alias).
    static let urlOption = CommandSpec.Option.value(
        "api-url",
        "URL",
        "the App Store Server API at another address than Apple's, such as 'iap emulate' (http or https, no "
            + "user:password@)",
        aliases: ["base-url"]
    )
    /// The switch of `iap api` that verifies and decodes the signed fields of an answer.
    static let decodeOption = CommandSpec.Option.flag(
        "decode",
        "verify each signed field and add its payload as <field>Decoded (--root, --app-apple-id apply)"
    )

    /// The `--environment` option of a command that takes a list: the verifier accepts every environment listed, and
    /// the App Store Server API is asked in Production when it is listed (Look Up Order ID answers there only).
    static let environmentListOption = CommandSpec.Option.value(
        "environment",
        "LIST",
        "Production, Sandbox or LocalTesting, or a comma-separated list such as Production,Sandbox (required): "
            + "signed data of each is accepted; the API is asked in Production when it is listed"
    )

    /// The client asked first: Production when it is listed (Look Up Order ID answers there only).
    let client: AppStoreServerAPIClient
    /// One client per listed environment, each asking that environment's API (or `--api-url`).
    let clients: AppStoreServerAPIClients
    let recorder: RecordingTransport
    let verifier: AppStoreSignedDataVerifier?

    /// Builds the session from the parsed options.
    ///
    /// - Parameters:
    ///   - arguments: The parsed options.
    ///   - verifying: Whether to make the verifier without `--decode` (commands that always verify).
    ///   - environmentList: Whether `--environment` may list several environments (``environmentListOption``).
    ///   - baseURLOption: The name of the option that replaces Apple's base URL (``urlOption``, `api-url`, whose
    ///     alias is `base-url`).
    ///   - defaultEnvironment: The environment list when `--environment` is not given; `nil` makes it required.
    init(
        _ arguments: Arguments,
        verifying: Bool = false,
        environmentList: Bool = false,
        baseURLOption: String = urlOption.name,
        defaultEnvironment: String? = nil
    ) throws(Arguments.UsageError) {
        let issuerId = try Self.required("issuer-id", arguments)
        let keyId = try Self.required("key-id", arguments)
        let keyPath = try Self.required("auth-key", arguments)
        let bundleId = try Self.required("bundle-id", arguments)
        let environmentText: String
        if let defaultEnvironment, try arguments.value("environment") == nil {
            environmentText = defaultEnvironment
        } else {
            environmentText = try Self.required("environment", arguments)
        }
        let environments = try EnvironmentList.parse(environmentText, allowed: [.production, .sandbox, .localTesting])
        let environment: AppStoreEnvironment
        if environments.contains(.production) {
            environment = .production
        } else if environments.count == 1, let only = environments.first {
            environment = only
        } else {
            throw Arguments.UsageError(
                message: "--environment lists \(environments.map(\.rawValue).joined(separator: ",")): with several "
                    + "environments, one of them must be Production, where the App Store Server API is asked"
            )
        }
        if environments.count > 1, !environmentList {
            throw Arguments.UsageError(message: "--environment takes one environment for this command")
        }
        let baseURL = try Self.baseURL(
            arguments,
            option: baseURLOption,
            localTesting: environments.contains(.localTesting)
        )

        let tokens = try Self.tokens(arguments, issuerId: issuerId, keyId: keyId, keyPath: keyPath, bundleId: bundleId)
        let recorder = RecordingTransport(URLSessionTransport())
        self.recorder = recorder
        do {
            let all = try environments.map {
                try AppStoreServerAPIClient(
                    environment: $0,
                    baseURL: baseURL,
                    transport: recorder,
                    tokenProvider: tokens
                )
            }
            clients = try AppStoreServerAPIClients(all)
            client = try clients.client(for: environment)
        } catch {
            throw Arguments.UsageError(message: Self.describe(error))
        }

        guard verifying || arguments.has("decode") else {
            for name in ["root", "app-apple-id"] where arguments.options[name] != nil {
                throw Arguments.UsageError(message: "--\(name) applies only with --decode")
            }
            verifier = nil
            return
        }
        verifier = try Self.verifier(arguments, bundleId: bundleId, environments: environments)
    }

    /// `--api-url` (or the command's option of that name), checked: `nil` for Apple's.
    static func baseURL(
        _ arguments: Arguments,
        option baseURLOption: String,
        localTesting: Bool
    ) throws(Arguments.UsageError) -> URL? {
        let option = arguments.spelling(baseURLOption)
        guard let text = try arguments.value(baseURLOption) else {
            if localTesting {
                throw Arguments.UsageError(message: "--environment LocalTesting needs \(option)")
            }
            return nil
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", url.host?.isEmpty == false
        else {
            throw Arguments.UsageError(
                message: "\(option) must be an http or https URL, not '\(Arguments.shown(url: text))'"
            )
        }
        guard url.user == nil, url.password == nil else {
            // Not echoed: it holds a password, which a command line shows to every user of the machine.
            throw Arguments.UsageError(
                message: "\(option) must not hold a user or password (user:password@): the command line is "
                    + "visible to every user of the machine; the App Store Server API is authenticated by the "
                    + "token signed with --auth-key"
            )
        }
        return url
    }

    /// The token provider of the API key (`--auth-key`) for one app: the bundle id goes in each token.
    static func tokens(
        _ arguments: Arguments,
        issuerId: String,
        keyId: String,
        keyPath: String,
        bundleId: String
    ) throws(Arguments.UsageError) -> AppStoreServerAPITokenProvider {
        guard let pem = String(validating: try SecretOption.contents(keyPath, option: "--auth-key"), as: UTF8.self)
        else {
            throw Arguments.UsageError(message: "--auth-key \(keyPath) is not UTF-8 text")
        }
        do {
            return try AppStoreServerAPITokenProvider(
                pemRepresentation: pem,
                keyId: keyId,
                issuerId: issuerId,
                bundleId: bundleId
            )
        } catch {
            throw Arguments.UsageError(message: "--auth-key \(keyPath): \(Self.describe(error))")
        }
    }

    /// The clients of several apps with one API key (`--issuer-id`, `--key-id`, `--auth-key`, `--api-url`): each
    /// app's tokens name its bundle id, one client per environment it lists, at its `api-url` when it names one.
    ///
    /// - Parameter apps: Each app's bundle id and environments.
    /// - Returns: The clients, by app.
    static func clients(
        _ arguments: Arguments,
        apps: [(bundleId: String, environments: [AppStoreEnvironment], apiURL: String?)]
    ) throws(Arguments.UsageError) -> AppStoreServerAPIClients {
        let issuerId = try required("issuer-id", arguments)
        let keyId = try required("key-id", arguments)
        let keyPath = try required("auth-key", arguments)
        let shared = try baseURL(
            arguments,
            option: urlOption.name,
            localTesting: apps.contains { $0.apiURL == nil && $0.environments.contains(.localTesting) }
        )
        let transport = URLSessionTransport()
        var byApp: [String: [AppStoreServerAPIClient]] = [:]
        for app in apps {
            var baseURL = shared
            if let text = app.apiURL {
                guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                    scheme == "http" || scheme == "https", url.host?.isEmpty == false, url.user == nil,
                    url.password == nil
                else {
                    throw Arguments.UsageError(
                        message: "--app \(app.bundleId): api-url must be an http or https URL without user:password@"
                    )
                }
                baseURL = url
            }
            let tokens = try tokens(
                arguments,
                issuerId: issuerId,
                keyId: keyId,
                keyPath: keyPath,
                bundleId: app.bundleId
            )
            do {
                byApp[app.bundleId] = try app.environments.map {
                    try AppStoreServerAPIClient(
                        environment: $0,
                        baseURL: baseURL,
                        transport: transport,
                        tokenProvider: tokens
                    )
                }
            } catch {
                throw Arguments.UsageError(message: "--app \(app.bundleId): \(describe(error))")
            }
        }
        do {
            return try AppStoreServerAPIClients(apps: byApp)
        } catch {
            throw Arguments.UsageError(message: describe(error))
        }
    }

    /// The verifier of signed data for an app in some environments, with `--root` and `--app-apple-id`.
    ///
    /// - Parameters:
    ///   - arguments: The parsed options.
    ///   - bundleId: The app's bundle id.
    ///   - environments: The environments whose data is accepted.
    /// - Returns: The verifier.
    /// - Throws: A usage error for an unreadable root, a bad App Apple ID, or Production without an App Apple ID.
    static func verifier(
        _ arguments: Arguments,
        bundleId: String,
        environments: [AppStoreEnvironment]
    ) throws(Arguments.UsageError) -> AppStoreSignedDataVerifier {
        var configuration = AppStoreSignedDataVerifier.Configuration(
            bundleId: bundleId,
            environments: Set(environments)
        )
        configuration.acceptsXcodeSignedData = environments.contains(.localTesting)
        var roots: [X509Certificate] = []
        for path in arguments.values("root") {
            roots.append(try VerifyCommand.Settings.loadCertificate(path))
        }
        configuration.rootCertificates = roots
        if let text = try arguments.value("app-apple-id") {
            guard let value = Int64(text), value > 0 else {
                throw Arguments.UsageError(message: "--app-apple-id must be a positive integer, not '\(text)'")
            }
            configuration.appAppleId = value
        }
        if configuration.environments.contains(.production), configuration.appAppleId == nil {
            throw Arguments.UsageError(
                message: "--app-apple-id is required to verify Production data (App Store Connect, App Information)"
            )
        }
        do {
            return try AppStoreSignedDataVerifier(configuration: configuration)
        } catch {
            throw Arguments.UsageError(message: Self.describe(error))
        }
    }

    private static func required(_ name: String, _ arguments: Arguments) throws(Arguments.UsageError) -> String {
        guard let value = try arguments.value(name), !value.isEmpty else {
            throw Arguments.UsageError(message: "--\(name) is required")
        }
        return value
    }

    private static func describe(_ error: any Error) -> String {
        (error as? IAPError)?.message ?? "\(error)"
    }
}
