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
import IAPPurchaseServer
import IAPTransportURLSession

/// `iap sandbox`: `iap emulate` and `iap serve` wired together on loopback, to try the purchase server in minutes.
enum SandboxCommand {
    static let spec = CommandSpec(
        name: "sandbox",
        summary: "run a local App Store (iap emulate) and the purchase server (iap serve) wired together",
        synopsis: [
            "[--dir DIR] [--port N] [--emulator-port N] [--environment Production|Sandbox] [--bundle-id ID]...",
            "  [--catalog FILE [--plans FILE]] [--grant-url URL --grant-secret-file FILE | --ledger-only]",
            "  [--console-port N] [--reconcile-every DURATION] [--on-rescind-consent notify|revoke]",
        ],
        discussion: """
            Starts 'iap emulate' and 'iap serve' as two processes on 127.0.0.1, wired as they would be against
            Apple: the server trusts the emulator's root certificate, the emulator posts its App Store Server
            Notifications to the server, the server reconciles with the emulator and looks orders up there, and
            both sell the same catalog. Everything they need is made once in DIR (default ./iap-sandbox, mode
            0700) and kept: an App Store Connect key, the user-token secret and the service token (mode 0600), the
            emulator's store (DIR/emulator) and the server's ledger (DIR/ledger), so a restart goes on where it
            stopped. Standard output names every URL and every file it made, never a secret's value; each
            process's standard error goes to DIR/emulator.log and DIR/server.log. Ctrl-C (SIGINT) or SIGTERM stops
            both.

            The first lines on standard output are 'emulator on http://HOST:PORT', 'server on http://HOST:PORT'
            and, with --console-port, 'console on http://HOST:PORT'. Without --catalog the emulator's built-in
            catalog (and its subscription offers) is sold and saved for the server as DIR/catalog.json. Without
            --grant-url the ledger is the entitlement source (--ledger-only). With --console-port, an operator
            'admin' (role admin) is made, whose password is in DIR/console-password. The environment is Production
            by default, so that Look Up Order ID works (Apple serves it in Production only); nothing leaves this
            machine. See Documentation/GettingStarted.md.

            Several apps, one server: give --bundle-id once per app (default com.example.app, alone). Each app gets
            an emulator of its own (the first as without the option; each other in DIR/emulator-ID, handing out its
            own transaction ids, with its control token in DIR/emulator-control-token-ID and its root in
            DIR/root-ID.der), all selling the same catalog and notifying the one server, which serves them as
            'iap serve --app' does, with one App Store Connect key. The first line is then 'emulator on
            http://HOST:PORT' for the first app, followed by 'emulator of ID on http://HOST:PORT' for each other.
            """,
        options: [
            .value("dir", "DIR", "keep the keys, secrets, store and ledger here (default ./iap-sandbox)"),
            .value("port", "N", "the server's port (default: a free one)"),
            .value("emulator-port", "N", "the emulator's port (default: a free one)"),
            .value("environment", "ENV", "Production (default) or Sandbox, for both"),
            .value(
                "bundle-id",
                "ID",
                "an app of the sandbox, once per app for several (default com.example.app); each its own emulator",
                repeatable: true
            ),
            .value("catalog", "FILE", "the products both sell: a swift-iap JSON catalog or an Xcode .storekit file"),
            .value("plans", "FILE", "the emulator's subscription offers and commitment plans (see iap emulate)"),
        ] + GrantOptions.options + [
            .value("console-port", "N", "also serve the operations console on this port"),
            .value("reconcile-every", "DURATION", "reconcile with the emulator this often (default 1m; off never)"),
            .value(
                "on-rescind-consent",
                "POLICY",
                "what a RESCIND_CONSENT does: notify (default) or revoke (see iap serve)"
            ),
        ],
        examples: ["iap sandbox", "iap sandbox --console-port 8081 --dir /tmp/sandbox"]
    )

    static let bundleId = "com.example.app"
    static let appAppleId = "1234567890"
    static let keyId = "SANDBOX001"
    static let issuerId = "00000000-0000-4000-8000-000000000000"

