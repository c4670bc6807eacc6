#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPInMemory
import IAPTesting
import IAPTransportURLSession

/// `iap emulate`: a local App Store on loopback, serving the simulated App Store over HTTP/1.1.
enum EmulateCommand {
    static let spec = CommandSpec(
        name: "emulate",
        summary: "serve a local App Store (App Store Server API and control endpoints) on loopback",
        synopsis: [
            "--port N --bundle-id ID --issuer-id ID --key-id ID --auth-key FILE.p8",
            "  [--host 127.0.0.1] [--data DIR] [--catalog FILE] [--plans FILE] [--app-apple-id N]",
            "  [--environment Sandbox|Production] [--grace-period-days N] [--notify-url URL]",
            "  [--control-token TOKEN] [--max-connections N] [--journal-limit BYTES] [--first-transaction-id N]",
        ],
        discussion: """
            Serves the App Store Server API (/inApps/...) of a simulated App Store, with Apple's paths, JSON,
            status codes and error bodies, and control endpoints (/emulator/v1/...) that buy, refund, renew,
            fail billing, move the clock and inject faults. API requests need an ES256 bearer token signed with
            the private key of --auth-key for --key-id, --issuer-id and --bundle-id, as App Store Connect checks.
            The first line on standard output is 'listening on http://HOST:PORT'. Control requests need the header
            'X-Emulator-Control-Token: TOKEN': without --control-token a random token is made and printed as the
            second line, 'control token: TOKEN'. Every request must name a loopback host or the bound address in
            Host and may carry no other Origin than the emulator's own; control POSTs send application/json.
            Without --catalog a built-in catalog sells coins.100, premium, pro.monthly, pro.yearly, season.pass,
            plus.monthly and plus.yearly (with subscription offers) and studio.monthly (a 12-month commitment).
            See Documentation/Emulator.md. Stops on SIGINT or SIGTERM.
            """,
        options: [
            .value("port", "N", "the TCP port; 0 picks a free one (required)"),
            .value("host", "ADDRESS", "the address to listen on (default 127.0.0.1)"),
            .value("bundle-id", "ID", "the app whose API the store serves (required)"),
            .value("issuer-id", "ID", "the issuer id API tokens must carry (required)"),
            .value("key-id", "ID", "the key id API tokens must carry (required)"),
            .value("auth-key", "FILE.p8", "the private key whose public half checks API tokens (required)"),
            .value("data", "DIR", "keep the store in DIR: a restart replays the changes and signs with the same root"),
            .value(
                "catalog",
                "FILE",
                "the products: a swift-iap JSON catalog, an Xcode .storekit file, or a catalog naming one"
            ),
            .value(
                "plans",
                "FILE",
                "subscription offers and commitment plans, JSON {\"offers\": [...], \"commitments\": {...}}"
            ),
            .value("app-apple-id", "N", "the App Apple ID signed into the data (default 1234567890)"),
            .value("environment", "ENV", "Sandbox (default) or Production"),
            .value("grace-period-days", "N", "turn on the billing grace period: 3, 16 or 28 days"),
            .value("notify-url", "URL", "send App Store Server Notifications V2 there, retried on failure"),
            .value(
                "first-transaction-id",
                "N",
                "the first transaction id handed out (default 2000000000000001); give each emulator of a server of "
                    + "several apps its own range, kept with --data"
            ),
            .value("control-token", "TOKEN", "the control token (16 to 256 visible characters); random by default"),
            .value("max-connections", "N", "connections served at once, more are answered 503 (default 256)"),
            .value(
                "journal-limit",
                "BYTES",
                "the largest the --data journal grows; a change beyond it is refused 507 (default 16777216)"
            ),
        ],
        examples: [
            "iap emulate --port 0 --bundle-id com.example.app --issuer-id ISSUER --key-id KEY --auth-key key.p8"
        ]
    )

    /// The products sold when no `--catalog` is given.
    static let builtInCatalog: [CatalogProduct] = [
        CatalogProduct(productId: "coins.100", kind: .consumable, entitlements: ["coins"], unitsPerPurchase: 100),
        CatalogProduct(productId: "premium", kind: .nonConsumable, entitlements: ["premium"], familyShareable: true),
        CatalogProduct(
            productId: "pro.monthly",
            kind: .autoRenewable,
            subscriptionGroupId: "pro",
            groupLevel: 2,
            entitlements: ["pro"],
            duration: SubscriptionPeriod(value: 1, unit: .month)
        ),
        CatalogProduct(
            productId: "pro.yearly",
            kind: .autoRenewable,
            subscriptionGroupId: "pro",
            groupLevel: 1,
            entitlements: ["pro"],
            duration: SubscriptionPeriod(value: 1, unit: .year)
        ),
        CatalogProduct(
            productId: "season.pass",
            kind: .nonRenewing,
            entitlements: ["season"],
            duration: SubscriptionPeriod(value: 3, unit: .month)
        ),
        CatalogProduct(
            productId: "plus.monthly",
            kind: .autoRenewable,
            subscriptionGroupId: "plus",
            groupLevel: 2,
            entitlements: ["plus"],
            duration: SubscriptionPeriod(value: 1, unit: .month),
            familyShareable: true
        ),
        CatalogProduct(
            productId: "plus.yearly",
            kind: .autoRenewable,
            subscriptionGroupId: "plus",
            groupLevel: 1,
            entitlements: ["plus"],
            duration: SubscriptionPeriod(value: 1, unit: .year),
            familyShareable: true
        ),
        CatalogProduct(
            productId: "studio.monthly",
            kind: .autoRenewable,
            subscriptionGroupId: "studio",
            groupLevel: 1,
            entitlements: ["studio"],
            duration: SubscriptionPeriod(value: 1, unit: .month)
        ),
    ]

