import Foundation
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTestSupport
import Testing

/// `iap support lookup-order` end to end: the tool against `iap emulate` (in Production, where Look Up Order ID
/// exists), as a support agent runs it.
@Suite("iap support lookup-order")
struct SupportCommandTests {
    typealias CLI = CommandLineContractTests

    /// An emulator, its root certificate on disk, and a ledger directory.
    struct Desk {
        let emulator: EmulatorProcess
        let root: URL
        let data: URL
        /// The products, saved with the ledger by the first ingest.
        let catalog: URL

        init() async throws {
            emulator = try await EmulatorProcess.start(environment: .production)
            root = try await emulator.saveRootCertificate()
            data = emulator.directory.appending(path: "ledger")
            catalog = try emulator.saveCatalog()
        }

        /// Buys a product for a customer whose app account token is `token`.
        func buy(_ productId: String, token: String) async throws -> EmulatorProcess.Purchase {
            try await emulator.purchase(productId, account: "alice", token: token)
        }

        /// Records a purchase in the ledger for a user, as `iap ledger ingest` does: the file ledger with the
        /// catalog, or the ledger `ledger` names (`--database URL --schema S`).
        func ingest(_ purchase: EmulatorProcess.Purchase, user: String, ledger: [String]? = nil) async throws {
            let run = try await CLI.iap(
                ["ledger", "ingest"] + (ledger ?? ["--data", data.path, "--catalog", catalog.path]) + [
                    "--root", root.path, "--bundle-id", EmulatorProcess.bundleId, "--environment", "Production",
                    "--app-apple-id", String(EmulatorProcess.appAppleId), "--user", user, "--ledger-only",
                ],
                input: Data((purchase.signedTransaction + "\n").utf8)
            )
            #expect(run.status == 0, "\(run.stderr)")
        }

        func support(_ arguments: [String], root: URL?? = .none) async throws -> CLI.Run {
            try await CLI.iap(
                ["support", "lookup-order"] + arguments + emulator.commandOptions(root: root ?? self.root)
            )
        }

        /// A fresh PostgreSQL ledger (its options and schema, which the caller drops) holding alice's purchase of
        /// premium, and the purchase's order id.
        func postgresLedgerWithAnOrder() async throws -> (ledger: [String], schema: String, orderId: String) {
            let url = try PostgresTestServer.requireURL()
            let schema = PostgresTestServer.freshSchema()
            let purchase = try await buy("premium", token: "7e3fb20b-4cdb-47cc-936d-99d65866a1d5")
            let ledger = ["--database", url, "--schema", schema]
            try await ingest(purchase, user: "alice", ledger: ledger)
            return (ledger, schema, try #require(purchase.orderId))
        }

        /// The audit's entries, one JSON object a line.
        func audit(_ path: URL? = nil) throws -> [[String: Any]] {
            let text = try String(contentsOf: path ?? data.appending(path: "support-audit.jsonl"), encoding: .utf8)
            return try text.split(separator: "\n").map { try CLI.json(String($0)) }
        }
    }

    @Test func aLostOrderIsShownWithItsOwnerAndRedeliveredOnceWithAnAuditTrail() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        let token = "7e3fb20b-4cdb-47cc-936d-99d65866a1d5"
        try await desk.ingest(try await desk.buy("premium", token: token), user: "alice")
        let lost = try await desk.buy("coins.100", token: token)
        let orderId = try #require(lost.orderId)

        let table = try await desk.support([orderId, "--data", desk.data.path])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdoutLines.first == "order \(orderId): 1 transaction")
        let row = try #require(table.stdoutLines.last)
        #expect(row.hasPrefix(lost.transactionId))
        #expect(row.contains("coins.100") && row.contains("active") && row.contains("alice (token)"))
        #expect(row.contains("no (not in ledger)"))
        // Dates for people: ISO 8601, UTC, to the second.
        let purchased = try #require(row.split(separator: " ").first { $0.contains("T") && $0.hasSuffix("Z") })
        #expect(purchased.count == "2026-01-01T00:00:05Z".count)
        #expect((try? Date.ISO8601FormatStyle().parse(String(purchased))) != nil)

