import Foundation
import IAPCore
import Testing

/// `iap support lookup-order` end to end: the tool against `iap emulate`, as a support agent runs it.
@Suite("iap support lookup-order")
struct SupportCommandTests {
    typealias CLI = CommandLineContractTests

    /// An emulator, its root certificate on disk, and a ledger in which alice's first purchase is recorded.
    struct Desk {
        let emulator: EmulatorProcess
        let root: URL
        let data: URL

        init() async throws {
            emulator = try EmulatorProcess()
            root = emulator.directory.appending(path: "root.der")
            try await emulator.get("/emulator/v1/root-certificate").body.write(to: root)
            data = emulator.directory.appending(path: "ledger")
        }

        var connection: [String] {
            [
                "--issuer-id", EmulatorProcess.issuerId, "--key-id", EmulatorProcess.keyId, "--auth-key",
                emulator.directory.appending(path: "AuthKey_\(EmulatorProcess.keyId).p8").path, "--bundle-id",
                EmulatorProcess.bundleId, "--environment", "Sandbox", "--base-url", emulator.baseURL.absoluteString,
                "--root", root.path, "--app-apple-id", String(EmulatorProcess.appAppleId),
            ]
        }

        /// Buys a product for a customer whose app account token is `token`.
        func buy(_ productId: String, token: String) async throws -> EmulatorProcess.Purchase {
            let response = try await emulator.post(
                "/emulator/v1/purchases",
                json: #"{"productId":"\#(productId)","account":"alice","appAccountToken":"\#(token)"}"#
            )
            #expect(response.status == 200)
            return try JSONDecoder().decode(EmulatorProcess.Purchase.self, from: response.body)
        }

        /// Records a purchase in the ledger for a user, as `iap ledger ingest` does.
        func ingest(_ purchase: EmulatorProcess.Purchase, user: String) throws {
            let run = try CLI.iap(
                [
                    "ledger", "ingest", "--data", data.path, "--root", root.path, "--bundle-id",
                    EmulatorProcess.bundleId, "--environment", "Sandbox", "--app-apple-id",
                    String(EmulatorProcess.appAppleId), "--user", user,
                ],
                input: Data((purchase.signedTransaction + "\n").utf8)
            )
            #expect(run.status == 0, "\(run.stderr)")
        }

        func support(_ arguments: [String]) throws -> CLI.Run {
            try CLI.iap(["support", "lookup-order"] + arguments + connection)
        }
    }

    @Test func aLostOrderIsShownWithItsOwnerAndRedeliveredOnceWithAnAuditTrail() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        let token = "7e3fb20b-4cdb-47cc-936d-99d65866a1d5"
        try desk.ingest(try await desk.buy("premium", token: token), user: "alice")
        let lost = try await desk.buy("coins.100", token: token)
        let orderId = try #require(lost.orderId)

        let table = try desk.support([orderId, "--data", desk.data.path])
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

        let json = try desk.support([orderId, "--data", desk.data.path, "--json"])
        #expect(json.status == 0)
        let report = try CLI.json(json.stdout)
        let item = try #require((report["transactions"] as? [[String: Any]])?.first)
        #expect(report["found"] as? Bool == true)
        #expect(item["owner"] as? String == "alice")
        #expect(item["ownerSource"] as? String == "appAccountToken")
        #expect(item["delivered"] as? Bool == false)
        // Looking changes nothing, not even the audit log.
        #expect(!FileManager.default.fileExists(atPath: desk.data.appending(path: "support-audit.jsonl").path))

        let redeliver = [orderId, "--data", desk.data.path, "--json", "--redeliver", "--operator", "agent-7"]
        let first = try desk.support(redeliver)
        #expect(first.status == 0, "\(first.stderr)")
        let firstItem = try #require((try CLI.json(first.stdout)["transactions"] as? [[String: Any]])?.first)
        #expect(firstItem["redelivery"] as? String == "delivered")
        #expect(firstItem["delivered"] as? Bool == true)
        let second = try desk.support(redeliver)
        #expect(second.status == 0, "\(second.stderr)")
        let secondItem = try #require((try CLI.json(second.stdout)["transactions"] as? [[String: Any]])?.first)
        #expect(secondItem["redelivery"] as? String == "alreadyDelivered")

        let audit = try String(contentsOf: desk.data.appending(path: "support-audit.jsonl"), encoding: .utf8)
        let lines = audit.split(separator: "\n").map { try? CLI.json(String($0)) }
        #expect(
            lines.map { $0?["action"] as? String } == [
                "redeliver.requested", "redeliver.completed", "redeliver.requested", "redeliver.completed",
            ]
        )
        #expect(lines.allSatisfy { $0?["actor"] as? String == "agent-7" && $0?["orderId"] as? String == orderId })

        let history = try CLI.iap(["ledger", "history", "--data", desk.data.path, "--user", "alice", "--json"])
        #expect(history.status == 0)
        #expect(history.stdout.contains(lost.transactionId))
    }

    @Test func anUnknownOrderExitsOneAndBadUsageExitsTwo() async throws {
        let desk = try await Desk()
        defer { desk.emulator.stop() }
        try desk.ingest(try await desk.buy("premium", token: "7e3fb20b-4cdb-47cc-936d-99d65866a1d5"), user: "alice")

        let unknown = try desk.support(["NOSUCHORDER", "--data", desk.data.path, "--json"])
        #expect(unknown.status == 1)
        #expect(try CLI.json(unknown.stdout)["found"] as? Bool == false)
        #expect(unknown.stderrLines.last?.hasPrefix("error: notFound: ") == true)

        let noLedger = try desk.support(["MK5TTTVWJH"])
        #expect(noLedger.status == 2)
        #expect(
            noLedger.stderrLines == [
                "error: usage: one of --data DIR or --database URL is required (see iap support lookup-order --help)"
            ]
        )
        let stray = try desk.support(["MK5TTTVWJH", "--data", desk.data.path, "--operator", "x"])
        #expect(stray.status == 2)
        let twoIds = try desk.support(["A", "B", "--data", desk.data.path])
        #expect(twoIds.status == 2)
        let missing = try desk.support(["MK5TTTVWJH", "--data", desk.emulator.directory.appending(path: "nope").path])
        #expect(missing.status == 1)
        #expect(missing.stderrLines.first?.hasPrefix("error: notFound: ") == true)
    }
}