    struct Settings {
        var directory = URL(filePath: "iap-sandbox")
        var port: UInt16?
        var emulatorPort: UInt16 = 0
        var environment = "Production"
        var catalog: URL?
        var plans: URL?
        var grantURL: String?
        var grantSecretFile: String?
        var consolePort: UInt16?
        var reconcileEvery = "1m"
        var rescindConsent = "notify"
        var bundleIds = [SandboxCommand.bundleId]

        init(_ parsed: Arguments) throws(Arguments.UsageError) {
            guard parsed.positionals.isEmpty else {
                throw .init(message: "unexpected argument '\(parsed.positionals[0])'")
            }
            if let dir = try parsed.value("dir") {
                directory = URL(filePath: dir)
            }
            port = try Self.port(parsed, "port")
            emulatorPort = try Self.port(parsed, "emulator-port") ?? 0
            consolePort = try Self.port(parsed, "console-port")
            switch try parsed.value("environment") {
            case nil, "Production": environment = "Production"
            case "Sandbox": environment = "Sandbox"
            case let other?: throw .init(message: "--environment must be Production or Sandbox, not '\(other)'")
            }
            let named = parsed.values("bundle-id")
            if !named.isEmpty {
                guard named.count <= 8 else { throw .init(message: "--bundle-id is given more than 8 times") }
                for bundleId in named {
                    guard (1...155).contains(bundleId.utf8.count),
                        bundleId.utf8.allSatisfy({
                            $0 == 0x2D || $0 == 0x2E || (0x30...0x39).contains($0)
                                || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                        })
                    else {
                        throw .init(
                            message: "--bundle-id must be a bundle id such as com.example.app, not '\(bundleId)'"
                        )
                    }
                }
                guard Set(named).count == named.count else { throw .init(message: "a --bundle-id is given twice") }
                bundleIds = named
            }
            catalog = try parsed.value("catalog").map { URL(filePath: $0) }
            plans = try parsed.value("plans").map { URL(filePath: $0) }
            if plans != nil, catalog == nil {
                throw .init(message: "--plans goes with --catalog: the built-in catalog has its own offers")
            }
            grantURL = try parsed.value("grant-url")
            grantSecretFile = try parsed.value("grant-secret-file")
            if (grantURL == nil) != (grantSecretFile == nil) {
                throw .init(message: "--grant-url and --grant-secret-file go together")
            }
            if grantURL != nil, parsed.has("ledger-only") {
                throw .init(message: "give --grant-url or --ledger-only, not both")
            }
            if let every = try parsed.value("reconcile-every") {
                reconcileEvery = every
            }
            if let policy = try parsed.value("on-rescind-consent") {
                guard RescindConsentPolicy(rawValue: policy) != nil else {
                    throw .init(message: "--on-rescind-consent takes notify or revoke, not '\(policy)'")
                }
                rescindConsent = policy
            }
        }

        private static func port(_ parsed: Arguments, _ name: String) throws(Arguments.UsageError) -> UInt16? {
            guard let text = try parsed.value(name) else { return nil }
            guard let port = UInt16(text) else { throw .init(message: "--\(name) must be 0...65535") }
            return port
        }
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
        var children: [SandboxProcess] = []
        do {
            children = try await start(settings) { children.append($0) }
        } catch {
            for child in children.reversed() {
                child.stop()
            }
            Output.error("error: \((error as? IAPError)?.message ?? "\(error)")")
            terminate(.rejected)
        }
        Output.flush()
        let stopped = await firstOf(signals: signals, children: children)
        if let child = stopped {
            Output.error("error: \(child.name) stopped on its own; its log, \(child.log.path):\n\(child.logTail())")
        } else {
            Output.error("note: stopping")
        }
        for child in children.reversed() {
            child.stop()
        }
        terminate(stopped == nil ? .success : .rejected)
    }

