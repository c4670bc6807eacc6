import Foundation
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTestSupport
import IAPWebhook
import IAPTransportURLSession
import Testing

/// The sample webhook receivers of `Documentation/Receivers` against the real `iap serve`, and the sample derivations of
/// the appAccountToken against the Swift one.
@Suite("Sample webhook receivers and token derivations", .serialized)
struct WebhookSampleReceiverTests {
    typealias CLI = CommandLineContractTests

    @Test(.enabled(if: SampleReceiver.Language.python.interpreter != nil, "python3 is not installed"))
    func thePythonReceiverTakesBackOnlyWhatWasGranted() async throws {
        try await takesBackOnlyWhatWasGranted(.python)
    }

    @Test(
        .enabled(
            if: SampleReceiver.Language.node.interpreter != nil,
            "node is not installed (apt-get install nodejs): the Node receiver is not tested"
        )
    )
    func theNodeReceiverTakesBackOnlyWhatWasGranted() async throws {
        try await takesBackOnlyWhatWasGranted(.node)
    }

    /// A purchase granted then refunded is taken back; a refund whose grant the receiver never applied (it was down)
    /// takes back nothing and a late grant is refused; a grant that failed is delivered by a support redelivery in
    /// that call once the receiver is back.
    func takesBackOnlyWhatWasGranted(_ language: SampleReceiver.Language) async throws {
        let port = try ServeProcess.freePort()
        let emulator = try await EmulatorProcess.start(
            extraArguments: ["--notify-url", "http://127.0.0.1:\(port)/iap/v1/notifications"],
            environment: .production
        )
        defer { emulator.stop() }
        let receiverPort = try ServeProcess.freePort()
        let walletFile = emulator.directory.appending(path: "wallet.json")
        let grant = try ServeProcess.grantOptions(
            URL(string: "http://127.0.0.1:\(receiverPort)/iap/deliveries")!,
            directory: emulator.directory
        )
        let secretFile = URL(filePath: grant[3])
        func startReceiver() async throws -> SampleReceiver {
            try await SampleReceiver(language, port: receiverPort, secretFile: secretFile, walletFile: walletFile)
        }
        var receiver = try await startReceiver()
        defer { receiver.stop() }
        let root = try await emulator.saveRootCertificate()
        let arguments =
            [
                "--port", String(port), "--data", emulator.directory.appending(path: "ledger").path, "--catalog",
                try emulator.saveCatalog().path,
            ] + grant + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
        let server = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { server.stop() }
        let service = ServeProcess.serviceToken

        // Granted, then refunded: taken back.
        let coins = try await emulator.purchase("coins.100", account: "alice")
        let submitted = try await server.submitUntilFinished(coins.signedTransaction, as: "alice")
        #expect(submitted.status == 200, "\(String(decoding: submitted.body, as: UTF8.self))")
        #expect(try receiver.balance("alice", "coins.100") == 100)
        #expect(try await emulator.post("/emulator/v1/transactions/\(coins.transactionId)/refund").status == 200)
        #expect(try await eventually { try receiver.balance("alice", "coins.100") == 0 })
        #expect((try receiver.wallet()["applied"] as? [String: Any])?["\(coins.transactionId):revoke:0"] != nil)

        // The receiver is down when bob's grant is called; the refund arrives before it is back.
        receiver.stop()
        let lost = try await emulator.purchase("coins.100", account: "bob")
        #expect(try await server.submit(lost.signedTransaction, as: "bob").status == 202)
        #expect(try await emulator.post("/emulator/v1/transactions/\(lost.transactionId)/refund").status == 200)
        #expect(
            try await eventually {
                let history = try await server.send("GET", "/iap/v1/users/bob/history", bearer: service)
                let items = try ServeCommandTests.object(history)["items"] as? [[String: Any]]
                return items?.first?["state"] as? String == "revoked"
            }
        )
        // carol's grant fails too.
        let failed = try await emulator.purchase("coins.100", account: "carol")
        #expect(try await server.submit(failed.signedTransaction, as: "carol").status == 202)