        let json = try await desk.support([orderId, "--data", desk.data.path, "--json"])
        #expect(json.status == 0)
        let report = try CLI.json(json.stdout)
        let item = try #require((report["transactions"] as? [[String: Any]])?.first)
        #expect(report["found"] as? Bool == true)
        #expect(item["owner"] as? String == "alice")
        #expect(item["ownerSource"] as? String == "appAccountToken")
        #expect(item["delivered"] as? Bool == false)
        // Looking changes nothing in the ledger, and each look is audited: who asked (the OS user by default).
        #expect(try desk.audit().map { $0["action"] as? String } == ["lookup", "lookup"])
        #expect(try desk.audit().allSatisfy { $0["actor"] as? String == SupportAuditChain.osUser })

        let redeliver = [
            orderId, "--data", desk.data.path, "--json", "--redeliver", "--operator", "agent-7", "--ledger-only",
        ]
        let first = try await desk.support(redeliver)
        #expect(first.status == 0, "\(first.stderr)")
        let firstItem = try #require((try CLI.json(first.stdout)["transactions"] as? [[String: Any]])?.first)
        #expect(firstItem["redelivery"] as? String == "delivered")
        #expect(firstItem["delivered"] as? Bool == true)
        let second = try await desk.support(redeliver)
        #expect(second.status == 0, "\(second.stderr)")
        let secondItem = try #require((try CLI.json(second.stdout)["transactions"] as? [[String: Any]])?.first)
        #expect(secondItem["redelivery"] as? String == "alreadyDelivered")

