import Foundation
import Testing

/// `--help` for every `iap` command and subcommand, and the one-line usage errors, as a newcomer meets them.
/// Serialized: it starts a hundred short processes, which would crowd the timing tests of other suites.
@Suite("iap --help", .serialized)
struct CommandHelpTests {
    typealias CLI = CommandLineContractTests

    static let ledger = ["data", "database", "schema"]
    static let session = [
        "issuer-id", "key-id", "auth-key", "bundle-id", "environment", "base-url", "root", "app-apple-id",
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
        (["ledger", "check"], ledger + ["json"]),
        (["ledger", "export"], ledger),
        (["testdata"], []),
        (["testdata", "transactions"], ["count", "root-out", "catalog-out", "bundle-id", "environment", "users"]),
        (["bench"], []),
        (["bench", "verify"], ["seconds", "runs", "only"]),
        (["bench", "verify-batch"], ["transactions", "runs", "python", "python-transactions", "no-openssl-speed"]),
        (["bench", "ingest"], ["transactions", "runs", "window"]),
        (["bench", "pipeline"], ["deliveries", "runs", "concurrency"]),
        (
            ["bench", "store"],
            [
                "transactions", "deliveries", "writers", "runs", "dir", "open-only", "database", "schema",
                "child-deliveries",
            ]
        ),
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
                "environment", "grace-period-days", "notify-url",
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
                "demo", "verify", "decode", "ledger", "testdata", "bench", "api", "emulate", "support", "reconcile",
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
}
