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

    @Test func twoProcessesIngestingTheSameInputAtOnceGrantEachPurchaseExactlyOnce() async throws {
        let url = try PostgresTestServer.requireURL()
        let schema = PostgresTestServer.freshSchema()
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-pg-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let root = directory.appending(path: "root.der").path
        let catalog = directory.appending(path: "catalog.json").path
        let input = directory.appending(path: "transactions.jws")
        // The wallet: a webhook receiver that checks every signature and keeps every idempotency key it was sent.
        let secret = "a-shared-secret-of-32-bytes-long"
        let secretFile = directory.appending(path: "grant-secret")
        let wallet = try LoopbackServer.wallet(secret: secret)
        defer { wallet.stop() }
        let count = 400
        let generated = try await CommandLineContractTests.iap([
            "testdata", "transactions", "--count", String(count), "--users", "20", "--root-out", root,
            "--catalog-out", catalog,
        ])
        #expect(generated.status == 0)
        try Data(generated.stdout.utf8).write(to: input)
        try Data((secret + "\n").utf8).write(to: secretFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile.path)

        let ledger = ["--database", url, "--schema", schema]
        let ingest =
            ["ledger", "ingest"] + ledger + [
                "--catalog", catalog, "--root", root, "--grant-url", wallet.url.appending(path: "iap").absoluteString,
                "--grant-secret-file", secretFile.path, "--token-is-user", input.path,
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
