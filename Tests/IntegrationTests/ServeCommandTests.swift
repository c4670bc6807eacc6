import Foundation
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTestSupport
import IAPWebhook
import Testing

/// `iap serve` end to end: an HTTP client with user tokens, `iap emulate` pushing notifications to the server, a webhook
/// receiver that checks every signature, and a kill -9 in the middle of a burst.
///
/// The one suite over 60 s (about 80 s in a whole run on two cores): its scenarios run one after another, each with
/// an emulator, one or two servers and a receiver of its own (in parallel they would oversubscribe a small machine
/// and their deadlines would measure the load), and the end-to-end one waits for the emulator to give a notification
/// up (five attempts, 7.5 s) so that the scheduled reconciliation is what finds the purchase.
@Suite("iap serve", .serialized)
struct ServeCommandTests {
    typealias CLI = CommandLineContractTests

    /// A backend's wallet: a loopback webhook receiver that answers 200 to every correctly signed grant or take-back,
    /// and 401 to anything else (counted in ``refused``).
    final class Wallet: Sendable {
        let server: LoopbackServer
        private let refusedCount = LockedValue(0)

        init() throws {
            server = try LoopbackServer.wallet(
                secret: ServeProcess.grantSecret,
                path: "/iap/deliveries",
                refused: refusedCount
            )
        }

        var url: URL { server.url.appending(path: "iap/deliveries") }
        var refused: Int { refusedCount.withLock { $0 } }

        /// Every delivery received, in order.
        var deliveries: [WebhookDelivery] {
            server.requests.compactMap { try? JSONDecoder().decode(WebhookDelivery.self, from: $0.body) }
        }

        func stop() { server.stop() }
    }

    static func object(_ response: HTTPResponse) throws -> [String: Any] {
        try CLI.json(String(decoding: response.body, as: UTF8.self))
    }

    @Test func purchasesNotificationsARefundARenewalALostNotificationAndSupportEndToEnd() async throws {
        let port = try ServeProcess.freePort()
        let emulator = try await EmulatorProcess.start(
            extraArguments: ["--notify-url", "http://127.0.0.1:\(port)/iap/v1/notifications"],
            environment: .production
        )
        defer { emulator.stop() }
        let wallet = try Wallet()
        defer { wallet.stop() }
        let root = try await emulator.saveRootCertificate()
        let data = emulator.directory.appending(path: "ledger")
        let arguments =
            ["--port", String(port), "--data", data.path, "--catalog", try emulator.saveCatalog().path]
            + (try ServeProcess.grantOptions(wallet.url, directory: emulator.directory))
            + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "1s"]
        var server = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { server.stop() }
        #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(port)")
        let token = "6c1f2e3d-4b5a-4968-8776-a5b4c3d2e1f0"

        // alice buys premium in the app; the app submits it with her token, Apple notifies the server.
        let premium = try await emulator.purchase("premium", account: "alice", token: token)
        // Its notification may be in flight at the same time: the submission is then answered 202, sent again.
        let submitted = try await server.submitUntilFinished(premium.signedTransaction, as: "alice")
        #expect(submitted.status == 200)
        #expect(["delivered", "alreadyDelivered"].contains(try Self.object(submitted)["outcome"] as? String))
        let again = try await server.submit(premium.signedTransaction, as: "alice")
        #expect(again.status == 200)
        #expect(try Self.object(again)["outcome"] as? String == "alreadyDelivered")

