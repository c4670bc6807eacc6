import Foundation
import IAPCore
import Testing

/// `iap reconcile` end to end, as cron runs it: the tool against `iap emulate`, over a file ledger that missed a
/// purchase and a renewal notification.
@Suite("iap reconcile")
struct ReconcileCommandTests {
    typealias CLI = CommandLineContractTests

    /// An emulator with a billing grace period, its root on disk, and a ledger with alice's premium and subscription.
    struct Night {
        static let token = "3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c"

        let emulator: EmulatorProcess
        let root: URL
        let data: URL
        let catalog: URL

        init() async throws {
            emulator = try await EmulatorProcess.start(extraArguments: ["--grace-period-days", "16"])
            root = try await emulator.saveRootCertificate()
            data = emulator.directory.appending(path: "ledger")
            catalog = try emulator.saveCatalog()
        }

        /// Buys for alice and records the purchase in the ledger, as her app's submission would.
        @discardableResult
        func buyAndIngest(_ productId: String) async throws -> EmulatorProcess.Purchase {
            let purchase = try await emulator.purchase(productId, account: "alice", token: Self.token)
            let run = try await CLI.iap(
                [
                    "ledger", "ingest", "--data", data.path, "--catalog", catalog.path, "--root", root.path,
                    "--bundle-id", EmulatorProcess.bundleId, "--environment", "Sandbox", "--app-apple-id",
                    String(EmulatorProcess.appAppleId), "--user", "alice", "--ledger-only",
                ],
                input: Data((purchase.signedTransaction + "\n").utf8)
            )
            #expect(run.status == 0, "\(run.stderr)")
            return purchase
        }

        func reconcile(_ arguments: [String], root: URL?? = .none) async throws -> CLI.Run {
            try await CLI.iap(
                ["reconcile", "--data", data.path] + arguments
                    + emulator.commandOptions(urlOption: "--api-url", root: root ?? self.root)
            )
        }

        /// alice's pro.monthly at the emulator's time: its state and whether it gives access.
        func pro() async throws -> (state: String?, hasAccess: Bool?) {
            let clock = try CLI.json(String(decoding: try await emulator.get("/emulator/v1/clock").body, as: UTF8.self))
            let now = try #require(clock["now"] as? Int)
            let run = try await CLI.iap([
                "ledger", "entitlements", "--data", data.path, "--user", "alice", "--at", String(now), "--json",
            ])
            #expect(run.status == 0, "\(run.stderr)")
            let entitlements = try CLI.json(run.stdout)["entitlements"] as? [[String: Any]] ?? []
            let pro = entitlements.first { $0["productId"] as? String == "pro.monthly" }
            return (pro?["state"] as? String, pro?["hasAccess"] as? Bool)
        }
    }

    static let summaryKeys: Set<String> = [
        "families", "transactions", "deliveredNow", "takenBackNow", "renewalInfosUpdated", "failed", "alarms",
    ]

