import Foundation
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTestSupport
import Testing

/// `iap ledger` on PostgreSQL, from outside: several processes on one ledger. Needs a server in
/// `IAP_TEST_POSTGRES_URL` (`Scripts/postgres-server.sh start`); skipped without one, failed under CI.
@Suite(
    "iap ledger on PostgreSQL",
    .enabled(
        if: PostgresTestServer.isConfigured,
        "needs PostgreSQL: export IAP_TEST_POSTGRES_URL=$(Scripts/postgres-server.sh start)"
    )
)
struct PostgresLedgerProcessTests {
    static func start(_ arguments: [String], output: URL) throws -> ChildProcess {
        try ChildProcess(
            executable: try EmulatorProcess.binary(),
            arguments: arguments,
            logFile: output.appendingPathExtension("log"),
            output: .file(output)
        )
    }

    /// A directory of signed transactions for `iap ledger ingest`, their root and catalog, a fresh schema, and a wallet
    /// (a webhook receiver that checks every signature and keeps every idempotency key it was sent).
    final class Fixture {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-pg-\(UUID().uuidString)")
        let ledger: [String]
        let root: String
        let catalog: String
        let input: URL
        let secretFile: URL
        let wallet: LoopbackServer

        /// `count` purchases of `users` users; the wallet answers each grant after `delayMilliseconds`. The wallet
        /// stops and the directory goes when the fixture does: keep it alive to the end of the test.
        init(count: Int, users: Int, delayMilliseconds: UInt32 = 0) async throws {
            ledger = ["--database", try PostgresTestServer.requireURL(), "--schema", PostgresTestServer.freshSchema()]
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            root = directory.appending(path: "root.der").path
            catalog = directory.appending(path: "catalog.json").path
            input = directory.appending(path: "transactions.jws")
            secretFile = directory.appending(path: "grant-secret")
            let secret = "a-shared-secret-of-32-bytes-long"
            wallet = try LoopbackServer.wallet(secret: secret, delayMilliseconds: delayMilliseconds)
            let generated = try await CommandLineContractTests.iap([
                "testdata", "transactions", "--count", String(count), "--users", String(users), "--root-out", root,
                "--catalog-out", catalog,
            ])
            #expect(generated.status == 0)
            try Data(generated.stdout.utf8).write(to: input)
            try Data((secret + "\n").utf8).write(to: secretFile)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile.path)
        }

        deinit {
            wallet.stop()
            try? FileManager.default.removeItem(at: directory)
        }