        let lines = Array(try desk.audit().dropFirst(2))
        #expect(
            lines.map { $0["action"] as? String } == [
                "redeliver.requested", "redeliver.completed", "redeliver.requested", "redeliver.completed",
            ]
        )
        #expect(lines.allSatisfy { $0["actor"] as? String == "agent-7" && $0["orderId"] as? String == orderId })
        // The audit entry says what was granted, to whom, and through which path.
        #expect(lines.allSatisfy { $0["fulfillment"] as? String == "ledger-only" })
        let granted = try #require((lines[1]["outcomes"] as? [[String: Any]])?.first)
        #expect(granted["productId"] as? String == "coins.100")
        #expect(granted["units"] as? Int == 100)
        #expect(granted["userId"] as? String == "alice")
        // The operator named on the command line and the OS user the tool ran as, both in every entry.
        #expect(lines.allSatisfy { $0["osUser"] as? String == SupportAuditChain.osUser })
        #expect(try desk.audit().map { $0["sequence"] as? Int } == [1, 2, 3, 4, 5, 6])
        let verified = try await CLI.iap(["support", "audit", "verify", desk.data.path])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdoutLines.first?.hasPrefix("ok: 6 entries, head ") == true)

        let history = try await CLI.iap(["ledger", "history", "--data", desk.data.path, "--user", "alice", "--json"])
        #expect(history.status == 0)
        #expect(history.stdout.contains(lost.transactionId))
    }

    @Test func aRedeliveryThroughTheWebhookIsReceivedOncePerKeyWithAValidSignature() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        let secret = "another-shared-secret-32-bytes!!"
        let secretFile = desk.emulator.directory.appending(path: "grant-secret")
        try Data((secret + "\n").utf8).write(to: secretFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile.path)
        let wallet = try LoopbackServer.wallet(secret: secret, path: "/iap/deliveries")
        defer { wallet.stop() }
        let token = "5d0a3c1e-2b4f-4e6a-8c7d-9e0f1a2b3c4d"
        try await desk.ingest(try await desk.buy("premium", token: token), user: "alice")
        let lost = try await desk.buy("coins.100", token: token)
        let grant = [
            "--grant-url", wallet.url.appending(path: "iap/deliveries").absoluteString, "--grant-secret-file",
            secretFile.path,
        ]

        for _ in 0..<2 {
            let run = try await desk.support(
                [try #require(lost.orderId), "--data", desk.data.path, "--redeliver"] + grant
            )
            #expect(run.status == 0, "\(run.stderr)")
        }

        // One POST for one key, signed with the secret (the file's trailing newline is not part of it).
        #expect(wallet.requests.count == 1)
        let request = try #require(wallet.requests.first)
        #expect(request.headers["idempotency-key"] == lost.transactionId)
        let body = try CLI.json(String(decoding: request.body, as: UTF8.self))
        #expect(body["type"] as? String == "grant")
        #expect(body["userId"] as? String == "alice")
        #expect(body["productId"] as? String == "coins.100")
        #expect(body["units"] as? Int == 100)
        #expect(body["environment"] as? String == "Production")
        let header = try #require(request.headers["x-iap-signature"])
        #expect(header.range(of: #"^t=[0-9]+,v1=[0-9a-f]{64}$"#, options: .regularExpression) != nil)
        #expect(try desk.audit().last?["fulfillment"] as? String == "webhook 127.0.0.1")
    }

    @Test func anOrderWaitingForItsOwnerGoesToTheUserSupportNames() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        try await desk.ingest(try await desk.buy("premium", token: "0b9e7a5c-3d1f-4a2b-9c8d-7e6f5a4b3c2d"), user: "bob")
        // Bought without an appAccountToken: nobody can be named as its owner from the order alone.
        let orphan = try await desk.emulator.purchase("coins.100", account: "carol")
        let orderId = try #require(orphan.orderId)

        // Looked up and audited, left waiting for its owner, said so: not a failure.
        let waiting = try await desk.support([orderId, "--data", desk.data.path, "--redeliver", "--ledger-only"])
        #expect(waiting.status == 0, "\(waiting.stderr)")
        #expect(waiting.stderrLines.contains { $0.contains("waits for its owner") && $0.contains("--user") })

        let named = try await desk.support([
            orderId, "--data", desk.data.path, "--redeliver", "--ledger-only", "--user", "carol",
        ])
        #expect(named.status == 0, "\(named.stderr)")
        let history = try await CLI.iap(["ledger", "history", "--data", desk.data.path, "--user", "carol", "--json"])
        #expect(history.stdout.contains(orphan.transactionId))
        #expect(try desk.audit().last?["userId"] as? String == "carol")
    }

    @Test func anOrderWhoseTokenNobodyClaimedWaitsForItsOwnerAndIsNeverGivenToTheToken() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        // The ledger exists (bob's purchase) and knows the catalog.
        try await desk.ingest(
            try await desk.buy("coins.100", token: "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"),
            user: "bob"
        )
        let token = "5d2c1b0a-9f8e-4d7c-8b6a-5f4e3d2c1b0a"
        let bought = try await desk.buy("premium", token: token)
        let orderId = try #require(bought.orderId)

        let run = try await desk.support([orderId, "--data", desk.data.path, "--redeliver", "--ledger-only", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderrLines.contains { $0.hasPrefix("note: \(bought.transactionId) waits for its owner") })
        let item = try #require((try CLI.json(run.stdout)["transactions"] as? [[String: Any]])?.first)
        #expect(item["redelivery"] as? String == "awaitingOwner")
        #expect(try desk.audit().contains { ($0["action"] as? String)?.hasPrefix("redeliver") == true })
        let export = try await CLI.iap(["ledger", "export", "--data", desk.data.path])
        let entry = try CLI.json(try #require(export.stdoutLines.first { $0.contains(bought.transactionId) }))
        #expect(entry["deliveryState"] as? String == "awaitingOwner")
        #expect(entry["userId"] as? String != "dave")
        // A ledger with an entry waiting for its owner is whole.
        let check = try await CLI.iap(["ledger", "check", "--data", desk.data.path])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")

        // The real buyer's later submission gets it: it was never given to a pseudo-user named after the token.
        try await desk.ingest(bought, user: "dave")
        let history = try await CLI.iap(["ledger", "history", "--data", desk.data.path, "--user", "dave", "--json"])
        #expect(history.stdout.contains(bought.transactionId))
        let stats = try CLI.json(try await CLI.iap(["ledger", "stats", "--data", desk.data.path, "--json"]).stdout)
        // bob and dave: an entry waiting for its owner is nobody's.
        #expect(stats["users"] as? Int == 2)
    }

    @Test func signedDataThatDoesNotVerifyExitsOne() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        try await desk.ingest(
            try await desk.buy("premium", token: "7e3fb20b-4cdb-47cc-936d-99d65866a1d5"),
            user: "alice"
        )
        let order = try await desk.buy("coins.100", token: "7e3fb20b-4cdb-47cc-936d-99d65866a1d5")

        // Without --root the emulator's signatures chain to no Apple root.
        let run = try await desk.support([try #require(order.orderId), "--data", desk.data.path], root: .some(nil))
        #expect(run.status == 1)
        #expect(run.stdoutLines.contains { $0.hasPrefix("rejected: untrustedRoot") })
        #expect(run.stderrLines.contains { $0.contains("untrustedRoot") })
    }

    @Test func anUnknownOrderExitsOneAndBadUsageExitsTwo() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        try await desk.ingest(
            try await desk.buy("premium", token: "7e3fb20b-4cdb-47cc-936d-99d65866a1d5"),
            user: "alice"
        )

        let unknown = try await desk.support(["NOSUCHORDER", "--data", desk.data.path, "--json"])
        #expect(unknown.status == 1)
        #expect(try CLI.json(unknown.stdout)["found"] as? Bool == false)
        #expect(unknown.stderrLines.last?.hasPrefix("error: notFound: ") == true)

        let noLedger = try await desk.support(["MK5TTTVWJH"])
        #expect(noLedger.status == 2)
        #expect(
            noLedger.stderrLines == [
                "error: usage: one of --data DIR or --database URL is required (see iap support lookup-order --help)"
            ]
        )
        let stray = try await desk.support(["MK5TTTVWJH", "--data", desk.data.path, "--user", "x"])
        #expect(stray.status == 2)
        let strayGrant = try await desk.support(["MK5TTTVWJH", "--data", desk.data.path, "--ledger-only"])
        #expect(strayGrant.status == 2)
        let twoIds = try await desk.support(["A", "B", "--data", desk.data.path])
        #expect(twoIds.status == 2)
        // A redelivery must say how grants reach the customer.
        let noGrant = try await desk.support(["MK5TTTVWJH", "--data", desk.data.path, "--redeliver"])
        #expect(noGrant.status == 2)
        #expect(noGrant.stderr.contains("--grant-url URL --grant-secret-file FILE"))
        #expect(noGrant.stderr.contains("--ledger-only"))
        // Look Up Order ID exists in Production only.
        let sandbox = try await CLI.iap(
            ["support", "lookup-order", "MK5TTTVWJH", "--data", desk.data.path]
                + desk.emulator.commandOptions(root: desk.root).map { $0 == "Production" ? "Sandbox" : $0 }
        )
        #expect(sandbox.status == 2)
        #expect(sandbox.stderr.contains("exists in the Production App Store Server API only"))
        let missing = try await desk.support([
            "MK5TTTVWJH", "--data", desk.emulator.directory.appending(path: "nope").path,
        ])
        #expect(missing.status == 1)
        #expect(missing.stderrLines.first?.hasPrefix("error: notFound: ") == true)
    }

    @Test func aLookupCanLeaveTheAuditOnlyWhenAskedByNameAndARedeliveryNever() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        let purchase = try await desk.buy("premium", token: "7e3fb20b-4cdb-47cc-936d-99d65866a1d5")
        try await desk.ingest(purchase, user: "alice")
        let orderId = try #require(purchase.orderId)

        let quiet = try await desk.support([orderId, "--data", desk.data.path, "--no-audit-lookups"])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(!FileManager.default.fileExists(atPath: desk.data.appending(path: "support-audit.jsonl").path))
        for conflicting in [["--redeliver"], ["--operator", "agent-7"], ["--audit", "x.jsonl"]] {
            let refused = try await desk.support(
                [orderId, "--data", desk.data.path, "--no-audit-lookups"] + conflicting
            )
            #expect(refused.status == 2, "\(conflicting)")
        }

        // --audit FILE: the entries go there, still anchored to this ledger.
        let elsewhere = desk.emulator.directory.appending(path: "desk-audit.jsonl")
        let audited = try await desk.support([
            orderId, "--data", desk.data.path, "--audit", elsewhere.path, "--operator", "agent-9",
        ])
        #expect(audited.status == 0, "\(audited.stderr)")
        #expect(try desk.audit(elsewhere).map { $0["actor"] as? String } == ["agent-9"])
        let permissions = try FileManager.default.attributesOfItem(atPath: elsewhere.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        let verified = try await CLI.iap([
            "support", "audit", "verify", "--data", desk.data.path, "--audit", elsewhere.path,
        ])
        #expect(verified.status == 0, "\(verified.stderr)")
        // Against the ledger's own (empty) audit, that file is another log.
        let mine = try await CLI.iap(["support", "audit", "verify", desk.data.path, "--json"])
        #expect(mine.status == 0)
        #expect(try CLI.json(mine.stdout)["entries"] as? Int == 0)
    }

    @Test func auditVerifyNamesTheBrokenEntryAndExitsOne() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        let purchase = try await desk.buy("premium", token: "7e3fb20b-4cdb-47cc-936d-99d65866a1d5")
        try await desk.ingest(purchase, user: "alice")
        let orderId = try #require(purchase.orderId)
        for _ in 0..<3 {
            await #expect(try desk.support([orderId, "--data", desk.data.path, "--operator", "agent-7"]).status == 0)
        }
        let path = desk.data.appending(path: "support-audit.jsonl")
        var lines = try String(contentsOf: path, encoding: .utf8).split(separator: "\n").map(String.init)
        lines[0] = lines[0].replacingOccurrences(of: "agent-7", with: "agent-0")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: path)

        let broken = try await CLI.iap(["support", "audit", "verify", desk.data.path])
        #expect(broken.status == 1)
        #expect(
            broken.stderrLines == [
                "error: storageCorrupted: entry 2 (line 2): does not follow the entry before it: that entry was "
                    + "edited, or entries between were removed or moved"
            ]
        )
        let json = try await CLI.iap(["support", "audit", "verify", "--data", desk.data.path, "--json"])
        #expect(json.status == 1)
        let document = try CLI.json(json.stdout)
        #expect(document["ok"] as? Bool == false)
        #expect(document["entries"] as? Int == 3)
        let problem = try #require((document["problems"] as? [[String: Any]])?.first)
        #expect(problem["entry"] as? Int == 2 && problem["location"] as? String == "line 2")

        // Emptied: the head still says 3.
        try Data().write(to: path)
        let emptied = try await CLI.iap(["support", "audit", "verify", desk.data.path])
        #expect(emptied.status == 1)
        #expect(emptied.stderrLines.first?.contains("head records 3: the log was emptied or deleted") == true)
        // And support stops writing to it until someone looks.
        let refused = try await desk.support([orderId, "--data", desk.data.path])
        #expect(refused.status == 1)
        #expect(refused.stderrLines.last?.hasPrefix("error: storageCorrupted: ") == true)

        let usage = try await CLI.iap(["support", "audit", "verify", desk.data.path, "--data", desk.data.path])
        #expect(usage.status == 2)
        let missing = try await CLI.iap([
            "support", "audit", "verify", desk.emulator.directory.appending(path: "nope").path,
        ])
        #expect(missing.status == 1)
        #expect(missing.stderrLines.first?.hasPrefix("error: notFound: ") == true)
    }

    /// Laundering the audit on disk: deleting its last entries with the head beside it, or the log and its head
    /// together, is caught by the head the ledger keeps, until an operator reseals it with a reason.
    @Test func anAuditCutOrDeletedWithItsHeadIsRefusedUntilResealed() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        let purchase = try await desk.buy("premium", token: "7e3fb20b-4cdb-47cc-936d-99d65866a1d5")
        try await desk.ingest(purchase, user: "alice")
        let orderId = try #require(purchase.orderId)
        func lookUp() async throws -> CLI.Run {
            try await desk.support([orderId, "--data", desk.data.path, "--operator", "agent-7"])
        }
        for _ in 0..<3 {
            await #expect(try lookUp().status == 0)
        }
        let intact = try await CLI.iap(["support", "audit", "verify", desk.data.path, "--json"])
        let head = try #require(try CLI.json(intact.stdout)["head"] as? String)
        #expect((try CLI.json(intact.stdout)["ledgerHead"] as? [String: Any])?["lastHash"] as? String == head)
        let path = desk.data.appending(path: "support-audit.jsonl")
        let headPath = desk.data.appending(path: "support-audit.jsonl.head")

        // The last entry and the head deleted: the log is intact as far as it goes, but short of the ledger's head.
        let lines = try String(contentsOf: path, encoding: .utf8).split(separator: "\n")
        try Data((lines.dropLast().joined(separator: "\n") + "\n").utf8).write(to: path)
        try FileManager.default.removeItem(at: headPath)
        let refused = try await lookUp()
        #expect(refused.status == 1)
        #expect(
            refused.stderrLines.last?.hasPrefix("error: storageCorrupted: support actions are refused: ") == true,
            "\(refused.stderr)"
        )
        #expect(refused.stderr.contains("iap support audit reseal"))
        #expect(!FileManager.default.fileExists(atPath: headPath.path))  // nothing was written
        let cut = try await CLI.iap(["support", "audit", "verify", desk.data.path])
        #expect(cut.status == 1)
        #expect(
            cut.stderrLines.contains(
                "error: storageCorrupted: the ledger records 3 entries with head \(head), the log holds 2: its last "
                    + "entries were removed"
            ),
            "\(cut.stderr)"
        )

        // A reseal needs a reason; it records what was found, and is itself the next entry.
        let noReason = try await CLI.iap(["support", "audit", "reseal", desk.data.path])
        #expect(noReason.status == 2)
        #expect(noReason.stderr.contains("--reason"))
        let help = try await CLI.iap(["support", "audit", "reseal", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--reason TEXT"))
        let events = desk.emulator.directory.appending(path: "reseal-events.jsonl")
        let resealed = try await CLI.iap([
            "support", "audit", "reseal", desk.data.path, "--operator", "ops-1", "--reason", "INC-7: disk restored",
            "--events", events.path,
        ])
        #expect(resealed.status == 0, "\(resealed.stderr)")
        #expect(resealed.stdoutLines.last?.hasPrefix("resealed: entry 3 (audit.reseal by ops-1)") == true)
        // The reseal is a support event, and carries the head after it.
        let event = try CLI.json(try String(contentsOf: events, encoding: .utf8).trimmingCharacters(in: .newlines))
        #expect(event["event"] as? String == "support.audit")
        #expect(event["outcome"] as? String == "resealed")
        let newHead = try #require(event["auditHead"] as? String)
        #expect(resealed.stdoutLines.last?.contains(newHead) == true)
        let verified = try await CLI.iap(["support", "audit", "verify", desk.data.path])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdoutLines.first?.hasPrefix("ok: 3 entries") == true)
        let reseal = try #require(try desk.audit().last)
        #expect(reseal["action"] as? String == "audit.reseal" && reseal["actor"] as? String == "ops-1")
        let found = try #require(reseal["reseal"] as? [String: Any])
        #expect(found["reason"] as? String == "INC-7: disk restored")
        #expect((found["ledgerHead"] as? [String: Any])?["entries"] as? Int == 3)
        #expect((found["ledgerHead"] as? [String: Any])?["lastHash"] as? String == head)
        #expect((found["logHead"] as? [String: Any])?["entries"] as? Int == 2)
        await #expect(try lookUp().status == 0)
        let again = try await CLI.iap(["support", "audit", "reseal", desk.data.path, "--reason", "nothing"])
        #expect(again.stdoutLines.first?.hasPrefix("ok: nothing to reseal") == true)

        // The log and its head both deleted: the ledger still says how many entries there were.
        let before = try #require(
            try CLI.json(try await CLI.iap(["support", "audit", "verify", desk.data.path, "--json"]).stdout)["head"]
                as? String
        )
        try FileManager.default.removeItem(at: path)
        try FileManager.default.removeItem(at: headPath)
        let deleted = try await CLI.iap(["support", "audit", "verify", desk.data.path])
        #expect(deleted.status == 1)
        #expect(
            deleted.stderrLines == [
                "error: storageCorrupted: the ledger records 4 entries with head \(before), the log holds 0: the log "
                    + "(and its head) was deleted or emptied"
            ]
        )
        await #expect(try lookUp().status == 1)
        let fresh = try await CLI.iap(["support", "audit", "reseal", desk.data.path, "--reason", "INC-8: log lost"])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        let restarted = try await CLI.iap(["support", "audit", "verify", desk.data.path])
        #expect(restarted.stdoutLines.first?.hasPrefix("ok: 1 entry,") == true, "\(restarted.stderr)")
    }

    @Test(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
    func onPostgreSQLAnAuditDeletedWithItsHeadIsRefusedUntilResealed() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        let (ledger, schema, orderId) = try await desk.postgresLedgerWithAnOrder()
        defer { _ = try? PostgresTestServer.sql("DROP SCHEMA \(schema) CASCADE") }
        for _ in 0..<3 {
            await #expect(try desk.support([orderId, "--operator", "agent-7"] + ledger).status == 0)
        }
        let intact = try await CLI.iap(["support", "audit", "verify", "--json"] + ledger)
        let head = try #require(try CLI.json(intact.stdout)["head"] as? String)

        // The last row and the head row deleted.
        try PostgresTestServer.sql("DELETE FROM \(schema).iap_support_audit WHERE sequence = 3")
        try PostgresTestServer.sql("DELETE FROM \(schema).iap_support_audit_head")
        let refused = try await desk.support([orderId, "--operator", "agent-7"] + ledger)
        #expect(refused.status == 1)
        #expect(refused.stderrLines.last?.hasPrefix("error: storageCorrupted: support actions are refused: ") == true)
        let cut = try await CLI.iap(["support", "audit", "verify"] + ledger)
        #expect(cut.status == 1)
        #expect(
            cut.stderrLines.contains(
                "error: storageCorrupted: the ledger records 3 entries with head \(head), the log holds 2: its last "
                    + "entries were removed"
            ),
            "\(cut.stderr)"
        )

        // Every row and the head row deleted.
        try PostgresTestServer.sql("DELETE FROM \(schema).iap_support_audit")
        let deleted = try await CLI.iap(["support", "audit", "verify"] + ledger)
        #expect(deleted.status == 1)
        #expect(
            deleted.stderrLines == [
                "error: storageCorrupted: the ledger records 3 entries with head \(head), the log holds 0: the log "
                    + "(and its head) was deleted or emptied"
            ]
        )
        await #expect(try desk.support([orderId, "--operator", "agent-7"] + ledger).status == 1)

        let resealed = try await CLI.iap(
            ["support", "audit", "reseal"] + ledger + ["--operator", "ops-1", "--reason", "INC-9: rows lost"]
        )
        #expect(resealed.status == 0, "\(resealed.stderr)")
        let verified = try await CLI.iap(["support", "audit", "verify"] + ledger)
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdoutLines.first?.hasPrefix("ok: 1 entry,") == true)
        let rows = try PostgresTestServer.sql("SELECT entry FROM \(schema).iap_support_audit ORDER BY sequence")
        #expect(rows.count == 1 && rows.first?.contains(#""action":"audit.reseal""#) == true)
        await #expect(try desk.support([orderId, "--operator", "agent-7"] + ledger).status == 0)
    }

    @Test(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
    func onPostgreSQLTheAuditIsATableOfTheLedgersSchema() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        let (ledger, schema, orderId) = try await desk.postgresLedgerWithAnOrder()
        defer { _ = try? PostgresTestServer.sql("DROP SCHEMA \(schema) CASCADE") }

        await #expect(try desk.support([orderId, "--operator", "agent-7"] + ledger).status == 0)
        await #expect(
            try desk.support([orderId, "--operator", "agent-8", "--redeliver", "--ledger-only"] + ledger).status == 0
        )
        let rows = try PostgresTestServer.sql("SELECT entry FROM \(schema).iap_support_audit ORDER BY sequence")
        #expect(rows.count == 3)
        #expect(rows.first?.contains(#""actor":"agent-7""#) == true)
        #expect(rows.allSatisfy { $0.contains(#""osUser":"\#(SupportAuditChain.osUser)""#) })
        let verified = try await CLI.iap([
            "support", "audit", "verify", try PostgresTestServer.requireURL(), "--schema", schema,
        ])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdoutLines.first?.hasPrefix("ok: 3 entries") == true)

        try PostgresTestServer.sql("DELETE FROM \(schema).iap_support_audit WHERE sequence = 2")
        let broken = try await CLI.iap(["support", "audit", "verify"] + ledger)
        #expect(broken.status == 1)
        #expect(broken.stderrLines.first?.hasPrefix("error: storageCorrupted: entry 2 (row 3): is numbered 3") == true)
    }
}
