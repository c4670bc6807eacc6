import Foundation
import IAPCore
import IAPStoragePostgres
import IAPTestSupport
import Testing

/// `iap reconcile --database`: the checkpoints live in the ledger's schema, where every instance of a fleet finds
/// them, and nothing is written beside the process.
@Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
struct ReconcileDatabaseCommandTests {
    typealias CLI = CommandLineContractTests

    @Test func aDatabaseLedgerKeepsItsCheckpointsInItsSchema() async throws {
        let night = try await ReconcileCommandTests.Night()
        defer { night.emulator.stop() }
        let schema = PostgresTestServer.freshSchema()
        let ledger = ["--database", try PostgresTestServer.requireURL(), "--schema", schema]
        let bought = try await night.emulator.purchase(
            "premium",
            account: "alice",
            token: ReconcileCommandTests.Night.token
        )
        let ingest = try await CLI.iap(
            ["ledger", "ingest"] + ledger + [
                "--catalog", night.catalog.path, "--root", night.root.path, "--bundle-id",
                EmulatorProcess.bundleId, "--environment", "Sandbox", "--app-apple-id",
                String(EmulatorProcess.appAppleId), "--user", "alice", "--ledger-only",
            ],
            input: Data((bought.signedTransaction + "\n").utf8)
        )
        #expect(ingest.status == 0, "\(ingest.stderr)")
        // A purchase the server never heard of.
        let lost = try await night.emulator.purchase(
            "coins.100",
            account: "alice",
            token: ReconcileCommandTests.Night.token
        )

        func reconcile() async throws -> CLI.Run {
            try await CLI.iap(
                ["reconcile"] + ledger + ["--user", "alice", "--ledger-only", "--json"]
                    + night.emulator.commandOptions(urlOption: "--api-url", root: night.root)
            )
        }
        func checkpoints() throws -> [String] {
            try PostgresTestServer.sql(
                """
                SELECT customer_key || ' ' || (history_revision IS NOT NULL)::text || ' ' || reconciled_at::text
                FROM \(schema).iap_reconciliation_checkpoints
                """
            )
        }
        let first = try await reconcile()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try CLI.json(first.stdout)["deliveredNow"] as? Int == 1)
        #expect(first.stderrLines.contains { $0.contains(lost.transactionId) && $0.hasPrefix("ALARM: ") })
        #expect(!first.stderr.contains("no --checkpoints"), "\(first.stderr)")
        let saved = try checkpoints()
        #expect(saved.count == 1)
        #expect(saved.first?.contains(" true ") == true, "\(saved)")

        // The next run (on any instance) starts from that checkpoint, finds nothing, and moves it forward.
        let second = try await reconcile()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try CLI.json(second.stdout)["deliveredNow"] as? Int == 0)
        let moved = try checkpoints()
        #expect(moved.count == 1)
        let before = Int64(saved.first?.split(separator: " ").last ?? "") ?? .max
        let after = Int64(moved.first?.split(separator: " ").last ?? "") ?? .min
        #expect(after >= before)
        try await PostgresTestServer.store(schema: schema).dropSchema()
    }
}