        // The receiver is back: a support redelivery calls it now, not at the retry queue's next turn.
        receiver = try await startReceiver()
        for (purchase, outcome) in [(lost, "revoked"), (failed, "delivered")] {
            let orderId = try #require(purchase.orderId)
            let redelivered = try await server.send(
                "POST",
                "/iap/v1/support/orders/\(orderId)/redeliver",
                bearer: service,
                headers: ["X-Operator": "dana"]
            )
            #expect(redelivered.status == 200, "\(String(decoding: redelivered.body, as: UTF8.self))")
            let items = try ServeCommandTests.object(redelivered)["transactions"] as? [[String: Any]]
            #expect(
                items?.first?["redelivery"] as? String == outcome,
                "\(String(decoding: redelivered.body, as: UTF8.self))"
            )
        }
        // bob's refund took back nothing, and cancelled the grant it undoes.
        #expect(try receiver.balance("bob", "coins.100") == 0)
        #expect((try receiver.wallet()["cancelled"] as? [String])?.contains(lost.transactionId) == true)
        // carol's grant was applied in the redelivery's call.
        #expect(try receiver.balance("carol", "coins.100") == 100)

        // bob's grant arrives late (its call outlived the refund): refused, nothing given.
        let body =
            Array(
                #"{"idempotencyKey":"\#(lost.transactionId)","originalTransactionId":"\#(lost.transactionId)","#.utf8
            )
            + Array(
                #""productId":"coins.100","transactionId":"\#(lost.transactionId)","type":"grant","units":100,"userId":"bob"}"#
                    .utf8
            )
        let signature = WebhookSignature(
            signing: body,
            at: Int64(SystemClock().now.timeIntervalSince1970),
            authenticator: try HMACSHA256(key: Array(ServeProcess.grantSecret.utf8))
        )
        let late = try await server.transport.send(
            HTTPRequest(
                method: "POST",
                url: receiver.url,
                headers: [
                    "Content-Type": "application/json", "Idempotency-Key": lost.transactionId,
                    WebhookSignature.headerName: signature.header,
                ],
                body: Data(body)
            )
        )
        #expect(late.status == 409)
        #expect(try receiver.balance("bob", "coins.100") == 0)
    }

    /// The user ids the derivations are compared on: ASCII, an e-mail, accents, CJK, an emoji, a combining mark.
    static let userIds = ["alice", "user-42", "alice@example.com", "jürgen", "日本語ユーザー", "🎉 party", "e\u{301}"]

    @Test(.enabled(if: SampleReceiver.Language.python.interpreter != nil, "python3 is not installed"))
    func thePythonDerivationMakesTheSwiftToken() async throws {
        try await derivationMakesTheSwiftToken(.python)
    }

    @Test(
        .enabled(
            if: SampleReceiver.Language.node.interpreter != nil,
            "node is not installed (apt-get install nodejs): the Node derivation is not tested"
        )
    )
    func theNodeDerivationMakesTheSwiftToken() async throws {
        try await derivationMakesTheSwiftToken(.node)
    }

    func derivationMakesTheSwiftToken(_ language: SampleReceiver.Language) async throws {
        let namespace = try #require(UUID(uuidString: "6f1b7c7e-3f52-4a8e-9a1e-0c2d9f6b5a10"))
        for userId in Self.userIds {
            let swift = AppAccountToken.derive(from: userId, namespace: namespace).uuidString.lowercased()
            #expect(
                try await SampleReceiver.derive(language, userId: userId, namespace: namespace) == swift,
                "\(userId)"
            )
        }
    }

    @Test func theGuidesShowTheSamplesAsTheyAre() throws {
        let documentation = SampleReceiver.directory.deletingLastPathComponent()
        let server = try String(contentsOf: documentation.appending(path: "Server.md"), encoding: .utf8)
        let receiver = try String(contentsOf: SampleReceiver.Language.python.receiver, encoding: .utf8)
        // The heart of the Python receiver, as Server.md shows it.
        let start = try #require(receiver.range(of: "def apply("))
        #expect(
            server.contains(String(receiver[start.lowerBound...]).components(separatedBy: "\n\n\nclass Receiver")[0])
        )
        let guide = try String(contentsOf: documentation.appending(path: "AntiLostOrder.md"), encoding: .utf8)
        for language in [SampleReceiver.Language.python, .node] {
            let sample = try String(contentsOf: language.derivation, encoding: .utf8)
            // The function as the guide shows it: everything before the command-line part.
            let function = sample.components(separatedBy: language == .python ? "\n\nif __name__" : "\nmodule.exports")[
                0
            ]
            #expect(guide.contains(function), "\(language.derivation.lastPathComponent)")
        }
    }
}
