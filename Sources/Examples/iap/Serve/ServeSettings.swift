import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPPurchaseServer
import IAPServerAPI
import IAPStorageFile

/// What `iap serve`'s options (and `--config`) say, checked before anything is opened: every usage error, a missing or
/// short secret included, exits 2 before the server starts.
struct ServeSettings {
    var host = "127.0.0.1"
    var port: UInt16 = 0
    var bundleId: String
    var environments: [AppStoreEnvironment]
    var verifier: AppStoreSignedDataVerifier
    var grant: GrantOptions.Path
    var users: HS256UserAuthenticator
    var service: ServiceTokenAuthenticator
    /// The App Store Server API's clients, when its options are given: per app on a server of several.
    var api: AppStoreServerAPIClients?
    var reconcileEvery: Duration?
    var events: any EventSink
    /// `--max-connections-per-address`: the most connections from one IP address.
    var connectionsPerAddress = PurchaseServer.defaultConnectionsPerAddress
    /// `--token-ownership derived`: an unclaimed appAccountToken goes only to the user it was derived from.
    var tokenOwnership: TokenOwnershipCheck?
    /// `--prorated-refunds`: what a prorated refund of a non-consumable or a subscription does (access kept by
    /// default).
    var proratedRefunds = ProratedRefundPolicy.keepAccess
    /// `--on-rescind-consent`: what a `RESCIND_CONSENT` does (notify by default).
    var rescindConsent = RescindConsentPolicy.notify
    /// `--console-port N` and its options: the operations console, on a listener of its own.
    var console: PurchaseServer.Console?
    /// `--app ...` (repeatable) or the configuration's `apps`: the apps of a server of several, each with its
    /// verifier; empty for a server of one app (`--bundle-id`).
    var apps: [(app: ServeApp, verifier: AppStoreSignedDataVerifier)] = []

    /// The console's options; all but `--console-port` need it.
    static let consoleOptions = [
        "console-host", "console-operators-file", "console-secret-file", "console-insecure-cookies",
    ]

    /// The options of the App Store Server API; any of them asks for the API.
    static let apiOptions = ["api-url", "issuer-id", "key-id", "auth-key", "reconcile-every"]

