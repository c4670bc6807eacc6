import Foundation
import IAPCrypto
import Testing

/// `--help` for every `iap` command and subcommand, and the one-line usage errors, as a newcomer meets them.
/// Serialized: it starts a hundred short processes, which would crowd the timing tests of other suites.
@Suite("iap --help", .serialized)
struct CommandHelpTests {
    typealias CLI = CommandLineContractTests

    static let ledger = ["data", "database", "schema"]
    static let session = [
        "issuer-id", "key-id", "auth-key", "bundle-id", "environment", "api-url", "root", "app-apple-id",
    ]
    static let api = session + ["decode"]

    /// Every command a user can type, with every option its usage must explain.
    static let commands: [(words: [String], options: [String])] = [
        (["demo"], ["data", "fresh"]),
        (["verify"], ["root", "bundle-id", "environment", "app-apple-id", "strict-x509", "at", "kind", "batch"]),
        (["decode"], []),
        (["ledger"], []),
        (
            ["ledger", "ingest"],
            ledger + [
                "catalog", "root", "bundle-id", "environment", "app-apple-id", "strict-x509", "user",
                "compaction-threshold", "events", "window", "grant-url", "grant-secret-file", "ledger-only",
            ]
        ),
        (["ledger", "entitlements"], ledger + ["user", "at", "catalog", "json"]),
        (["ledger", "history"], ledger + ["user", "limit", "cursor", "json"]),
        (["ledger", "stats"], ledger + ["json"]),
        (["ledger", "analytics"], ledger + ["from", "to", "interval", "environment", "product", "catalog", "json"]),
        (["ledger", "check"], ledger + ["json"]),
        (["ledger", "export"], ledger),
        (["testdata"], []),
        (["console"], []),
        (["console", "add-operator"], ["role", "operators-file"]),
        (["testdata", "transactions"], ["count", "root-out", "catalog-out", "bundle-id", "environment", "users"]),
        (["api"], []),
        (["api", "transaction"], api),
        (
            ["api", "history"],
            api + [
                "revision", "product-id", "product-type", "start", "end", "sort", "revoked", "subscription-group",
                "ownership",
            ]
        ),
        (["api", "statuses"], api + ["status"]),
        (["api", "refunds"], api + ["revision"]),
        (["api", "lookup-order"], api),
        (["api", "test-notification"], api + ["token"]),
        (
            ["api", "notification-history"],
            api + ["start", "end", "type", "subtype", "transaction-id", "only-failures", "pagination-token"]
        ),
        (["api", "extend"], api + ["days", "reason", "request-id"]),
        (
            ["emulate"],
            [
                "port", "host", "bundle-id", "issuer-id", "key-id", "auth-key", "data", "catalog", "app-apple-id",
                "environment", "grace-period-days", "notify-url", "plans",
            ]
        ),
        (
            ["sandbox"],
            [
                "dir", "port", "emulator-port", "environment", "catalog", "plans", "grant-url", "grant-secret-file",
                "ledger-only", "console-port", "reconcile-every", "on-rescind-consent",
            ]
        ),
        (["support"], []),
        (
            ["support", "lookup-order"],
            ledger + [
                "catalog", "json", "redeliver", "operator", "user", "audit", "grant-url", "grant-secret-file",
                "ledger-only",
            ] + session
        ),
        (
            ["reconcile"],
            ledger + [
                "catalog", "issuer-id", "key-id", "auth-key", "bundle-id", "environment", "api-url", "root",
                "app-apple-id", "user", "all", "subscriptions", "grant-url", "grant-secret-file", "ledger-only", "json",
                "checkpoints", "alarm-threshold", "requests-per-second", "events",
            ]
        ),
    ]