    struct Settings {
        var host = "127.0.0.1"
        var port: UInt16 = 0
        var dataDirectory: URL?
        var catalogFile: URL?
        var plansFile: URL?
        var bundleId = ""
        var appAppleId: Int64 = 1_234_567_890
        var environment: AppStoreEnvironment = .sandbox
        var gracePeriodDays: Int?
        var issuerId = ""
        var keyId = ""
        var authKeyFile = ""
        var notifyURL: URL?
        var controlToken: String?
        var maximumConnections = 256
        var journalLimit = EmulatorJournal.defaultMaximumBytes
        var firstTransactionId: UInt64?

        init(_ parsed: Arguments) throws(Arguments.UsageError) {
            guard parsed.positionals.isEmpty else {
                throw .init(message: "unexpected argument '\(parsed.positionals[0])'")
            }
            if let host = try parsed.value("host") {
                self.host = host
            }
            guard let portText = try parsed.value("port") else { throw .init(message: "--port is required") }
            guard let port = UInt16(portText) else { throw .init(message: "--port must be 0...65535") }
            self.port = port
            dataDirectory = try parsed.value("data").map { URL(filePath: $0) }
            catalogFile = try parsed.value("catalog").map { URL(filePath: $0) }
            plansFile = try parsed.value("plans").map { URL(filePath: $0) }
            bundleId = try Self.required(parsed, "bundle-id")
            issuerId = try Self.required(parsed, "issuer-id")
            keyId = try Self.required(parsed, "key-id")
            authKeyFile = try Self.required(parsed, "auth-key")
            if let text = try parsed.value("app-apple-id") {
                guard let value = Int64(text), value > 0 else {
                    throw .init(message: "--app-apple-id must be a positive number")
                }
                appAppleId = value
            }
            switch try parsed.value("environment") {
            case nil, "Sandbox": environment = .sandbox
            case "Production": environment = .production
            case let other?: throw .init(message: "--environment must be Sandbox or Production, not '\(other)'")
            }
            if let text = try parsed.value("grace-period-days") {
                guard let days = Int(text), [3, 16, 28].contains(days) else {
                    throw .init(message: "--grace-period-days must be 3, 16 or 28")
                }
                gracePeriodDays = days
            }
            if let text = try parsed.value("notify-url") {
                guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                    scheme == "http" || scheme == "https", url.host?.isEmpty == false
                else {
                    throw .init(message: "--notify-url must be an http or https URL")
                }
                notifyURL = url
            }
            if let token = try parsed.value("control-token") {
                if let problem = EmulatorControlPlane.validate(token: token) {
                    throw .init(message: problem)
                }
                controlToken = token
            }
            if let text = try parsed.value("max-connections") {
                guard let value = Int(text), (1...10_000).contains(value) else {
                    throw .init(message: "--max-connections must be 1...10000")
                }
                maximumConnections = value
            }
            if let text = try parsed.value("first-transaction-id") {
                guard let value = UInt64(text), (1...8_999_999_999_999_999).contains(value) else {
                    throw .init(message: "--first-transaction-id must be a whole number from 1 to 8999999999999999")
                }
                firstTransactionId = value
            }
            if let text = try parsed.value("journal-limit") {
                guard let value = Int(text), value >= 4096 else {
                    throw .init(message: "--journal-limit must be at least 4096 bytes")
                }
                journalLimit = value
            }
        }

        private static func required(_ parsed: Arguments, _ name: String) throws(Arguments.UsageError) -> String {
            guard let value = try parsed.value(name), !value.isEmpty else {
                throw .init(message: "--\(name) is required")
            }
            return value
        }
    }

    /// The HTTP limits of the emulator: one request per connection, a head of 16 KiB, a body of 1 MiB, a client
    /// idle for 5 s dropped, 30 s for a whole request, `503` at once beyond `--max-connections`.
    static func serverConfiguration(_ settings: Settings) -> HTTPServer.Configuration {
        var configuration = HTTPServer.Configuration(host: settings.host, port: settings.port)
        configuration.keepAlive = false
        configuration.connectionMemoryLimit = 16 * 1024
        configuration.maximumBodySize = 1 << 20
        configuration.idleTimeout = .seconds(5)
        configuration.requestDeadline = .seconds(30)
        configuration.maximumConnections = settings.maximumConnections
        configuration.shutdownGracePeriod = .seconds(3)
        configuration.events = StandardErrorEventSink()
        return configuration
    }

