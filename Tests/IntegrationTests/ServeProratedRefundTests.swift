import Foundation
import IAPCore
import IAPTestSupport
import Testing

/// `iap serve --prorated-refunds`: a prorated refund is decided when the App Store's notification is processed, and
/// a restart under the other policy leaves that decision as it was (it decides new refunds only).
@Suite("iap serve: a prorated refund is decided once")
struct ServeProratedRefundTests {
    /// Whether alice has access to `premium`, as the server's entitlements endpoint says.
    static func hasPremium(_ server: ServeProcess) async throws -> Bool {
        let answer = try await server.send("GET", "/iap/v1/users/alice/entitlements", bearer: ServeProcess.serviceToken)
        try #require(answer.status == 200)
        let listing = try ServeCommandTests.object(answer)
        let granted = (listing["entitlements"] as? [[String: Any]] ?? []).filter { $0["hasAccess"] as? Bool == true }
        return granted.contains { $0["productId"] as? String == "premium" }
    }

    /// Whether the server's history of alice shows `transactionId` refunded.
    static func isRefunded(_ transactionId: String, _ server: ServeProcess) async throws -> Bool {
        let answer = try await server.send("GET", "/iap/v1/users/alice/history", bearer: ServeProcess.serviceToken)
        let items = try ServeCommandTests.object(answer)["items"] as? [[String: Any]] ?? []
        return items.contains { $0["transactionId"] as? String == transactionId && $0["revokedAt"] != nil }
    }

    @Test(arguments: ["keep-access", "revoke-access"])
    func aRefundProcessedUnderOnePolicyKeepsItsOutcomeAfterARestartUnderTheOther(policy: String) async throws {
        let port = try ServeProcess.freePort()
        let emulator = try await EmulatorProcess.start(
            extraArguments: ["--notify-url", "http://127.0.0.1:\(port)/iap/v1/notifications"]
        )
        defer { emulator.stop() }
        let root = try await emulator.saveRootCertificate()
        let base =
            [
                "--port", String(port), "--data", emulator.directory.appending(path: "ledger").path, "--catalog",
                try emulator.saveCatalog().path, "--ledger-only",
            ] + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
        var server = try await ServeProcess.start(base + ["--prorated-refunds", policy], directory: emulator.directory)
        defer { server.stop() }
        let premium = try await emulator.purchase("premium", account: "alice", token: UUID().uuidString.lowercased())
        let submitted = try await server.submitUntilFinished(premium.signedTransaction, as: "alice")
        #expect(submitted.status == 200, "\(String(decoding: submitted.body, as: UTF8.self))")
        #expect(try await Self.hasPremium(server))

        // A refund of 40 %, notified to the server and processed under `policy`.
        let refund = try await emulator.post(
            "/emulator/v1/transactions/\(premium.transactionId)/refund",
            json: #"{"reason": 0, "percentage": 40000}"#
        )
        #expect(refund.status == 200, "\(String(decoding: refund.body, as: UTF8.self))")
        let kept = policy == "keep-access"
        #expect(
            try await eventually(30) { try await Self.isRefunded(premium.transactionId, server) },
            "\((try? server.standardError()) ?? "")"
        )
        #expect(try await Self.hasPremium(server) == kept)

        // Restarted under the other policy: the refund keeps the outcome it was given.
        server.stop()
        let other = kept ? "revoke-access" : "keep-access"
        server = try await ServeProcess.start(base + ["--prorated-refunds", other], directory: emulator.directory)
        #expect(try await Self.hasPremium(server) == kept)
        server.stop()
        let history = try await CommandLineContractTests.iap([
            "ledger", "check", "--data", emulator.directory.appending(path: "ledger").path,
        ])
        #expect(history.status == 0, "\(history.stderr)")
        #expect(!history.stderr.contains("prorated refund"), "\(history.stderr)")
    }
}