        // A subscription, and its renewal, which only the notification brings.
        let pro = try await emulator.purchase("pro.monthly", account: "alice", token: token)
        let proSubmitted = try await server.submitUntilFinished(pro.signedTransaction, as: "alice")
        #expect(proSubmitted.status == 200, "\(String(decoding: proSubmitted.body, as: UTF8.self))")
        #expect(try await emulator.subscription(pro.originalTransactionId, "renew") == 200)
        #expect(
            await eventually {
                wallet.deliveries.contains {
                    $0.type == .grant && $0.originalTransactionId == pro.originalTransactionId
                        && $0.transactionId != pro.transactionId && $0.userId == "alice"
                }
            }
        )

        // A refund is taken back, under its own key.
        #expect(try await emulator.post("/emulator/v1/transactions/\(premium.transactionId)/refund").status == 200)
        #expect(
            await eventually {
                wallet.deliveries.contains {
                    $0.type == .revoke && $0.idempotencyKey == "\(premium.transactionId):revoke:0"
                }
            }
        )

        // A purchase whose notification is lost while the server is down: the scheduled reconciliation finds it.
        server.stop()
        #expect(server.terminationStatus == 0)
        let lost = try await emulator.purchase("coins.100", account: "alice", token: token)
        // The emulator gives the notification up after 5 attempts (7.5 seconds).
        #expect(
            try await eventually(30) {
                let body = try await emulator.get("/emulator/v1/notifications").body
                let list = try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]])
                return (list.last?["sendAttempts"] as? [Any])?.count == 5
            }
        )
        server = try await ServeProcess.start(arguments, directory: emulator.directory)
        #expect(
            await eventually(30) {
                wallet.deliveries.contains { $0.type == .grant && $0.transactionId == lost.transactionId }
            }
        )

        // The service endpoints: entitlements and history in the JSON of iap ledger, with the service token.
        let service = ServeProcess.serviceToken
        let entitlements = try await server.send("GET", "/iap/v1/users/alice/entitlements", bearer: service)
        #expect(entitlements.status == 200)
        let listing = try Self.object(entitlements)
        #expect(listing["user"] as? String == "alice")
        let products = (listing["entitlements"] as? [[String: Any]] ?? []).filter { $0["hasAccess"] as? Bool == true }
        #expect(Set(products.compactMap { $0["productId"] as? String }) == ["pro.monthly", "coins.100"])
        #expect((listing["balances"] as? [String: Any])?["coins.100"] as? Int == 100)
        let history = try await server.send("GET", "/iap/v1/users/alice/history?limit=2", bearer: service)
        #expect(history.status == 200)
        let page = try Self.object(history)
        #expect((page["items"] as? [Any])?.count == 2)
        let cursor = try #require(page["nextCursor"] as? String)
        let next = try await server.send(
            "GET",
            "/iap/v1/users/alice/history?limit=2&cursor=\(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")",
            bearer: service
        )
        #expect(next.status == 200)
        #expect(((try Self.object(next))["items"] as? [Any])?.isEmpty == false)
        #expect(try await server.send("GET", "/iap/v1/users/alice/entitlements").status == 401)
        #expect(
            try await server.send("GET", "/iap/v1/users/alice/entitlements", bearer: ServeProcess.userToken("alice"))
                .status == 401
        )

        // Support: a lookup and a redelivery, audited under the operator's name.
        let orderId = try #require(lost.orderId)
        let lookup = try await server.send(
            "POST",
            "/iap/v1/support/orders/\(orderId)/lookup",
            bearer: service,
            headers: ["X-Operator": "carol"]
        )
        #expect(lookup.status == 200, "\(String(decoding: lookup.body, as: UTF8.self))")
        #expect(String(decoding: lookup.body, as: UTF8.self).contains(lost.transactionId))
        let redeliver = try await server.send(
            "POST",
            "/iap/v1/support/orders/\(orderId)/redeliver",
            bearer: service,
            headers: ["X-Operator": "carol"],
            body: #"{"userId":"alice"}"#
        )
        #expect(redeliver.status == 200, "\(String(decoding: redeliver.body, as: UTF8.self))")
        #expect(
            try await server.send("POST", "/iap/v1/support/orders/\(orderId)/lookup", bearer: service).status == 400
        )
        #expect(
            try await server.send(
                "POST",
                "/iap/v1/support/orders/\(orderId)/lookup",
                headers: ["X-Operator": "carol"]
            ).status == 401
        )
        let audit = try String(contentsOf: data.appending(path: "support-audit.jsonl"), encoding: .utf8)
        #expect(audit.split(separator: "\n").filter { $0.contains("carol") }.count >= 2)

        // Operations.
        #expect(try await server.send("GET", "/healthz").status == 200)
        #expect(try await server.send("GET", "/readyz").status == 200)
        let metrics = try await server.send("GET", "/metrics")
        #expect(metrics.status == 200)
        let exposition = PrometheusExposition(String(decoding: metrics.body, as: UTF8.self))
        #expect(exposition.problems.isEmpty, "\(exposition.problems)")
        for name in [
            "iap_submissions_total", "iap_notifications_total", "iap_webhook_requests_total", "iap_retry_queue_depth",
            "iap_dead_letters", "iap_verification_failures_total", "iap_http_request_duration_seconds",
        ] {
            #expect(exposition.family(name) != nil, "\(name)")
        }
        // This process (since the restart) heard no submission, and granted the lost purchase through the webhook.
        #expect(exposition.value("iap_submissions_total", ["outcome": "delivered"]) == 0)
        #expect((exposition.value("iap_webhook_requests_total", ["type": "grant", "result": "success"]) ?? 0) >= 1)
        #expect(exposition.value("iap_retry_queue_depth") == 0)

        // Every request the wallet got was signed, and each grant key names one transaction.
        #expect(wallet.refused == 0)
        let grants = wallet.deliveries.filter { $0.type == .grant }
        #expect(grants.allSatisfy { $0.idempotencyKey == $0.transactionId })
        #expect(Set(grants.map(\.transactionId)).count == 4)

        server.stop()
        #expect(server.terminationStatus == 0)
        let events = try server.standardError()
        #expect(events.contains(#""event":"server.stopped""#))
        for secret in [ServeProcess.userSecret, ServeProcess.serviceToken, ServeProcess.grantSecret] {
            #expect(!events.contains(secret))
        }
    }

    /// The support audit deleted, or its last entry cut, under a running server: the next support request is refused
    /// (503), `GET /readyz` and `GET /metrics` say so at once, purchases go on, and no entry goes to a deleted file.
    @Test(arguments: ["deleted", "cut"])
    func anAuditTamperedWithUnderARunningServerRefusesTheNextSupportRequest(tamper: String) async throws {
        let emulator = try await EmulatorProcess.start(environment: .production)
        defer { emulator.stop() }
        let root = try await emulator.saveRootCertificate()
        let data = emulator.directory.appending(path: "ledger")
        let arguments =
            ["--port", "0", "--data", data.path, "--catalog", try emulator.saveCatalog().path, "--ledger-only"]
            + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
        let server = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { server.stop() }
        let purchase = try await emulator.purchase("coins.100", account: "alice")
        let orderId = try #require(purchase.orderId)
        func lookUp() async throws -> HTTPResponse {
            try await server.send(
                "POST",
                "/iap/v1/support/orders/\(orderId)/lookup",
                bearer: ServeProcess.serviceToken,
                headers: ["X-Operator": "carol"]
            )
        }
        for _ in 0..<2 {
            #expect(try await lookUp().status == 200)
        }
        let log = data.appending(path: "support-audit.jsonl")
        if tamper == "deleted" {
            try FileManager.default.removeItem(at: log)
        } else {
            let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
            let handle = try FileHandle(forWritingTo: log)
            try handle.truncate(atOffset: UInt64(lines.dropLast().joined(separator: "\n").utf8.count + 1))
            try handle.close()
        }
        let left = FileManager.default.contents(atPath: log.path)

        let refused = try await lookUp()
        #expect(refused.status == 503, "\(String(decoding: refused.body, as: UTF8.self))")
        #expect(try Self.object(refused)["code"] as? String == "storageCorrupted")
        let readiness = String(decoding: try await server.send("GET", "/readyz").body, as: UTF8.self)
        #expect(readiness.hasPrefix("ready\ndegraded: support-audit: "), "\(readiness)")
        let metrics = String(decoding: try await server.send("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.split(separator: "\n").contains("iap_support_audit_refused 1"))
        #expect(try await lookUp().status == 503)
        // Nothing was written where the log was (a deleted log is not created again, a cut one not appended to).
        #expect(FileManager.default.contents(atPath: log.path) == left)
        // Purchases go on.
        let bought = try await emulator.purchase("premium", account: "bob", token: UUID().uuidString.lowercased())
        #expect(try await server.submitUntilFinished(bought.signedTransaction, as: "bob").status == 200)
    }

    /// The support audit laundered on disk — its last entry and its head deleted while the server was down — is
    /// caught by the head the ledger keeps: support is refused, purchases are not, `GET /readyz` and `GET /metrics`
    /// say so, until an operator reseals it.
    @Test func anAuditCutWithItsHeadRefusesSupportButNotPurchasesUntilResealed() async throws {
        let emulator = try await EmulatorProcess.start(environment: .production)
        defer { emulator.stop() }
        let wallet = try Wallet()
        defer { wallet.stop() }
        let root = try await emulator.saveRootCertificate()
        let data = emulator.directory.appending(path: "ledger")
        let arguments =
            ["--port", "0", "--data", data.path, "--catalog", try emulator.saveCatalog().path]
            + (try ServeProcess.grantOptions(wallet.url, directory: emulator.directory))
            + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
        var server = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { server.stop() }
        let purchase = try await emulator.purchase("coins.100", account: "alice")
        let orderId = try #require(purchase.orderId)
        func lookUp() async throws -> HTTPResponse {
            try await server.send(
                "POST",
                "/iap/v1/support/orders/\(orderId)/lookup",
                bearer: ServeProcess.serviceToken,
                headers: ["X-Operator": "carol"]
            )
        }
        for _ in 0..<3 {
            #expect(try await lookUp().status == 200)
        }
        // Each support event carries the audit's head after its entry.
        let heads = try server.standardError().split(separator: "\n").filter { $0.contains(#""support.lookup""#) }
            .compactMap { try? CLI.json(String($0))["auditHead"] as? String }
        #expect(heads.count == 3 && Set(heads).count == 3)
        server.stop()
        let intact = try await CLI.iap(["support", "audit", "verify", data.path])
        #expect(intact.stdoutLines == ["ok: 3 entries, head \(heads.last ?? "")"])

        let log = data.appending(path: "support-audit.jsonl")
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        try Data((lines.dropLast().joined(separator: "\n") + "\n").utf8).write(to: log)
        try FileManager.default.removeItem(at: data.appending(path: "support-audit.jsonl.head"))

        server = try await ServeProcess.start(arguments, directory: emulator.directory)
        let refused = try await lookUp()
        #expect(refused.status == 503)
        #expect(try Self.object(refused)["code"] as? String == "storageCorrupted")
        let ready = try await server.send("GET", "/readyz")
        #expect(ready.status == 200)
        let readiness = String(decoding: ready.body, as: UTF8.self)
        #expect(readiness.hasPrefix("ready\ndegraded: support-audit: "), "\(readiness)")
        let metrics = String(decoding: try await server.send("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.split(separator: "\n").contains("iap_support_audit_refused 1"))
        #expect(
            try server.standardError().split(separator: "\n").contains {
                $0.contains(#""event":"support.audit""#) && $0.contains(#""outcome":"refused""#)
                    && $0.contains(#""errorCode":"storageCorrupted""#)
            }
        )
        // Purchases still flow.
        let token = "0f3c2b1a-9e8d-4c7b-a695-847362514030"
        let bought = try await emulator.purchase("premium", account: "bob", token: token)
        let submitted = try await server.submitUntilFinished(bought.signedTransaction, as: "bob")
        #expect(submitted.status == 200)
        #expect(["delivered", "alreadyDelivered"].contains(try Self.object(submitted)["outcome"] as? String))
        server.stop()

        let verify = try await CLI.iap(["support", "audit", "verify", data.path])
        #expect(verify.status == 1)
        #expect(
            verify.stderrLines.contains(
                "error: storageCorrupted: the ledger records 3 entries with head \(heads.last ?? ""), the log holds "
                    + "2: its last entries were removed"
            ),
            "\(verify.stderr)"
        )
        let resealed = try await CLI.iap([
            "support", "audit", "reseal", data.path, "--operator", "ops-1", "--reason", "INC-7: cut while down",
        ])
        #expect(resealed.status == 0, "\(resealed.stderr)")
        server = try await ServeProcess.start(arguments, directory: emulator.directory)
        #expect(try await lookUp().status == 200)
        #expect(String(decoding: try await server.send("GET", "/readyz").body, as: UTF8.self) == "ready\n")
        let metricsAfter = String(decoding: try await server.send("GET", "/metrics").body, as: UTF8.self)
        #expect(metricsAfter.split(separator: "\n").contains("iap_support_audit_refused 0"))
        server.stop()
        let verified = try await CLI.iap(["support", "audit", "verify", data.path])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdoutLines.first?.hasPrefix("ok: 4 entries") == true)
    }

    @Test func killedInTheMiddleOfABurstAndRestartedEveryPurchaseReachesTheWebhookUnderOneKey() async throws {
        let port = try ServeProcess.freePort()
        let emulator = try await EmulatorProcess.start(
            extraArguments: ["--notify-url", "http://127.0.0.1:\(port)/iap/v1/notifications"]
        )
        defer { emulator.stop() }
        let wallet = try Wallet()
        defer { wallet.stop() }
        let root = try await emulator.saveRootCertificate()
        let arguments =
            [
                "--port", String(port), "--data", emulator.directory.appending(path: "ledger").path, "--catalog",
                try emulator.saveCatalog().path, "--root", root.path, "--bundle-id", EmulatorProcess.bundleId,
                "--environment", "Sandbox",
            ] + (try ServeProcess.grantOptions(wallet.url, directory: emulator.directory))
        let first = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { first.kill() }

        // 40 customers buy; their apps submit at once, and the server is killed after the tenth answer.
        var purchases: [(user: String, purchase: EmulatorProcess.Purchase)] = []
        for index in 0..<40 {
            let user = "user\(index)"
            purchases.append((user, try await emulator.purchase("coins.100", account: user)))
        }
        let answered = LockedValue<[String: Int]>([:])
        await withTaskGroup(of: Void.self) { group in
            for (user, purchase) in purchases {
                group.addTask {
                    if let response = try? await first.submit(purchase.signedTransaction, as: user) {
                        answered.withLock { $0[purchase.transactionId] = response.status }
                    }
                }
            }
            group.addTask {
                _ = await eventually(30) { answered.withLock { $0.count } >= 10 }
                first.kill()
            }
        }
        #expect(first.terminationStatus != 0)
        let acknowledged = answered.withLock { $0.filter { $0.value == 200 }.map(\.key) }
        #expect(acknowledged.count >= 10)

        // The restarted server, on the same ledger; the apps send again what was not finished (all of it here).
        let second = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { second.stop() }
        for (user, purchase) in purchases {
            // 202 while the killed process's claim on the delivery lasts (30 seconds in iap serve), deferred, or
            // pending in the retry queue: the app sends it again later, and the server's drain delivers it.
            let response = try await second.submitUntilFinished(purchase.signedTransaction, as: user, attempts: 10)
            let outcome = try Self.object(response)["outcome"] as? String
            #expect(
                (response.status == 200 && ["delivered", "alreadyDelivered"].contains(outcome))
                    || (response.status == 202 && ["deferred", "pending"].contains(outcome)),
                "\(response.status) \(String(decoding: response.body, as: UTF8.self))"
            )
        }
        let expected = Set(purchases.map(\.purchase.transactionId))
        #expect(
            await eventually(180) {
                Set(wallet.deliveries.map(\.idempotencyKey)).isSuperset(of: expected)
            }
        )
        // At least once under its one key, never under another; each to its buyer.
        let deliveries = wallet.deliveries
        #expect(wallet.refused == 0)
        #expect(Set(deliveries.map(\.idempotencyKey)) == expected)
        #expect(deliveries.allSatisfy { $0.type == .grant && $0.idempotencyKey == $0.transactionId })
        let buyers = Dictionary(uniqueKeysWithValues: purchases.map { ($0.purchase.transactionId, $0.user) })
        #expect(deliveries.allSatisfy { buyers[$0.transactionId] == $0.userId })
        // Nothing acknowledged is lost: each is in its buyer's history.
        for transactionId in acknowledged {
            let user = try #require(buyers[transactionId])
            let history = try await second.send(
                "GET",
                "/iap/v1/users/\(user)/history",
                bearer: ServeProcess.serviceToken
            )
            #expect(String(decoding: history.body, as: UTF8.self).contains(transactionId))
        }
    }

    @Test func malformedRequestsOversizedBodiesAndBadTokensGetClean4xxAndLeaveNothingBehind() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let root = try await emulator.saveRootCertificate()
        let data = emulator.directory.appending(path: "ledger")
        // The settings from --config, the port from the command line.
        let config = emulator.directory.appending(path: "serve.json")
        try Data(
            #"""
            {"data": "\#(data.path)", "bundle-id": "\#(EmulatorProcess.bundleId)", "environment": ["Sandbox"],
             "root": ["\#(root.path)"], "ledger-only": true, "port": 1}
            """#.utf8
        ).write(to: config)
        let server = try await ServeProcess.start(
            ["--config", config.path, "--port", "0"],
            directory: emulator.directory
        )
        defer { server.stop() }
        let purchase = try await emulator.purchase("premium", account: "alice")
        let body = #"{"signedTransaction":"\#(purchase.signedTransaction)"}"#
        let now = Int(SystemClock().now.timeIntervalSince1970)

        // Bad user tokens: 401 in the submission's shape, with WWW-Authenticate.
        let tokens: [String?] = [
            nil, "", "not.a.jwt", try ServeProcess.userToken("alice", expiresIn: -10),
            try ServeProcess.userToken("alice", secret: "another-secret-of-enough-length"),
            try ServeProcess.userToken("alice", header: #"{"alg":"none","typ":"JWT"}"#),
            try ServeProcess.userToken("alice", header: #"{"alg":"HS512","typ":"JWT"}"#),
            try ServeProcess.userToken("alice", claims: #"{"sub":"alice"}"#),
            try ServeProcess.userToken("alice", claims: #"{"sub":"alice","exp":"\#(now + 3600)"}"#),
            try ServeProcess.userToken("alice", claims: #"{"exp":\#(now + 3600)}"#),
            ServeProcess.serviceToken,
        ]
        for token in tokens {
            let response = try await server.send("POST", "/iap/v1/transactions", bearer: token, body: body)
            #expect(response.status == 401, "\(token ?? "none")")
            #expect(response.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            let answer = try Self.object(response)
            #expect(answer["outcome"] as? String == "rejected")
            #expect((answer["error"] as? [String: Any])?["code"] as? String == "unauthenticated")
        }
        // Bad service tokens.
        for token in [nil, "wrong-token-of-some-length", try ServeProcess.userToken("alice")] {
            for (method, path) in [
                ("GET", "/iap/v1/users/alice/entitlements"), ("GET", "/iap/v1/users/alice/history"),
                ("POST", "/iap/v1/support/orders/ABC/lookup"), ("POST", "/iap/v1/support/orders/ABC/redeliver"),
            ] {
                let response = try await server.send(method, path, bearer: token, headers: ["X-Operator": "carol"])
                #expect(response.status == 401, "\(method) \(path)")
                #expect(try Self.object(response)["code"] as? String == "unauthenticated")
            }
        }
        // Malformed requests and bodies.
        let bad = [
            try await server.send("GET", "/iap/v1/users/alice/history?limit=0", bearer: ServeProcess.serviceToken),
            try await server.send(
                "GET",
                "/iap/v1/users/alice/history?cursor=bm90LWEtY3Vyc29y",
                bearer: ServeProcess.serviceToken
            ),
            try await server.send("POST", "/iap/v1/notifications", body: #"{"signedPayload":"a.b.c"}"#),
            try await server.send("POST", "/iap/v1/notifications", body: "not json"),
            try await server.send(
                "POST",
                "/iap/v1/transactions",
                bearer: try ServeProcess.userToken("alice"),
                body: #"{"signedTransaction":"x.y.z"}"#
            ),
        ]
        #expect(bad.map(\.status).allSatisfy { (400..<500).contains($0) }, "\(bad.map(\.status))")
        #expect(try await server.send("GET", "/nowhere").status == 404)
        #expect(try await server.send("DELETE", "/iap/v1/transactions").status == 405)
        let oversized = try await server.send(
            "POST",
            "/iap/v1/notifications",
            body: #"{"signedPayload":""# + String(repeating: "a", count: 2 * 1024 * 1024) + #""}"#
        )
        #expect(oversized.status == 413)
        for head in [
            "GET /iap/v1/users/a%zz/history HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n",
            "POST /iap/v1/transactions HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n",
        ] {
            #expect(try server.raw(Array(head.utf8)).hasPrefix("HTTP/1.1 400"), "\(head)")
        }
        // Not HTTP at all: the connection is closed without an answer, and the server goes on.
        let garbage = try server.raw(Array("GARBAGE\r\n\r\n".utf8))
        #expect(garbage.isEmpty || garbage.hasPrefix("HTTP/1.1 400"))
        #expect(try await server.send("GET", "/healthz").status == 200)

        // Nothing was recorded for anyone.
        let entitlements = try await server.send(
            "GET",
            "/iap/v1/users/alice/entitlements",
            bearer: ServeProcess.serviceToken
        )
        #expect((try Self.object(entitlements)["entitlements"] as? [Any])?.isEmpty == true)
        let history = try await server.send("GET", "/iap/v1/users/alice/history", bearer: ServeProcess.serviceToken)
        #expect((try Self.object(history)["items"] as? [Any])?.isEmpty == true)
        server.stop()
        let log = try server.standardError()
        for secret in [ServeProcess.userSecret, ServeProcess.serviceToken] {
            #expect(!log.contains(secret))
        }
    }

    @Test func usageErrorsExitTwoAndSecretsAreRefusedInTheConfiguration() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let help = try await CLI.iap(["serve", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--user-jwt-secret-file"))
        let missing = try await CLI.iap(["serve", "--port", "0", "--data", directory.path])
        #expect(missing.status == 2)
        let config = directory.appending(path: "serve.json")
        try Data(#"{"user-jwt-secret": "hunter2-hunter2-hunter2"}"#.utf8).write(to: config)
        let secret = try await CLI.iap(["serve", "--config", config.path])
        #expect(secret.status == 2)
        #expect(secret.stderr.contains("secrets are never in the configuration"))
        #expect(!secret.stderr.contains("hunter2"))
        let short = directory.appending(path: "short.secret")
        try ServeProcess.writePrivate("short\n", to: short)
        let run = try await CLI.iap([
            "serve", "--port", "0", "--data", directory.appending(path: "ledger").path, "--bundle-id",
            "com.example.app",
            "--environment", "Sandbox", "--ledger-only", "--user-jwt-secret-file", short.path,
            "--service-token-file", short.path,
        ])
        #expect(run.status == 2)
        #expect(!run.stderr.contains("short\n") && !run.stdout.contains("listening"))
    }
}

/// Two `iap serve` instances on one PostgreSQL ledger. Needs a server in `IAP_TEST_POSTGRES_URL`
/// (`Scripts/postgres-server.sh start`); skipped without one.
@Suite(
    "iap serve on PostgreSQL",
    .enabled(
        if: PostgresTestServer.isConfigured,
        "needs PostgreSQL: export IAP_TEST_POSTGRES_URL=$(Scripts/postgres-server.sh start)"
    )
)
struct ServePostgresTests {
    /// Support on a fleet's database: a lookup and a redelivery are audited in the ledger's schema, one chain that
    /// `iap support audit verify` checks.
    @Test func supportIsAuditedInTheLedgersSchema() async throws {
        let url = try PostgresTestServer.requireURL()
        let schema = PostgresTestServer.freshSchema()
        defer { _ = try? PostgresTestServer.sql("DROP SCHEMA \(schema) CASCADE") }
        let emulator = try await EmulatorProcess.start(environment: .production)
        defer { emulator.stop() }
        let wallet = try ServeCommandTests.Wallet()
        defer { wallet.stop() }
        let root = try await emulator.saveRootCertificate()
        let arguments =
            ["--port", "0", "--database", url, "--schema", schema, "--catalog", try emulator.saveCatalog().path]
            + (try ServeProcess.grantOptions(wallet.url, directory: emulator.directory))
            + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
        let server = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { server.stop() }
        let purchase = try await emulator.purchase("coins.100", account: "alice")
        let orderId = try #require(purchase.orderId)
        for action in ["lookup", "redeliver"] {
            let answer = try await server.send(
                "POST",
                "/iap/v1/support/orders/\(orderId)/\(action)",
                bearer: ServeProcess.serviceToken,
                headers: ["X-Operator": "carol"],
                body: action == "redeliver" ? #"{"userId":"alice"}"# : ""
            )
            #expect(answer.status == 200, "\(action): \(String(decoding: answer.body, as: UTF8.self))")
        }
        #expect(await eventually { wallet.deliveries.contains { $0.transactionId == purchase.transactionId } })
        let rows = try PostgresTestServer.sql("SELECT entry FROM \(schema).iap_support_audit ORDER BY sequence")
        #expect(rows.count == 3)  // the lookup, the redelivery's request and its outcome
        #expect(rows.allSatisfy { $0.contains(#""actor":"carol""#) })
        let verified = try await CommandLineContractTests.iap(["support", "audit", "verify", url, "--schema", schema])
        #expect(verified.status == 0, "\(verified.stderr)")
    }

    @Test func twoInstancesSentTheSameSubmissionAndTheSameNotificationAtOnceGrantOnce() async throws {
        let url = try PostgresTestServer.requireURL()
        let schema = PostgresTestServer.freshSchema()
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let wallet = try ServeCommandTests.Wallet()
        defer { wallet.stop() }
        let root = try await emulator.saveRootCertificate()
        let arguments =
            [
                "--port", "0", "--database", url, "--schema", schema, "--catalog", try emulator.saveCatalog().path,
                "--root", root.path, "--bundle-id", EmulatorProcess.bundleId, "--environment", "Sandbox",
            ] + (try ServeProcess.grantOptions(wallet.url, directory: emulator.directory))
        let first = try await ServeProcess.start(arguments, directory: emulator.directory.appending(path: "one"))
        defer { first.stop() }
        let second = try await ServeProcess.start(arguments, directory: emulator.directory.appending(path: "two"))
        defer { second.stop() }
        let servers = [first, second]
        let token = "0f1e2d3c-4b5a-4697-8877-665544332211"

        // alice's app submits her purchase to both instances at once (a retry through another instance).
        let premium = try await emulator.purchase("premium", account: "alice", token: token)
        let submitted = try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
            for server in servers {
                group.addTask { try await server.submitUntilFinished(premium.signedTransaction, as: "alice") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(submitted.map(\.status) == [200, 200])

        // Apple's notification of her next purchase reaches both at once, with her app's submission of it.
        let coins = try await emulator.purchase("coins.100", account: "alice", token: token)
        let body = try await emulator.get("/emulator/v1/notifications").body
        let list = try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]])
        let payload = try #require(list.last?["signedPayload"] as? String)
        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for server in servers {
                group.addTask {
                    try await server.send("POST", "/iap/v1/notifications", body: #"{"signedPayload":"\#(payload)"}"#)
                        .status
                }
                group.addTask { try await server.submitUntilFinished(coins.signedTransaction, as: "alice").status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers == [200, 200, 200, 200])

        // Each purchase granted once, by one of them.
        #expect(
            await eventually {
                Set(wallet.deliveries.map(\.idempotencyKey)) == [premium.transactionId, coins.transactionId]
            }
        )
        try await Task.sleep(for: .seconds(2))
        #expect(wallet.refused == 0)
        #expect(
            wallet.deliveries.map(\.idempotencyKey).sorted() == [premium.transactionId, coins.transactionId].sorted()
        )
        for server in servers {
            let entitlements = try await server.send(
                "GET",
                "/iap/v1/users/alice/entitlements",
                bearer: ServeProcess.serviceToken
            )
            #expect((try ServeCommandTests.object(entitlements)["balances"] as? [String: Int])?["coins.100"] == 100)
        }
    }
}