    @Test func aNightlyRunRepairsALostOrderAndALostDidFailToRenewAndASecondRunFindsNothing() async throws {
        let night = try await Night()
        defer { night.emulator.stop() }
        try await night.buyAndIngest("premium")
        let pro = try await night.buyAndIngest("pro.monthly")
        let lost = try await night.emulator.purchase("coins.100", account: "alice", token: Night.token)
        // alice's card fails at her renewal; the server hears nothing (no notification URL).
        #expect(try await night.emulator.subscription(pro.originalTransactionId, "fail-billing") == 200)
        #expect(try await night.emulator.subscription(pro.originalTransactionId, "renew") == 200)
        #expect(try await night.pro().hasAccess == false)

        let events = night.emulator.directory.appending(path: "events.jsonl")
        let first = try await night.reconcile(["--all", "--ledger-only", "--json", "--events", events.path])

        #expect(first.status == 0, "\(first.stderr)")
        let summary = try CLI.json(first.stdout)
        #expect(Set(summary.keys) == Self.summaryKeys)
        #expect(summary["families"] as? Int == 2)
        #expect(summary["transactions"] as? Int == 3)
        #expect(summary["deliveredNow"] as? Int == 1)
        #expect(summary["takenBackNow"] as? Int == 0)
        #expect(summary["renewalInfosUpdated"] as? Int == 1)
        #expect(summary["failed"] as? Int == 0)
        #expect(summary["alarms"] as? Int == 1)
        // Progress and the alarm go to standard error; the alarm names each thing the ledger had missed.
        #expect(first.stderrLines.contains("reconcile: counting the ledger's purchase families"))
        #expect(first.stderrLines.contains("reconcile: 2/2 purchase families"))
        let alarms = first.stderrLines.filter { $0.hasPrefix("ALARM: ") }
        #expect(alarms.count == 2)
        #expect(alarms.contains { $0.contains("\(lost.transactionId) (coins.100 of alice) was not in the ledger") })
        #expect(alarms.contains { $0.contains("subscription \(pro.originalTransactionId) (pro.monthly of alice)") })
        // The subscriber keeps her access in the grace period.
        let repaired = try await night.pro()
        #expect(repaired.state == "gracePeriod")
        #expect(repaired.hasAccess == true)

        // The event file: one JSON object per line, with the documented keys only, private.
        let lines = try String(contentsOf: events, encoding: .utf8).split(separator: "\n")
        let allowed: Set<String> = [
            "time", "event", "userId", "productId", "transactionId", "originalTransactionId", "environment",
            "outcome", "errorCode", "durationMs",
        ]
        let objects = try lines.map { try CLI.json(String($0)) }
        #expect(objects.allSatisfy { Set($0.keys).isSubset(of: allowed) && $0["time"] is Int })
        #expect(objects.contains { $0["event"] as? String == "reconciliation.customer" && $0["durationMs"] is Int })
        #expect(
            objects.contains {
                $0["event"] as? String == "reconciliation.discrepancy"
                    && $0["transactionId"] as? String == lost.transactionId
                    && $0["outcome"] as? String == "delivered"
            }
        )
        let mode = try FileManager.default.attributesOfItem(atPath: events.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // The next night finds the ledger right: nothing repaired, no alarm.
        let second = try await night.reconcile(["--all", "--ledger-only", "--json"])
        #expect(second.status == 0, "\(second.stderr)")
        let again = try CLI.json(second.stdout)
        #expect(again["deliveredNow"] as? Int == 0)
        #expect(again["renewalInfosUpdated"] as? Int == 0)
        #expect(again["alarms"] as? Int == 0)
        #expect(!second.stderrLines.contains { $0.hasPrefix("ALARM") })

        // One customer, in text.
        let user = try await night.reconcile(["--user", "alice", "--ledger-only"])
        #expect(user.status == 0, "\(user.stderr)")
        #expect(user.stdoutLines.count == 1)
        #expect(user.stdoutLines.first?.hasPrefix("3 purchase families, ") == true)
        #expect(user.stdoutLines.first?.hasSuffix("0 failed, 0 alarms") == true)

        // Hourly: the statuses of the live subscriptions only.
        let hourly = try await night.reconcile(["--subscriptions", "--ledger-only", "--json"])
        #expect(hourly.status == 0, "\(hourly.stderr)")
        #expect(try CLI.json(hourly.stdout)["families"] as? Int == 1)
    }

    @Test func signedDataThatDoesNotVerifyFailsTheRun() async throws {
        let night = try await Night()
        defer { night.emulator.stop() }
        try await night.buyAndIngest("pro.monthly")

        let run = try await night.reconcile(["--user", "alice", "--ledger-only", "--json"], root: .some(nil))

        #expect(run.status == 1)
        let summary = try CLI.json(run.stdout)
        #expect((summary["failed"] as? Int ?? 0) > 0)
        #expect(run.stderrLines.contains { $0.contains("did not verify: untrustedRoot") })
    }

    @Test func usageErrorsExitTwoAndExplain() async throws {
        let night = try await Night()
        defer { night.emulator.stop() }
        try await night.buyAndIngest("premium")

        let noGrant = try await night.reconcile(["--all"])
        #expect(noGrant.status == 2)
        #expect(noGrant.stderr.contains("--grant-url URL --grant-secret-file FILE"))
        #expect(noGrant.stderr.contains("--ledger-only"))
        for scope in [[], ["--all", "--user", "alice"], ["--all", "--subscriptions"]] {
            let run = try await night.reconcile(scope + ["--ledger-only"])
            #expect(run.status == 2)
            #expect(run.stderr.contains("give exactly one of --user ID, --all or --subscriptions"))
        }
        let both = try await night.reconcile(["--all", "--ledger-only", "--grant-url", "http://127.0.0.1:9/x"])
        #expect(both.status == 2)
        let noLedger = try await CLI.iap(
            ["reconcile", "--all", "--ledger-only"] + night.emulator.commandOptions(urlOption: "--api-url", root: nil)
        )
        #expect(noLedger.status == 2)
        let production = try await CLI.iap(
            [
                "reconcile", "--data", night.data.path, "--all", "--ledger-only", "--issuer-id", "I", "--key-id", "K",
                "--auth-key", "/nonexistent.p8", "--bundle-id", "com.example.app",
            ]
        )
        #expect(production.status == 2)
    }
}