    /// Waits for SIGINT or SIGTERM (`nil`) or for a child to exit (that child).
    private static func firstOf(signals: ShutdownSignals, children: [SandboxProcess]) async -> SandboxProcess? {
        await withTaskGroup(of: SandboxProcess?.self) { group in
            group.addTask {
                _ = await signals.wait()
                return nil
            }
            group.addTask {
                while !Task.isCancelled {
                    if let dead = children.first(where: { !$0.isRunning }) {
                        return dead
                    }
                    try? await Task.sleep(for: .milliseconds(200))
                }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Makes the files, starts the emulator then the server, and prints where everything is.
    private static func start(
        _ settings: Settings,
        started: (SandboxProcess) -> Void
    ) async throws -> [SandboxProcess] {
        guard let iap = Subprocess.ownExecutable() else {
            throw IAPError(.internalError, "cannot find the iap executable to run")
        }
        let files = try SandboxFiles(directory: settings.directory, consoleOperator: settings.consolePort != nil)
        let serverPort = try settings.port.flatMap { $0 == 0 ? nil : $0 } ?? freePort()
        let serverOrigin = "http://127.0.0.1:\(serverPort)"

        // One emulator per app: the first as a sandbox of one app has it, each other with files and ids of its own.
        var emulators: [(bundleId: String, appAppleId: String, origin: String, root: URL, token: URL)] = []
        var processes: [SandboxProcess] = []
        for (index, bundleId) in settings.bundleIds.enumerated() {
            let suffix = index == 0 ? "" : "-" + bundleId
            let appAppleId = String(Int64(Self.appAppleId).map { $0 + Int64(index) } ?? 1_234_567_890)
            var emulateArguments = [
                "emulate", "--port", String(index == 0 ? settings.emulatorPort : 0), "--bundle-id", bundleId,
                "--issuer-id", issuerId, "--key-id", keyId, "--auth-key", files.authKey.path, "--data",
                files.directory.appending(path: "emulator" + suffix).path, "--environment", settings.environment,
                "--app-apple-id", appAppleId, "--notify-url", serverOrigin + "/iap/v1/notifications",
            ]
            if index > 0 {
                emulateArguments += [
                    "--first-transaction-id", String(2_000_000_000_000_001 + index * 1_000_000_000_000),
                ]
            }
            if let catalog = settings.catalog {
                emulateArguments += ["--catalog", catalog.path]
            }
            if let plans = settings.plans {
                emulateArguments += ["--plans", plans.path]
            }
            let emulator = try SandboxProcess(
                name: index == 0 ? "iap emulate" : "iap emulate (\(bundleId))",
                program: iap,
                arguments: emulateArguments,
                log: files.directory.appending(path: "emulator\(suffix).log")
            )
            started(emulator)
            processes.append(emulator)
            let emulatorLines = emulator.lines(2)
            guard emulatorLines.count == 2, emulatorLines[0].hasPrefix("listening on "),
                emulatorLines[1].hasPrefix("control token: ")
            else {
                throw IAPError(.invalidConfiguration, "iap emulate did not start:\n\(emulator.logTail())")
            }
            let origin = String(emulatorLines[0].dropFirst("listening on ".count))
            let token = files.directory.appending(path: "emulator-control-token" + suffix)
            let root = index == 0 ? files.root : files.directory.appending(path: "root\(suffix).der")
            try files.writeSecret(token, String(emulatorLines[1].dropFirst("control token: ".count)))
            try await files.saveRoot(from: origin, token: token, to: root)
            emulators.append((bundleId, appAppleId, origin, root, token))
        }
        let emulatorOrigin = emulators[0].origin
        let catalog = try settings.catalog ?? files.saveBuiltInCatalog(EmulateCommand.builtInCatalog)

        var serveArguments = [
            "serve", "--port", String(serverPort), "--data", files.ledger.path, "--user-jwt-secret-file",
            files.userJWTSecret.path, "--service-token-file", files.serviceToken.path, "--issuer-id", issuerId,
            "--key-id", keyId, "--auth-key", files.authKey.path, "--reconcile-every", settings.reconcileEvery,
            "--on-rescind-consent", settings.rescindConsent,
        ]
        if emulators.count == 1 {
            serveArguments += [
                "--bundle-id", bundleId, "--environment", settings.environment, "--app-apple-id", appAppleId, "--root",
                files.root.path, "--catalog", catalog.path, "--api-url", emulatorOrigin,
            ]
        } else {
            for emulator in emulators {
                // The JSON form: a directory name may hold spaces.
                let app: [String: Any] = [
                    "bundleId": emulator.bundleId, "environments": settings.environment,
                    "appAppleId": emulator.appAppleId, "catalog": catalog.path, "roots": [emulator.root.path],
                    "apiUrl": emulator.origin,
                ]
                let json = try JSONSerialization.data(withJSONObject: app, options: [.sortedKeys])
                serveArguments += ["--app", String(decoding: json, as: UTF8.self)]
            }
        }
        if let url = settings.grantURL, let secret = settings.grantSecretFile {
            serveArguments += ["--grant-url", url, "--grant-secret-file", secret]
        } else {
            serveArguments += ["--ledger-only"]
        }
        if let consolePort = settings.consolePort {
            serveArguments += [
                "--console-port", String(consolePort), "--console-operators-file", files.consoleOperators.path,
                "--console-secret-file", files.consoleSecret.path, "--console-insecure-cookies",
            ]
        }
        let server = try SandboxProcess(
            name: "iap serve",
            program: iap,
            arguments: serveArguments,
            log: files.directory.appending(path: "server.log")
        )
        started(server)
        let serverLines = server.lines(settings.consolePort == nil ? 1 : 2)
        guard let listening = serverLines.first, listening.hasPrefix("listening on "),
            settings.consolePort == nil || serverLines.last?.hasPrefix("console on ") == true
        else {
            throw IAPError(.invalidConfiguration, "iap serve did not start:\n\(server.logTail())")
        }

        Output.line("emulator on \(emulatorOrigin)")
        for emulator in emulators.dropFirst() {
            Output.line("emulator of \(emulator.bundleId) on \(emulator.origin)")
        }
        Output.line("server on \(listening.dropFirst("listening on ".count))")
        if settings.consolePort != nil, let console = serverLines.last {
            Output.line(console)
        }
        Output.line("directory: \(files.directory.path)")
        Output.line("  emulator control token (X-Emulator-Control-Token): \(files.controlToken.path)")
        for emulator in emulators.dropFirst() {
            Output.line(
                "  emulator of \(emulator.bundleId): control token \(emulator.token.path), root \(emulator.root.path)"
            )
        }
        Output.line("  user token secret (HS256, --user-jwt-secret-file): \(files.userJWTSecret.path)")
        Output.line("  service token (Authorization: Bearer): \(files.serviceToken.path)")
        Output.line("  App Store Connect key \(keyId), issuer \(issuerId): \(files.authKey.path)")
        Output.line("  root certificate the server trusts: \(files.root.path)")
        Output.line("  catalog: \(catalog.path)")
        if settings.consolePort != nil {
            Output.line("  console operator admin, password: \(files.consolePassword.path)")
        }
        Output.line("  logs: \((processes + [server]).map(\.log.path).joined(separator: ", "))")
        Output.line(
            "bundle id\(emulators.count == 1 ? "" : "s") \(settings.bundleIds.joined(separator: ", ")), "
                + "environment \(settings.environment), "
                + (settings.grantURL.map { "grants to \($0)" } ?? "ledger only")
        )
        Output.line(emulators.count == 1 ? "Ctrl-C stops both" : "Ctrl-C stops them all")
        return processes + [server]
    }

    /// A TCP port on 127.0.0.1 that nothing listens on now.
    private static func freePort() throws -> UInt16 {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw IAPError(.internalError, "cannot open a socket to find a free port") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0 else { throw IAPError(.internalError, "cannot find a free port") }
        return UInt16(bigEndian: address.sin_port)
    }
}
