import Foundation
import IAPCore
import IAPTestSupport
import Testing

/// `iap demo`, run as a newcomer runs it: in a fresh directory, with no arguments, then again. Serialized: each
/// test runs whole demos, which would crowd the timing tests of other suites.
@Suite("iap demo", .serialized)
struct DemoCommandTests {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs `iap` in a directory, waiting for it without holding a thread of the concurrency pool.
    static func iap(_ arguments: [String], in directory: URL) async throws -> Run {
        let run = try await ChildProcess.run(try EmulatorProcess.binary(), arguments, directory: directory)
        return Run(
            status: run.status,
            stdout: String(decoding: run.standardOutput, as: UTF8.self),
            stderr: String(decoding: run.standardError, as: UTF8.self)
        )
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appending(path: "iap-demo-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The rows of the final table, each split into its columns.
    static func finalTable(_ output: String) throws -> [[String]] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex { $0.hasPrefix("  user ") && $0.contains("product") })
        var rows: [[String]] = []
        for line in lines[(header + 1)...] {
            if line.trimmingCharacters(in: .whitespaces).isEmpty { break }
            rows.append(
                line.trimmingCharacters(in: .whitespaces)
                    .components(separatedBy: "  ")
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty }
            )
        }
        return rows
    }

    /// What the story must end with, whatever else it prints.
    static let expectedTable: [[String]] = [
        ["alice", "remove.ads", "active", "yes", "-"],
        ["alice", "coins.100", "balance", "yes", "-", "100", "100"],
        ["bob", "pro.monthly", "active", "yes", "Apr 05 09:10"],
        ["bob", "remove.ads", "active", "yes", "-"],
        ["bob", "coins.100", "balance", "yes", "-", "100", "100"],
        ["carol", "remove.ads", "active", "yes", "-"],
        ["dave", "coins.100", "balance", "yes", "-", "100", "100"],
        ["reviewer", "remove.ads", "active", "yes", "-"],
    ]

    @Test func tellsTheWholeStoryAndEndsWithTheEntitlementsTable() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }

        let run = try await Self.iap(["demo"], in: directory)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty)
        #expect(try Self.finalTable(run.stdout) == Self.expectedTable)

        // Each chapter of the story happened, as the library reported it.
        for chapter in [
            "Products, from Products.storekit and Products.catalog.json",
            "coins.100    consumable, 100 coins a purchase",  // the pack size the catalog gives the .storekit file
            "a retry is scheduled",  // the wallet failed
            "retry queue: 1 delivered, 0 still failing",  // and the retry queue recovered it
            "the app keeps the transaction unfinished",
            "pending: nothing is granted",  // Ask to Buy
            "waits for its owner",  // the approval's notification came before the app
            "1 delivered now",  // the lost order, found by reconciliation
            // App Review's sandbox purchase on the production server
            "App Review buys remove.ads with a sandbox account → transaction 3000000000000001, signed in the Sandbox",
            "delivered remove.ads to reviewer (a Sandbox purchase: granted, flagged apart from revenue)",
            // the lost DID_FAIL_TO_RENEW, repaired by the subscription check: bob keeps his grace period
            "notification DID_FAIL_TO_RENEW is lost",
            "the ledger believes bob's pro.monthly is expired, ended Mar 05 09:10: NO access",
            "1 live subscription, 1 API request, 1 renewal state recorded",
            "gracePeriod, access until Mar 21 09:10",
            "DID_RENEW, delivered pro.monthly to bob",  // renewal and recovery
            "REFUND, coins.100 of alice is refunded",
            "NOT delivered",  // the support lookup
            "→ delivered (audit entry written)",  // and its redelivery
            "waits in the app's outbox",  // the app killed before the server answered
            "delivered, the transaction finished",  // and its outbox at the next launch
            "ledger: 11 transactions of 5 users, 11 delivered, 1 revoked, 0 waiting for a retry, 0 dead letters",
            "environments: 10 Production, 1 Sandbox",
            "wallet: 12 grants and take-backs applied by this run",
            "Try next",
        ] {
            #expect(run.stdout.contains(chapter), "missing: \(chapter)")
        }

        // Every ALARM names something the ledger had really missed: bob's coins, whose notification was lost while
        // his app crashed, and his subscription's billing failure, whose notification was lost in a deploy.
        let alarms: [String] = run.stdout.split(separator: "\n").filter { $0.contains("ALARM") }.map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let expectedAlarms = [
            "ALARM: 2000000000000004 (coins.100 of bob) was not in the ledger: delivered now",
            "ALARM: subscription 2000000000000003 (pro.monthly of bob): its renewal state changed and the ledger "
                + "never heard: recorded now",
        ]
        #expect(alarms == expectedAlarms)

        let data = directory.appending(path: "iap-demo-data")
        for file in [
            "Products.storekit", "Products.catalog.json", "wallet.json", "ledger/support-audit.jsonl",
            "ledger/catalog.json",
        ] {
            #expect(FileManager.default.fileExists(atPath: data.appending(path: file).path), "\(file)")
        }
        // The lookup and the redelivery, in the ledger's own chained audit.
        let audit = try String(contentsOf: data.appending(path: "ledger/support-audit.jsonl"), encoding: .utf8)
        #expect(audit.split(separator: "\n").count == 3)
        let verified = try await Self.iap(["support", "audit", "verify", "iap-demo-data/ledger"], in: directory)
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")

        // The ledger the demo leaves behind is sound, and the suggested commands work on it.
        let check = try await Self.iap(["ledger", "check", "--data", "iap-demo-data/ledger"], in: directory)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let entitlements = try await Self.iap(
            ["ledger", "entitlements", "--data", "iap-demo-data/ledger", "--user", "bob", "--at", "1773225000000"],
            in: directory
        )
        #expect(entitlements.status == 0)
        #expect(entitlements.stdout.contains("pro.monthly  autoRenewable  active"))
        #expect(entitlements.stdout.contains("balance coins.100: 100"))
    }

    @Test func runningItAgainTellsWhatThatRunFoundAndFreshStartsOver() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }

        let first = try await Self.iap(["demo"], in: directory)
        #expect(first.status == 0, "\(first.stderr)")
        let again = try await Self.iap(["demo"], in: directory)
        #expect(again.status == 0, "\(again.stderr)")
        // What this run found in the ledger the first one left ...
        for line in [
            "The ledger already holds 11 transactions of 5 users (11 delivered, 1 revoked) from an earlier run.",
            "What this run found",
            "already delivered, nothing granted again",
            "This run added 0 transactions, 0 deliveries and 0 take-backs to the ledger.",
            "The wallet applied nothing: nothing was granted twice.",
            "wallet: 0 grants and take-backs applied by this run",
        ] {
            #expect(again.stdout.contains(line), "missing: \(line)")
        }
        // ... and not the first run's story, which this run did not live.
        for line in [
            "the wallet service stops answering", "a retry is scheduled", "ALARM", "1 delivered now",
            "→ delivered (audit entry written)", "Timeline (simulated time, UTC)",
        ] {
            #expect(!again.stdout.contains(line), "told again: \(line)")
        }
        #expect(try Self.finalTable(again.stdout) == Self.expectedTable)

        let fresh = try await Self.iap(["demo", "--fresh"], in: directory)
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(!fresh.stdout.contains("from an earlier run"))
        #expect(fresh.stdout.contains("the wallet service stops answering"))
        #expect(fresh.stdout.contains("wallet: 12 grants and take-backs applied by this run"))
        #expect(try Self.finalTable(fresh.stdout) == Self.expectedTable)
        // Deterministic: starting over prints the same bytes as the first run.
        #expect(fresh.stdout == first.stdout)
    }

    /// The commands under "Try next", as printed: each line that starts with `  $ `.
    static func tryNext(_ output: String) -> [String] {
        let lines = output.split(separator: "\n").map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("Try next") }) else { return [] }
        return lines[start...].filter { $0.hasPrefix("  $ ") }.map { String($0.dropFirst(4)) }
    }

    /// Runs a command line with `/bin/sh` in a directory, with `PATH` given.
    static func shell(_ command: String, in directory: URL, path: String? = nil) async throws -> Run {
        var environment: [String: String]?
        if let path {
            environment = ProcessInfo.processInfo.environment
            environment?["PATH"] = path
        }
        let run = try await ChildProcess.run(
            URL(filePath: "/bin/sh"),
            ["-c", command],
            environment: environment,
            directory: directory
        )
        return Run(
            status: run.status,
            stdout: String(decoding: run.standardOutput, as: UTF8.self),
            stderr: String(decoding: run.standardError, as: UTF8.self)
        )
    }

    @Test func everyTryNextCommandWorksFromAnotherDirectory() async throws {
        let directory = try Self.temporaryDirectory()
        let elsewhere = try Self.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: elsewhere)
        }
        let binary = try EmulatorProcess.binary()
        let run = try await Self.iap(["demo"], in: directory)
        #expect(run.status == 0, "\(run.stderr)")
        let commands = Self.tryNext(run.stdout)
        #expect(commands.count >= 8)
        // The tool is named by the path it was run from, and no command points into the source checkout.
        #expect(commands.filter { !$0.hasPrefix("cat ") }.allSatisfy { $0.hasPrefix(binary.path + " ") })
        #expect(!commands.contains { $0.contains("Sources/") || $0.contains("swift run") })
        let data = directory.appending(path: "iap-demo-data")
        for file in ["simulated-app-store-root.der", "sample-transaction.jws", "apple-test-notification.jws"] {
            #expect(FileManager.default.fileExists(atPath: data.appending(path: file).path), "\(file)")
        }
        for command in commands {
            let result = try await Self.shell(command, in: elsewhere)
            #expect(result.status == 0, "\(command)\n\(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
    }

    @Test func foundOnThePathItIsNamedByItsName() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = try EmulatorProcess.binary()
        let path = binary.deletingLastPathComponent().path + ":/usr/bin:/bin"
        let run = try await Self.shell("iap demo --data iap-demo-data", in: directory, path: path)
        #expect(run.status == 0, "\(run.stderr)")
        let commands = Self.tryNext(run.stdout)
        #expect(
            commands.contains {
                $0.hasPrefix("iap ledger entitlements --data /") && $0.contains("iap-demo-data/ledger")
            }
        )
        let check = try #require(commands.first { $0.hasPrefix("iap ledger check ") })
        #expect(try await Self.shell(check, in: FileManager.default.temporaryDirectory, path: path).status == 0)
    }

    @Test func neverTouchesADirectoryItDidNotMake() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let precious = directory.appending(path: "precious.txt")
        try Data("keep me".utf8).write(to: precious)

        let run = try await Self.iap(["demo", "--fresh", "--data", directory.path], in: directory)
        #expect(run.status == 1)
        #expect(run.stderr.contains("was not made by iap demo"))
        #expect(FileManager.default.fileExists(atPath: precious.path))

        let usage = try await Self.iap(["demo", "extra"], in: directory)
        #expect(usage.status == 2)
    }
}