    static func run(_ arguments: [String]) async -> Never {
        let parsed = spec.parse(arguments)
        let settings: Settings
        do {
            settings = try Settings(parsed)
        } catch {
            spec.fail(error)
        }
        let signals = ShutdownSignals()
        signal(SIGPIPE, SIG_IGN)
        let emulator: Emulator
        let server: HTTPServer
        do {
            emulator = try await makeEmulator(settings)
            server = try HTTPServer(configuration: serverConfiguration(settings)) { request in
                await emulator.respond(to: request)
            }
        } catch let error as IAPError {
            Output.error("error: \(error.message)")
            terminate(.rejected)
        } catch {
            Output.error("error: \(error)")
            terminate(.rejected)
        }
        let token = settings.controlToken ?? EmulatorControlPlane.generateToken()
        emulator.controlPlane.withLock {
            $0 = EmulatorControlPlane(token: token, origin: server.origin, port: server.port, host: server.host)
        }
        if !EmulatorControlPlane.isLoopback(server.host) {
            Output.error(
                "warning: --host \(settings.host) is not a loopback address: the control plane (/emulator/v1: "
                    + "purchases, refunds, the clock) is reachable from the network by anyone who has the token"
            )
        }
        Output.line("listening on \(server.origin)")
        if settings.controlToken == nil {
            Output.line("control token: \(token)")
        }
        Output.flush()
        let received = await signals.wait()
        Output.error("note: signal \(received): stopping")
        await server.shutdown()
        terminate(.success)
    }

    /// Builds the store, the journal, the authenticator and the dispatcher, and replays the journal.
    private static func makeEmulator(_ settings: Settings) async throws -> Emulator {
        let keyText: String
        do {
            keyText = try String(contentsOfFile: settings.authKeyFile, encoding: .utf8)
        } catch {
            throw IAPError(.invalidConfiguration, "cannot read --auth-key \(settings.authKeyFile): \(error)")
        }
        let authKey = try P256PrivateKey(pemRepresentation: keyText)
        let products: [CatalogProduct]
        if let catalogFile = settings.catalogFile {
            let catalog = try StaticProductCatalog(contentsOf: catalogFile)
            for warning in catalog.warnings {
                Output.error("note: \(catalogFile.path): \(warning)")
            }
            products = catalog.allProducts()
        } else {
            products = builtInCatalog
        }
        let plans =
            try settings.plansFile.map { try EmulatorPlans.load($0, products: products) }
            ?? (settings.catalogFile == nil ? .builtIn : EmulatorPlans())
        let realClock = SystemClock()
        let now = Date(millisecondsSince1970: realClock.now.millisecondsSince1970)
        var journal: EmulatorJournal?
        var pki: TestPKI?
        var start = now
        if let directory = settings.dataDirectory {
            let opened = try EmulatorJournal(
                directory: directory,
                bundleId: settings.bundleId,
                maximumBytes: settings.journalLimit,
                firstTransactionId: settings.firstTransactionId
            ) {
                EmulatorJournal.state(
                    bundleId: settings.bundleId,
                    start: now,
                    pki: try newPKI(around: now),
                    firstTransactionId: settings.firstTransactionId
                )
            }
            pki = try opened.pki()
            start = Date(millisecondsSince1970: opened.state.startMillis)
            journal = opened
        }
        let clock = ManualClock(now: start)
        var configuration = SimulatedAppStore.Configuration(
            bundleId: settings.bundleId,
            appAppleId: settings.appAppleId,
            environment: settings.environment,
            gracePeriodDays: settings.gracePeriodDays,
            familyShareableProductIds: Set(products.filter(\.familyShareable).map(\.productId)),
            subscriptionOffers: plans.offers,
            commitmentPlans: plans.commitments
        )
        if let first = journal?.state.firstTransactionId ?? settings.firstTransactionId {
            configuration.firstTransactionId = first
        }
        let store = try SimulatedAppStore(
            products: products,
            configuration: configuration,
            pki: try pki ?? newPKI(around: now),
            clock: clock
        )
        let emulator = Emulator(
            store: store,
            clock: clock,
            realClock: realClock,
            authenticator: ServerAPITokenChecker(
                publicKey: authKey.publicKey,
                keyId: settings.keyId,
                issuerId: settings.issuerId,
                bundleId: settings.bundleId,
                clock: realClock
            ),
            dispatcher: NotificationDispatcher(url: settings.notifyURL, transport: URLSessionTransport(), clock: clock),
            journal: journal
        )
        try await emulator.replayJournal()
        return emulator
    }

    /// A signing chain valid from a year before `date` to 25 years after it, so that moving the clock is safe.
    private static func newPKI(around date: Date) throws -> TestPKI {
        var options = TestPKI.Options(
            notBefore: date.addingTimeInterval(-365 * 86_400),
            notAfter: date.addingTimeInterval(25 * 365 * 86_400)
        )
        options.commonNamePrefix = "iap emulate"
        return try TestPKI.generate(options)
    }
}