    init(_ parsed: Arguments) throws(Arguments.UsageError) {
        try parsed.noPositionals()
        guard let portText = try parsed.value("port") else {
            throw .init(message: "--port N is required (0 picks a free port)")
        }
        guard let port = UInt16(portText) else { throw .init(message: "--port must be 0...65535, not '\(portText)'") }
        self.port = port
        if let host = try parsed.value("host") {
            self.host = host
        }
        if let text = try parsed.value("max-connections-per-address") {
            guard let limit = Int(text), (1...PurchaseServer.maximumConnections).contains(limit) else {
                throw .init(
                    message:
                        "--max-connections-per-address must be 1...\(PurchaseServer.maximumConnections), not '\(text)'"
                )
            }
            connectionsPerAddress = limit
        }
        do {
            _ = try CommandLedger.location(parsed)
        } catch let error as Arguments.UsageError {
            throw error
        } catch {
            throw .init(message: "\(error)")
        }
        let apps = try Self.apps(parsed)
        let environmentText: String
        if let first = apps.first {
            self.apps = apps
            bundleId = first.app.bundleId
            environments = AppStoreEnvironment.allKnown.filter { environment in
                apps.contains { $0.app.environments.contains(environment) }
            }
            environmentText = environments.map(\.rawValue).joined(separator: ",")
        } else {
            guard let bundleId = try parsed.value("bundle-id"), !bundleId.isEmpty else {
                throw .init(message: "--bundle-id is required (or --app for each app of a server of several)")
            }
            self.bundleId = bundleId
            guard let text = try parsed.value("environment") else {
                throw .init(
                    message: "--environment is required: Production, Sandbox, or a list such as Production,Sandbox"
                )
            }
            environmentText = text
            environments = try EnvironmentList.parse(text, allowed: [.production, .sandbox, .localTesting])
        }
        grant = try GrantOptions.parse(parsed, secretVariable: ServeCommand.grantSecretVariable)

        let userSecret = try Self.secret(
            parsed,
            option: "user-jwt-secret-file",
            variable: ServeCommand.userSecretVariable,
            what: "the secret that signs the app's user tokens (HS256)"
        )
        let lifetime =
            try parsed.value("user-jwt-max-lifetime").map { text throws(Arguments.UsageError) in
                try ServeDuration.parse(text, option: "--user-jwt-max-lifetime", range: 1...(366 * 86_400))
            } ?? HS256UserAuthenticator.defaultMaximumLifetime
        do {
            users = HS256UserAuthenticator(secret: try HMACSHA256(key: userSecret), maximumLifetime: lifetime)
        } catch {
            throw .init(message: "the user token secret: \((error as? IAPError)?.message ?? "\(error)")")
        }
        let token = try Self.secret(
            parsed,
            option: "service-token-file",
            variable: ServeCommand.serviceTokenVariable,
            what: "the bearer token of the user and support endpoints"
        )
        do {
            service = try ServiceTokenAuthenticator(token: token)
        } catch {
            throw .init(message: "the service token: \(error.message)")
        }

        let wantsAPI = Self.apiOptions.contains(where: { parsed.options[$0] != nil })
        if wantsAPI {
            for name in ["issuer-id", "key-id", "auth-key"] where try parsed.value(name) == nil {
                throw .init(
                    message: "the App Store Server API needs --issuer-id, --key-id and --auth-key together (--\(name) "
                        + "is missing)"
                )
            }
        }
        if wantsAPI, let first = apps.first {
            verifier = first.verifier
            api = try APISession.clients(
                parsed,
                apps: apps.map { ($0.app.bundleId, $0.app.environments, $0.app.apiURL) }
            )
            reconcileEvery =
                try parsed.value("reconcile-every").map { text throws(Arguments.UsageError) in
                    try ServeCommand.duration(text)
                } ?? .seconds(3_600)
        } else if wantsAPI {
            let session = try APISession(
                parsed,
                verifying: true,
                environmentList: true,
                baseURLOption: "api-url"
            )
            guard let verifier = session.verifier else {
                throw .init(message: "no verifier could be made for --environment \(environmentText)")
            }
            self.verifier = verifier
            self.api = session.clients
            reconcileEvery =
                try parsed.value("reconcile-every").map { text throws(Arguments.UsageError) in
                    try ServeCommand.duration(text)
                } ?? .seconds(3_600)
        } else if let first = apps.first {
            verifier = first.verifier
            api = nil
            reconcileEvery = nil
        } else {
            verifier = try APISession.verifier(parsed, bundleId: bundleId, environments: environments)
            api = nil
            reconcileEvery = nil
        }
        events = try Self.events(parsed)
        console = try Self.console(parsed)
        tokenOwnership = try Self.tokenOwnership(parsed)
        switch try parsed.value("prorated-refunds") {
        case nil, "keep-access": proratedRefunds = .keepAccess
        case "revoke-access": proratedRefunds = .revokeAccess
        case let other?:
            throw Arguments.UsageError(
                message: "--prorated-refunds takes keep-access or revoke-access, not '\(other)'"
            )
        }
        if let text = try parsed.value("on-rescind-consent") {
            guard let policy = RescindConsentPolicy(rawValue: text) else {
                throw Arguments.UsageError(message: "--on-rescind-consent takes notify or revoke, not '\(text)'")
            }
            rescindConsent = policy
        }
    }

    /// The options of one app, given in each `--app` instead on a server of several.
    static let oneAppOptions = ["bundle-id", "environment", "app-apple-id", "root", "catalog"]

    /// `--app ...` (repeatable): the apps of a server of several, each with its verifier; empty without `--app`.
    private static func apps(
        _ parsed: Arguments
    ) throws(Arguments.UsageError) -> [(app: ServeApp, verifier: AppStoreSignedDataVerifier)] {
        let texts = parsed.values("app")
        guard !texts.isEmpty else { return [] }
        if let name = oneAppOptions.first(where: { parsed.options[$0] != nil }) {
            throw .init(
                message: "--\(name) is a setting of one app: with --app (or the configuration's apps), give it in "
                    + "each app (\(ServeApp.keysSynopsis))"
            )
        }
        guard texts.count <= ServeApp.maximumApps else {
            throw .init(message: "--app is given \(texts.count) times; a server takes at most \(ServeApp.maximumApps)")
        }
        var apps: [(app: ServeApp, verifier: AppStoreSignedDataVerifier)] = []
        let wantsAPI = apiOptions.contains { parsed.options[$0] != nil }
        for text in texts {
            let app = try ServeApp.parse(text)
            if app.apiURL != nil, !wantsAPI {
                throw .init(
                    message: "--app \(app.bundleId): api-url goes with the App Store Server API options (--issuer-id, "
                        + "--key-id, --auth-key)"
                )
            }
            guard !apps.contains(where: { $0.app.bundleId == app.bundleId }) else {
                throw .init(message: "--app \(app.bundleId) is given twice")
            }
            apps.append((app, try app.verifier()))
        }
        return apps
    }

