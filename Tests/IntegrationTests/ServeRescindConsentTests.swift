import Foundation
import IAPCore
import IAPCrypto
import IAPTestSupport
import IAPWebhook
import Testing

/// `iap serve --on-rescind-consent revoke` with the emulator's `RESCIND_CONSENT`: the webhook hears of it once, the
/// Apple Account's purchases are taken back, and the history says so.
@Suite("iap serve: RESCIND_CONSENT", .serialized)
struct ServeRescindConsentTests {
    /// A webhook receiver that checks the signature and keeps every body it accepted.
    static func receiver() throws -> LoopbackServer {
        let hmac = try HMACSHA256(key: Array(ServeProcess.grantSecret.utf8))
        return try LoopbackServer { request in
            guard let header = request.headers["x-iap-signature"],
                let signature = try? WebhookSignature(header: header),
                signature.isValid(for: Array(request.body), authenticator: hmac, now: SystemClock().now)
            else {
                return .respond(status: 401, headers: [:], body: Data())
            }
            return .respond(status: 200, headers: [:], body: Data())
        }
    }

    static func bodies(_ receiver: LoopbackServer) throws -> [[String: Any]] {
        try receiver.requests.map {
            try #require(try JSONSerialization.jsonObject(with: $0.body) as? [String: Any])
        }
    }

    @Test func aParentRescindingConsentTakesBackTheAccountsPurchasesOnceAndTheWebhookHearsOfIt() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let receiver = try Self.receiver()
        defer { receiver.stop() }
        let root = try await emulator.saveRootCertificate()
        let arguments =
            [
                "--port", "0", "--data", emulator.directory.appending(path: "ledger").path, "--catalog",
                try emulator.saveCatalog().path, "--on-rescind-consent", "revoke",
            ]
            + (try ServeProcess.grantOptions(receiver.url, directory: emulator.directory))
            + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
        let server = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { server.stop() }

        let kid = try await emulator.purchase("premium", account: "kid")
        let parent = try await emulator.purchase("premium", account: "parent")
        #expect(try await server.submit(kid.signedTransaction, as: "kid").status == 200)
        #expect(try await server.submit(parent.signedTransaction, as: "parent").status == 200)
        #expect(try await emulator.post("/emulator/v1/accounts/kid/rescind-consent").status == 200)

        struct Item: Decodable {
            let signedPayload: String
            let notificationType: String
        }
        let items = try JSONDecoder().decode(
            [Item].self,
            from: try await emulator.get("/emulator/v1/notifications").body
        )
        let rescind = try #require(items.first { $0.notificationType == "RESCIND_CONSENT" })
        let body = #"{"signedPayload":"\#(rescind.signedPayload)"}"#
        #expect(try await server.send("POST", "/iap/v1/notifications", body: body).status == 200)
        let replay = try await server.send("POST", "/iap/v1/notifications", body: body)
        #expect(String(decoding: replay.body, as: UTF8.self).contains("duplicate"))

        let bodies = try Self.bodies(receiver)
        let forwarded = bodies.filter { $0["type"] as? String == "app.rescindConsent" }
        #expect(forwarded.count == 1)
        let verifier = try await emulator.verifier()
        let appTransactionId = try verifier.transaction(kid.signedTransaction).appTransactionId
        #expect(forwarded.first?["appTransactionId"] as? String == appTransactionId)
        #expect(forwarded.first?["userIds"] as? [String] == ["kid"])
        #expect(forwarded.first?["notificationType"] as? String == "RESCIND_CONSENT")
        let revokes = bodies.filter { $0["type"] as? String == "revoke" }
        #expect(revokes.map { $0["transactionId"] as? String } == [kid.transactionId])

        let service = ServeProcess.serviceToken
        let entitlements = try await server.send("GET", "/iap/v1/users/kid/entitlements", bearer: service)
        #expect(!String(decoding: entitlements.body, as: UTF8.self).contains("\"hasAccess\":true"))
        let others = try await server.send("GET", "/iap/v1/users/parent/entitlements", bearer: service)
        #expect(String(decoding: others.body, as: UTF8.self).contains("\"hasAccess\":true"))
        let history = try await server.send("GET", "/iap/v1/users/kid/history", bearer: service)
        let text = String(decoding: history.body, as: UTF8.self)
        #expect(text.contains("consentRescindedAt"), "\(text)")
        #expect(text.contains("\"state\":\"revoked\""), "\(text)")
    }
}