        /// GRANT: the wallet's URL and the secret file.
        var grant: [String] {
            ["--grant-url", wallet.url.appending(path: "iap").absoluteString, "--grant-secret-file", secretFile.path]
        }
    }

    @Test func twoProcessesIngestingTheSameInputAtOnceGrantEachPurchaseExactlyOnce() async throws {
        let count = 400
        let fixture = try await Fixture(count: count, users: 20)
        defer { withExtendedLifetime(fixture) {} }
        let (directory, ledger, root, wallet) = (fixture.directory, fixture.ledger, fixture.root, fixture.wallet)
        let ingest =
            ["ledger", "ingest"] + ledger + ["--catalog", fixture.catalog, "--root", root] + fixture.grant + [
                "--token-is-user", fixture.input.path,
            ]
        let processes = try (0..<2).map {
            try Self.start(ingest, output: directory.appending(path: "ingest-\($0).out"))
        }
        defer {
            for process in processes {
                process.kill()
            }
        }
        for process in processes {
            #expect(await process.exit(within: .seconds(300)), "\(process.commandLine) did not end")
            #expect(process.terminationStatus == 0)
        }

        // Every line was answered by both, and every purchase was granted once, by one of them.
        for index in 0..<2 {
            let answers = try String(contentsOf: directory.appending(path: "ingest-\(index).out"), encoding: .utf8)
                .split(separator: "\n")
            #expect(answers.count == count)
            #expect(answers.allSatisfy { $0.hasPrefix("ACK ") })
        }
        let granted = wallet.requests.compactMap { $0.headers["idempotency-key"] }
        #expect(wallet.requests.count == count)
        #expect(granted.count == count)
        #expect(Set(granted).count == count, "some purchases were granted twice")
        #expect(wallet.requests.allSatisfy { $0.method == "POST" && $0.target == "/iap" })

        let stats = try CommandLineContractTests.json(
            try await CommandLineContractTests.iap(["ledger", "stats"] + ledger + ["--json"]).stdout
        )
        #expect(stats["transactions"] as? Int == count)
        #expect(stats["delivered"] as? Int == count)
        #expect(try await CommandLineContractTests.iap(["ledger", "check"] + ledger).status == 0)
        // Every purchase was recorded with the JWS it was verified from, which verifies again.
        let reverified = try await CommandLineContractTests.iap(
            ["ledger", "check"] + ledger + ["--reverify", "--root", root]
        )
        #expect(reverified.status == 0, "\(reverified.stderr)")
        #expect(
            reverified.stdoutLines.contains("reverify: \(count) signed transactions verify and match their entries")
        )
        let export = try await CommandLineContractTests.iap(["ledger", "export"] + ledger)
        #expect(export.stdoutLines.count == count)
    }

    /// `iap ledger ingest` killed with SIGKILL while its grants are in flight leaves claims that hold: the counts add
    /// up, a re-run says when they expire, and a drain after then delivers every purchase, each under one key.
    @Test func killedMidIngestItsClaimsAddUpAndADrainAfterThemDeliversEveryPurchase() async throws {
        typealias CLI = CommandLineContractTests
        let count = 1_500
        // A wallet that takes 40 ms to answer, so that many grants are in flight when the process is killed.
        let fixture = try await Fixture(count: count, users: 50, delayMilliseconds: 40)
        defer { withExtendedLifetime(fixture) {} }
        let (directory, ledger, input, wallet, grant) = (
            fixture.directory, fixture.ledger, fixture.input, fixture.wallet, fixture.grant
        )
        let schema = ledger[3]
        let ingest =
            ["ledger", "ingest"] + ledger + ["--catalog", fixture.catalog, "--root", fixture.root, "--token-is-user"]
            + grant

        let output = directory.appending(path: "ingest.out")
        let process = try Self.start(ingest + [input.path], output: output)
        defer { process.kill() }
        let deadline = ContinuousClock.now + .seconds(120)
        while ((try? Data(contentsOf: output)) ?? Data()).count(where: { $0 == 0x0A }) < 300,
            process.isRunning, ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(process.isRunning, "the ingest ended before it was killed")
        process.kill()
        #expect(process.endedBySignal)

        func stats() async throws -> [String: Any] {
            try CLI.json(try await CLI.iap(["ledger", "stats"] + ledger + ["--json"]).stdout)
        }
        let killed = try await stats()
        let recorded = try #require(killed["transactions"] as? Int)
        let delivered = try #require(killed["delivered"] as? Int)
        let claimed = try #require(killed["claimed"] as? Int)
        let stale = try #require(killed["staleClaims"] as? Int)
        #expect(claimed > 0, "no grant was in flight when the process was killed")
        #expect(delivered + claimed + stale == recorded, "\(killed)")

        // A re-run within the claims answers their lines pending, delivers the rest, and says when the claims expire.
        let rerun = try await CLI.iap(ingest + [input.path], timeout: .seconds(300))
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stdoutLines.count == count)
        #expect(rerun.stdoutLines.filter { $0.hasSuffix(" pending") }.count == claimed)
        #expect(
            rerun.stderr.contains("note: \(claimed) purchase(s) are claimed by another deliverer"),
            "\(rerun.stderr)"
        )
        let waiting = try await stats()
        #expect(waiting["transactions"] as? Int == count)
        #expect(waiting["delivered"] as? Int == count - claimed)
        #expect(waiting["claimed"] as? Int == claimed)

        // A drain while the claims hold leaves them and says until when.
        let early = try CLI.json(try await CLI.iap(["ledger", "drain"] + ledger + grant + ["--json"]).stdout)
        #expect(early["delivered"] as? Int == 0)
        #expect(early["claimed"] as? Int == claimed)
        #expect(early["claimsHoldUntil"] is Int)

        // The claims' 120 seconds pass (their expiry moved back, in the column and in the entry alike).
        _ = try PostgresTestServer.sql(
            """
            UPDATE \(schema).iap_ledger_entries
            SET next_attempt_at = next_attempt_at - 300000,
                entry = jsonb_set(entry, '{nextAttemptAt}', to_jsonb((entry->>'nextAttemptAt')::bigint - 300000))
            WHERE delivery_state = 'pending' AND next_attempt_at IS NOT NULL
            """
        )
        let expired = try await stats()
        #expect(expired["claimed"] as? Int == 0)
        #expect(expired["staleClaims"] as? Int == claimed)
        let check = try await CLI.iap(["ledger", "check"] + ledger + ["--json"])
        #expect(check.status == 0, "\(check.stdout)")
        #expect(
            (try CLI.json(check.stdout)["notes"] as? [String])?.contains { $0.hasPrefix("\(claimed) purchase(s)") }
                == true
        )

        let drain = try await CLI.iap(["ledger", "drain"] + ledger + grant + ["--json"])
        #expect(drain.status == 0, "\(drain.stderr)")
        let drained = try CLI.json(drain.stdout)
        #expect(drained["delivered"] as? Int == claimed)
        #expect(drained["claimed"] as? Int == 0 && drained["staleClaims"] as? Int == 0)
        let done = try await stats()
        #expect(done["delivered"] as? Int == count)
        #expect(done["claimed"] as? Int == 0 && done["staleClaims"] as? Int == 0)
        // Every purchase reached the wallet, each under one idempotency key (a grant in flight at the kill is sent
        // again under the same key).
        let keys = Set(wallet.requests.compactMap { $0.headers["idempotency-key"] })
        #expect(keys.count == count)
        #expect(try await CLI.iap(["ledger", "check"] + ledger).status == 0)
    }

    @Test func aMissingDatabaseLedgerIsRefusedByTheReadingCommands() async throws {
        let ledger = [
            "--database", try PostgresTestServer.requireURL(), "--schema",
            "t_missing_" + String(UInt32.random(in: 0...UInt32.max)),
        ]
        for command in [["stats"], ["check"], ["export"], ["history", "--user", "u"]] {
            let run = try await CommandLineContractTests.iap(["ledger"] + command + ledger)
            #expect(run.status == 1)
            #expect(run.stderrLines.last?.hasPrefix("error: notFound: ") == true, "\(command): \(run.stderr)")
        }
        let both = try await CommandLineContractTests.iap(["ledger", "stats", "--data", "/tmp/x"] + ledger)
        #expect(both.status == 2)
    }
}