    /// `--token-ownership derived --token-secret-file FILE`: the check of ``AppAccountToken/derive(from:namespace:)``
    /// in the namespace the file holds; `first-claim` (the default) lets the first user who presents an unclaimed
    /// token have it.
    private static func tokenOwnership(_ parsed: Arguments) throws(Arguments.UsageError) -> TokenOwnershipCheck? {
        let mode = try parsed.value("token-ownership") ?? "first-claim"
        let path = try parsed.value("token-secret-file")
        switch mode {
        case "first-claim":
            if path != nil {
                throw .init(message: "--token-secret-file goes with --token-ownership derived")
            }
            return nil
        case "derived":
            guard let path else {
                throw .init(
                    message: "--token-ownership derived needs --token-secret-file FILE: the namespace UUID the apps "
                        + "derive their appAccountTokens in"
                )
            }
            let bytes = try SecretOption.read(path, option: "--token-secret-file")
            guard let namespace = UUID(uuidString: String(decoding: bytes, as: UTF8.self)) else {
                throw .init(
                    message: "--token-secret-file \(path) must hold one UUID: the namespace the apps derive their "
                        + "appAccountTokens in"
                )
            }
            return .derived(namespace: namespace)
        default:
            throw .init(message: "--token-ownership is first-claim or derived, not '\(mode)'")
        }
    }

    /// A secret from its file option or its environment variable, exactly one of them.
    private static func secret(
        _ parsed: Arguments,
        option: String,
        variable: String,
        what: String
    ) throws(Arguments.UsageError) -> [UInt8] {
        let path = try parsed.value(option)
        let environment = try SecretOption.environment(variable)
        switch (path, environment) {
        case (let path?, nil):
            return try SecretOption.read(path, option: "--\(option)")
        case (nil, let secret?):
            return secret
        case (_?, _?):
            throw .init(message: "give --\(option) or set \(variable), not both")
        case (nil, nil):
            throw .init(message: "--\(option) FILE is required: \(what) (or set \(variable))")
        }
    }

    /// `--console-port N [--console-host H] --console-operators-file FILE --console-secret-file FILE
    /// [--console-insecure-cookies]`: the console, or `nil` without `--console-port`.
    private static func console(_ parsed: Arguments) throws(Arguments.UsageError) -> PurchaseServer.Console? {
        guard let portText = try parsed.value("console-port") else {
            if let given = consoleOptions.first(where: { parsed.options[$0] != nil }) {
                throw .init(message: "--\(given) goes with --console-port")
            }
            return nil
        }
        guard let port = UInt16(portText) else {
            throw .init(message: "--console-port must be 0...65535, not '\(portText)'")
        }
        guard let operatorsPath = try parsed.value("console-operators-file") else {
            throw .init(
                message:
                    "--console-operators-file FILE is required with --console-port (iap console add-operator writes it)"
            )
        }
        let operators: ConsoleOperators
        do {
            operators = try ConsoleOperators(
                contentsOf: URL(fileURLWithPath: operatorsPath),
                derivation: PBKDF2HMACSHA256()
            )
        } catch {
            throw .init(message: "--console-operators-file: \(error.message)")
        }
        guard let secretPath = try parsed.value("console-secret-file") else {
            throw .init(
                message: "--console-secret-file FILE is required with --console-port: the key of the console's "
                    + "session cookies, the same on every instance (openssl rand -hex 32 > FILE)"
            )
        }
        let secret = try SecretOption.read(secretPath, option: "--console-secret-file")
        let authenticator: HMACSHA256
        do {
            authenticator = try HMACSHA256(key: secret)
        } catch {
            throw .init(message: "--console-secret-file: \((error as? IAPError)?.message ?? "\(error)")")
        }
        return PurchaseServer.Console(
            operators: operators,
            sessions: ConsoleSessions(
                authenticator: authenticator,
                secureCookies: !parsed.has("console-insecure-cookies")
            ),
            host: try parsed.value("console-host") ?? "127.0.0.1",
            port: port
        )
    }

    /// The event sink: `--events FILE`, else standard error.
    private static func events(_ parsed: Arguments) throws(Arguments.UsageError) -> any EventSink {
        guard try parsed.value("events") != nil else {
            return JSONLinesEventSink.standardError()
        }
        return try CommandEvents.sink(parsed)
    }
}