    /// The lines of a usage's options section.
    static func optionLines(_ usage: String) -> [String] {
        let lines = usage.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: "options:") else { return [] }
        return Array(lines[(start + 1)...].prefix { !$0.isEmpty })
    }

    @Test(arguments: commands.map(\.words))
    func everyCommandExplainsItselfOnStandardOutput(_ words: [String]) async throws {
        let options = try #require(Self.commands.first { $0.words == words }?.options)
        for help in ["--help", "-h"] {
            let run = try await CLI.iap(words + [help])
            #expect(run.status == 0, "iap \(words.joined(separator: " ")) \(help): \(run.stderr)")
            #expect(run.stderr.isEmpty)
            #expect(run.stdout.hasPrefix("usage: iap \(words.joined(separator: " "))"))
            #expect(run.stdout.hasSuffix("\n"))
            let lines = Self.optionLines(run.stdout)
            for option in options + ["help"] {
                // Each option on its own line, with an explanation beside it or below it.
                let line = lines.firstIndex {
                    $0.hasPrefix("  --\(option) ") || $0 == "  --\(option)" || $0.hasPrefix("  -h, --\(option) ")
                }
                #expect(line != nil, "iap \(words.joined(separator: " ")) --help does not explain --\(option)")
                if let line {
                    let explained =
                        lines[line].trimmingCharacters(in: .whitespaces).contains("  ")
                        || (line + 1 < lines.count && lines[line + 1].hasPrefix("      "))
                    #expect(explained, "--\(option) has no explanation")
                }
            }
            #expect(run.stdout.contains("\nexample:\n  ") || run.stdout.contains("\nexamples:\n  "))
        }
        // `iap help WORDS` prints the same usage.
        let viaHelp = try await CLI.iap(["help"] + words)
        #expect(viaHelp.status == 0)
        #expect(viaHelp.stdout == (try await CLI.iap(words + ["--help"])).stdout)
    }

    @Test func theToolListsItsCommands() async throws {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let run = try await CLI.iap(arguments)
            #expect(run.status == 0)
            #expect(run.stdout.hasPrefix("usage: iap <command>"))
            for command in [
                "demo", "verify", "decode", "ledger", "testdata", "api", "emulate", "support", "reconcile", "console",
            ] {
                #expect(run.stdoutLines.contains { $0.hasPrefix("  \(command) ") }, "\(command) is not listed")
            }
        }
        let nothing = try await CLI.iap([])
        #expect(nothing.status == 2)
        #expect(nothing.stdout.isEmpty)
        #expect(nothing.stderr.hasPrefix("usage: iap <command>"))
    }

    @Test func aUsageErrorIsOneLineThatNamesTheProblemAndTheHelpToRead() async throws {
        for (arguments, problem, help) in [
            (["ledger", "history", "--data", "x", "--bogus"], "unknown option --bogus", "iap ledger history --help"),
            (["ledger", "ingest", "-x"], "unknown option -x", "iap ledger ingest --help"),
            (
                ["testdata", "transactions", "--frobnicate=1"], "unknown option --frobnicate",
                "iap testdata transactions --help"
            ),
            (["ledger", "history", "--user"], "--user needs a value", "iap ledger history --help"),
            (["verify", "--root"], "--root needs a value", "iap verify --help"),
            (["ledger", "frobnicate"], "unknown ledger command 'frobnicate'", "iap ledger --help"),
            (["api", "nothing"], "unknown api command 'nothing'", "iap api --help"),
            (["frobnicate"], "unknown command 'frobnicate'", "iap --help"),
            (["demo", "--fresh=yes"], "--fresh takes no value", "iap demo --help"),
        ] {
            let run = try await CLI.iap(arguments)
            #expect(run.status == 2, "\(arguments) exited \(run.status)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderrLines == ["error: usage: \(problem) (see \(help))"], "\(arguments)")
        }
        // --help wins over a mistake anywhere on the line.
        let both = try await CLI.iap(["ledger", "history", "--bogus", "--help"])
        #expect(both.status == 0)
        #expect(both.stdout.hasPrefix("usage: iap ledger history"))
    }

    /// The command lines of each command that asks the App Store Server API, complete up to the option that names
    /// its address: `iap serve`, `iap reconcile`, `iap support lookup-order` and `iap api`.
    static func apiCommandLines(_ directory: URL) throws -> [(words: [String], arguments: [String])] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let user = directory.appending(path: "user.secret")
        let token = directory.appending(path: "service.token")
        try ServeProcess.writePrivate(ServeProcess.userSecret, to: user)
        try ServeProcess.writePrivate(ServeProcess.serviceToken, to: token)
        let ledger = directory.appending(path: "ledger").path
        let key = ["--issuer-id", "ISSUER", "--key-id", "KEY", "--auth-key", directory.appending(path: "key.p8").path]
        let app = ["--bundle-id", "com.example.app", "--app-apple-id", "1234567890"]
        return [
            (
                ["serve"],
                [
                    "serve", "--port", "0", "--data", ledger, "--environment", "Sandbox", "--ledger-only",
                    "--user-jwt-secret-file", user.path, "--service-token-file", token.path,
                ] + key + app
            ),
            (["reconcile"], ["reconcile", "--data", ledger, "--all", "--ledger-only"] + key + app),
            (
                ["support", "lookup-order"],
                ["support", "lookup-order", "MH43IXG3WA", "--data", ledger, "--environment", "Production"] + key + app
            ),
            (
                ["api", "transaction"],
                ["api", "transaction", "2000000000000001", "--environment", "Sandbox"] + key + app
            ),
        ]
    }

    @Test func theAPIAddressIsApiURLEverywhereAndBaseURLIsItsAlias() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-api-url-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for (words, arguments) in try Self.apiCommandLines(directory) {
            let command = "iap \(words.joined(separator: " "))"
            // The help names --api-url, says --base-url is its alias, and lists no --base-url of its own.
            let help = try await CLI.iap(words + ["--help"])
            let lines = Self.optionLines(help.stdout)
            let line = try #require(lines.firstIndex { $0.hasPrefix("  --api-url URL") }, "\(command)")
            let explanation = ([lines[line]] + lines[(line + 1)...].prefix { $0.hasPrefix("      ") })
                .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
            #expect(explanation.contains("(alias: --base-url)"), "\(command): \(explanation)")
            #expect(!lines.contains { $0.hasPrefix("  --base-url") }, "\(command)")
            #expect(!help.stdout.contains("[--base-url"), "\(command)")

            // Either name reaches the same check, and a message names the option as it was typed.
            for option in ["--api-url", "--base-url"] {
                let run = try await CLI.iap(arguments + [option, "ftp://127.0.0.1:9"])
                #expect(run.status == 2, "\(command) \(option): \(run.stderr)")
                #expect(
                    run.stderr.contains("\(option) must be an http or https URL, not 'ftp://127.0.0.1:9'"),
                    "\(command) \(option): \(run.stderr)"
                )
            }
            // Both at once are one option given twice.
            let both = try await CLI.iap(
                arguments + ["--api-url", "http://127.0.0.1:9", "--base-url", "http://127.0.0.1:9"]
            )
            #expect(both.status == 2)
            #expect(both.stderr.contains("--api-url and --base-url name the same option: give one"), "\(both.stderr)")
        }
    }

    @Test func aPasswordInTheAPIAddressIsRefusedWithoutBeingShown() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-api-url-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for (words, arguments) in try Self.apiCommandLines(directory) {
            for option in ["--api-url", "--base-url"] {
                let run = try await CLI.iap(arguments + [option, "http://apple:hunter2-pass@127.0.0.1:9"])
                #expect(run.status == 2, "\(words) \(option): \(run.stderr)")
                #expect(run.stderr.contains("\(option) must not hold a user or password (user:password@)"))
                #expect(run.stderr.contains("--auth-key"))
                #expect(!run.stderr.contains("hunter2-pass") && !run.stdout.contains("hunter2-pass"))
            }
        }
        // In a configuration file of iap serve, the alias names the same setting.
        let serve = try #require(try Self.apiCommandLines(directory).first { $0.words == ["serve"] }).arguments
        let config = directory.appending(path: "serve.json")
        try Data(#"{"base-url": "https://apple:hunter2-pass@127.0.0.1:9"}"#.utf8).write(to: config)
        let run = try await CLI.iap(serve + ["--config", config.path])
        #expect(run.status == 2)
        #expect(run.stderr.contains("must not hold a user or password"), "\(run.stderr)")
        #expect(!run.stderr.contains("hunter2-pass"))
    }

    @Test func theAliasReachesTheServer() async throws {
        // --base-url is where iap api sends its request: LocalTesting needs an address, and the closed port fails
        // the call (exit 1), not the usage (exit 2).
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-api-url-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = directory.appending(path: "key.p8")
        try ServeProcess.writePrivate(try P256PrivateKey().pemRepresentation, to: key)
        let arguments = [
            "api", "transaction", "2000000000000001", "--issuer-id", "ISSUER", "--key-id", "KEY", "--auth-key",
            key.path, "--bundle-id", "com.example.app", "--environment", "LocalTesting",
        ]
        let without = try await CLI.iap(arguments)
        #expect(without.status == 2)
        #expect(without.stderr.contains("--environment LocalTesting needs --api-url"))
        for option in ["--api-url", "--base-url"] {
            let run = try await CLI.iap(arguments + [option, "http://127.0.0.1:9"])
            #expect(run.status == 1, "\(option): \(run.stderr)")
            #expect(!run.stderr.contains("usage"), "\(option): \(run.stderr)")
        }
    }
}
