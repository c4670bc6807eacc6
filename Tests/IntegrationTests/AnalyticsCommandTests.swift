import Foundation
import IAPCore
import IAPServerAPI
import IAPStorageFile
import IAPTestSupport
import Testing

/// `iap ledger analytics --json` and `GET /iap/v1/analytics` on one file ledger (the hand-computed ledger of
/// `AnalyticsLedger`): the same JSON, with the hand-computed figures.
@Suite("iap ledger analytics and GET /iap/v1/analytics")
struct AnalyticsCommandTests {
    typealias CLI = CommandLineContractTests

    /// A file ledger holding `AnalyticsLedger`, its renewal infos and its catalog.
    static func ledger() async throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-analytics-\(UUID().uuidString)")
        let site = try FileLedgerSite(directory: directory.appending(path: "ledger"), access: .create)
        for entry in AnalyticsLedger.entries {
            _ = try await site.store.insert(entry)
        }
        for info in AnalyticsLedger.renewalInfos.values {
            _ = try await site.store.storeRenewalInfo(info)
        }
        try await site.saveCatalog(try AnalyticsLedger.catalog.jsonRepresentation())
        await site.close()
        return directory
    }

    static func object(_ text: String) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary)
    }

    @Test func theCommandAndTheEndpointGiveTheSameHandComputedFigures() async throws {
        let directory = try await Self.ledger()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appending(path: "ledger").path
        let run = try await CLI.iap([
            "ledger", "analytics", "--data", data, "--from", "2026-06-01", "--to", "2026-07-01", "--interval", "week",
            "--json",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let printed = try Self.object(run.stdout)
        let totals = try #require(printed["totals"] as? [String: Any])
        let usd = (totals["revenue"] as? [String: Any])?["USD"] as? [String: Any]
        #expect(usd?["grossMilliunits"] as? Int == 689_680)
        #expect(usd?["refundedMilliunits"] as? Int == 19_960)
        #expect(usd?["netMilliunits"] as? Int == 669_720)
        #expect((totals["mrrMilliunits"] as? [String: Any])?["USD"] as? Int == 69_972)
        let subscriptions = try #require(totals["subscriptions"] as? [String: Int])
        #expect(
            subscriptions == [
                "active": 3, "new": 1, "trialsStarted": 0, "trialConversions": 1, "cancellations": 1, "churned": 1,
                "reactivations": 1,
            ]
        )
        #expect((printed["series"] as? [Any])?.count == 5)

        let server = try await ServeProcess.start(
            [
                "--port", "0", "--data", data, "--bundle-id", "com.example.app", "--environment", "Production",
                "--app-apple-id", "1234567890",
                "--ledger-only",
            ],
            directory: directory
        )
        defer { server.stop() }
        let answer = try await server.send(
            "GET",
            "/iap/v1/analytics?from=2026-06-01&to=2026-07-01&interval=week",
            bearer: ServeProcess.serviceToken
        )
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        #expect(try Self.object(String(decoding: answer.body, as: UTF8.self)) == printed)

        // The text form names the totals too.
        let text = try await CLI.iap([
            "ledger", "analytics", "--data", data, "--from", "2026-06-01", "--to", "2026-07-01", "--interval", "month",
        ])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdoutLines.contains { $0.hasPrefix("total  net EUR 0.000, USD 669.720  mrr USD 69.972") })

        // Refused: no service token, a bad range, a bad interval.
        #expect(try await server.send("GET", "/iap/v1/analytics?from=2026-06-01&to=2026-07-01").status == 401)
        for query in ["from=2026-07-01&to=2026-06-01", "from=2026-06-01&to=2026-07-01&interval=year", "to=2026-07-01"] {
            let refused = try await server.send("GET", "/iap/v1/analytics?\(query)", bearer: ServeProcess.serviceToken)
            #expect(refused.status == 400, "\(query)")
        }
    }

    @Test(arguments: [
        (["--from", "2026-07-01", "--to", "2026-06-01"], "--to must be after from"),
        (
            ["--from", "2026-06-01", "--to", "2026-07-01", "--interval", "year"],
            "--interval must be day, week or month"
        ),
        (["--from", "June", "--to", "2026-07-01"], "--from must be YYYY-MM-DD or RFC 3339"),
        (["--to", "2026-07-01"], "--from is required"),
        (["--from", "2026-06-01", "--to", "2026-07-01", "--environment", "Prod"], "--environment must be one of"),
    ])
    func aBadRequestIsAUsageError(arguments: [String], said: String) async throws {
        let directory = try await Self.ledger()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await CLI.iap(
            ["ledger", "analytics", "--data", directory.appending(path: "ledger").path] + arguments
        )
        #expect(run.status == 2)
        #expect(run.stderr.contains(said), "\(run.stderr)")
    }
}
