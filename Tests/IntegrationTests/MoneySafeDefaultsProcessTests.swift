import Foundation
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTestSupport
import IAPWebhook
import Testing

/// The money-safe defaults through the `iap` process: no grant without a catalog, a product the catalog does not know
/// parked until a reload names it, and one environment never touching another's purchase.
@Suite("Money-safe defaults, iap process", .serialized)
struct MoneySafeDefaultsProcessTests {
    typealias CLI = CommandLineContractTests

    /// The emulator's catalog without `premium`.
    static func catalogWithoutPremium(in directory: URL) throws -> URL {
        let file = directory.appending(path: "catalog-without-premium.json")
        try Data(
            #"""
            {"version": 1, "products": [
                {"productId": "coins.100", "type": "consumable", "entitlements": [], "unitsPerPurchase": 100},
                {"productId": "pro.monthly", "type": "autoRenewable", "subscriptionGroupId": "pro",
                 "entitlements": ["pro"], "duration": "P1M"}
            ]}
            """#.utf8
        ).write(to: file)
        return file
    }

    /// A test PKI valid through 2029, its root written to `root`.
    static func testPKI(rootAt root: URL) throws -> TestPKI {
        let pki = try TestPKI.generate(
            TestPKI.Options(
                notBefore: Date(millisecondsSince1970: 1_704_067_200_000),
                notAfter: Date(millisecondsSince1970: 1_893_456_000_000)
            )
        )
        try Data(pki.root.derBytes).write(to: root)
        return pki
    }

    @Test func aGrantURLWithoutACatalogRefusesToStartAndSaysHowToGiveOne() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-no-catalog-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let grant = try ServeProcess.grantOptions(URL(string: "http://127.0.0.1:9/iap")!, directory: directory)
        let secrets = directory.appending(path: "user.secret")
        try ServeProcess.writePrivate(ServeProcess.userSecret, to: secrets)
        let token = directory.appending(path: "service.token")
        try ServeProcess.writePrivate(ServeProcess.serviceToken, to: token)
        let run = try await CLI.iap(
            [
                "serve", "--port", "0", "--data", directory.appending(path: "ledger").path, "--bundle-id",
                "com.example.app", "--environment", "Sandbox", "--user-jwt-secret-file", secrets.path,
                "--service-token-file", token.path,
            ] + grant
        )
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("needs a catalog") && run.stderr.contains("--catalog FILE"))
        #expect(run.stdout.isEmpty)

        let root = directory.appending(path: "root.der")
        _ = try Self.testPKI(rootAt: root)
        let ingest = try await CLI.iap(
            ["ledger", "ingest", "--data", directory.appending(path: "ledger2").path, "--root", root.path] + grant,
            input: Data()
        )
        #expect(ingest.status == 2)
        #expect(ingest.stderr.contains("needs a catalog"))
    }

    @Test func anUnknownProductIsParkedAndDeliveredOnceSIGHUPReloadsACatalogThatNamesIt() async throws {
        let port = try ServeProcess.freePort()
        let emulator = try await EmulatorProcess.start(environment: .production)
        defer { emulator.stop() }
        let wallet = try ServeCommandTests.Wallet()
        defer { wallet.stop() }
        let root = try await emulator.saveRootCertificate()
        let catalog = try Self.catalogWithoutPremium(in: emulator.directory)
        let arguments =
            [
                "--port", String(port), "--data", emulator.directory.appending(path: "ledger").path, "--catalog",
                catalog.path,
            ]
            + (try ServeProcess.grantOptions(wallet.url, directory: emulator.directory))
            + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
        let server = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { server.stop() }

        let premium = try await emulator.purchase(
            "premium",
            account: "alice",
            token: "3a2b1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d"
        )
        let parked = try await server.submit(premium.signedTransaction, as: "alice")
        #expect(parked.status == 202)
        let answer = try ServeCommandTests.object(parked)
        #expect(answer["outcome"] as? String == "deferred")
        #expect(answer["finish"] as? Bool == false)
        let error = answer["error"] as? [String: Any]
        #expect(error?["code"] as? String == "unknownProduct")
        #expect(error?["retryable"] as? Bool == true)
        #expect(wallet.deliveries.isEmpty)
        let metrics = String(decoding: try await server.send("GET", "/metrics").body, as: UTF8.self)
        #expect(
            await eventually {
                String(decoding: (try? await server.send("GET", "/metrics").body) ?? Data(), as: UTF8.self)
                    .contains("iap_unknown_product_purchases 1")
            },
            "\(metrics)"
        )
        #expect(try server.standardError().contains("\"event\":\"delivery.unknownProduct\""))

        // The ledger is whole, and says what is parked.
        let check = try await CLI.iap(["ledger", "check", "--data", emulator.directory.appending(path: "ledger").path])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdoutLines.contains { $0.hasPrefix("note: 1 purchase is recorded but parked") })

        // The catalog learns the product; SIGHUP reloads it and the parked purchase is granted once.
        try Data(contentsOf: try emulator.saveCatalog()).write(to: catalog)
        server.signal(SIGHUP)
        #expect(await eventually { wallet.deliveries.contains { $0.transactionId == premium.transactionId } })
        #expect(await eventually { (try? server.standardError().contains("\"event\":\"catalog.reloaded\"")) == true })
        let again = try await server.submit(premium.signedTransaction, as: "alice")
        #expect(again.status == 200)
        #expect(try ServeCommandTests.object(again)["outcome"] as? String == "alreadyDelivered")
        #expect(wallet.deliveries.filter { $0.transactionId == premium.transactionId }.count == 1)

        // A catalog that cannot be read keeps the one in use.
        try Data("not json".utf8).write(to: catalog)
        server.signal(SIGHUP)
        #expect(await eventually { (try? server.standardError().contains("catalog.reloadFailed")) == true })
        let coins = try await emulator.purchase(
            "coins.100",
            account: "alice",
            token: "3a2b1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d"
        )
        #expect(try await server.submitUntilFinished(coins.signedTransaction, as: "alice").status == 200)
    }

    @Test func aProratedRefundTakesBackAConsumablesShareAndKeepsANonConsumablesAccess() async throws {
        let port = try ServeProcess.freePort()
        let emulator = try await EmulatorProcess.start(
            extraArguments: ["--notify-url", "http://127.0.0.1:\(port)/iap/v1/notifications"],
            environment: .production
        )
        defer { emulator.stop() }
        let wallet = try ServeCommandTests.Wallet()
        defer { wallet.stop() }
        let root = try await emulator.saveRootCertificate()
        let arguments =
            [
                "--port", String(port), "--data", emulator.directory.appending(path: "ledger").path, "--catalog",
                try emulator.saveCatalog().path,
            ]
            + (try ServeProcess.grantOptions(wallet.url, directory: emulator.directory))
            + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
        let server = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { server.stop() }
        let token = "7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d"
        let coins = try await emulator.purchase("coins.100", account: "erin", token: token)
        let premium = try await emulator.purchase("premium", account: "erin", token: token)
        #expect(try await server.submitUntilFinished(coins.signedTransaction, as: "erin").status == 200)
        #expect(try await server.submitUntilFinished(premium.signedTransaction, as: "erin").status == 200)

        // 33.333 % of 100 coins back: 33 taken back (rounded down, in the customer's favour), 67 left.
        let refunds = [(coins.transactionId, 33_333), (premium.transactionId, 40_000)]
        for (id, percentage) in refunds {
            let answer = try await emulator.post(
                "/emulator/v1/transactions/\(id)/refund",
                json: #"{"percentage": \#(percentage)}"#
            )
            #expect(answer.status == 200)
        }
        #expect(await eventually { wallet.deliveries.filter { $0.type == .revoke }.count == 2 })
        let coinsBack = try #require(
            wallet.deliveries.first { $0.type == .revoke && $0.transactionId == coins.transactionId }
        )
        #expect(coinsBack.units == 33)
        #expect(coinsBack.revocationType == "REFUND_PRORATED")
        #expect(coinsBack.revocationPercentage == 33_333)
        #expect(coinsBack.accessKept == nil)
        let premiumBack = try #require(
            wallet.deliveries.first { $0.type == .revoke && $0.transactionId == premium.transactionId }
        )
        #expect(premiumBack.units == 0)
        #expect(premiumBack.accessKept == true)
        #expect(premiumBack.revocationPercentage == 40_000)

        let listing = try ServeCommandTests.object(
            try await server.send("GET", "/iap/v1/users/erin/entitlements", bearer: ServeProcess.serviceToken)
        )
        #expect((listing["balances"] as? [String: Any])?["coins.100"] as? Int == 67)
        let rows = listing["entitlements"] as? [[String: Any]] ?? []
        #expect(rows.contains { $0["productId"] as? String == "premium" && $0["hasAccess"] as? Bool == true })
        let history = try ServeCommandTests.object(
            try await server.send("GET", "/iap/v1/users/erin/history", bearer: ServeProcess.serviceToken)
        )
        let items = history["items"] as? [[String: Any]] ?? []
        #expect(items.filter { $0["state"] as? String == "partlyRefunded" }.count == 2)
        #expect(items.contains { $0["revocationPercentage"] as? Int == 33_333 })
    }

    @Test func aRedirectingWebhookAndOddTransferCodingsAreAnsweredAtOnceByIAPServe() async throws {
        let emulator = try await EmulatorProcess.start(environment: .production)
        defer { emulator.stop() }
        // The redirect's target records what reaches it: nothing may.
        let target = try LoopbackServer { _ in .respond(status: 200, headers: [:], body: Data()) }
        defer { target.stop() }
        let redirecting = try LoopbackServer { _ in
            .respond(status: 307, headers: ["Location": "\(target.url)/stolen"], body: Data())
        }
        defer { redirecting.stop() }
        let root = try await emulator.saveRootCertificate()
        let arguments =
            [
                "--port", "0", "--data", emulator.directory.appending(path: "ledger").path, "--catalog",
                try emulator.saveCatalog().path,
            ]
            + (try ServeProcess.grantOptions(
                redirecting.url.appending(path: "iap/deliveries"),
                directory: emulator.directory
            ))
            + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
        let server = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { server.stop() }

        let premium = try await emulator.purchase(
            "premium",
            account: "gail",
            token: "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e"
        )
        let answer = try await server.submit(premium.signedTransaction, as: "gail")
        #expect(answer.status == 202)
        #expect(try ServeCommandTests.object(answer)["outcome"] as? String == "deferred")
        #expect(redirecting.requests.count == 1)
        #expect(target.requests.isEmpty)
        #expect(try server.standardError().contains(#""event":"delivery.failed""#))

        // An unknown transfer coding: 501 at once; a chunked body past the cap: 413 at once.
        let odd = try server.raw(
            Array(
                "POST /iap/v1/notifications HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: xchunked\r\n\r\n"
                    .utf8
            ),
            halfClose: false
        )
        #expect(odd.hasPrefix("HTTP/1.1 501"), "\(odd)")
        let chunk = String(repeating: "a", count: 65_536)
        var oversized = "POST /iap/v1/notifications HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        oversized += "Transfer-Encoding: chunked\r\n\r\n"
        for _ in 0..<12 {
            oversized += "10000\r\n\(chunk)\r\n"
        }
        oversized += "0\r\n\r\n"
        let tooLarge = try server.raw(Array(oversized.utf8), halfClose: false)
        #expect(tooLarge.hasPrefix("HTTP/1.1 413"), "\(tooLarge.prefix(200))")
        #expect(try await server.send("GET", "/healthz").status == 200)

        // The failed attempt is recorded with the redirect's status.
        server.stop()
        let export = try await CLI.iap([
            "ledger", "export", "--data", emulator.directory.appending(path: "ledger").path,
        ])
        let entry = try CLI.json(try #require(export.stdoutLines.first))
        #expect(entry["deliveryState"] as? String == "retrying")
        #expect((entry["lastError"] as? String)?.contains("HTTP 307") == true, "\(entry)")
    }

    @Test func ledgerOnlyWithoutACatalogNotesItAndDeliversAsTheSignedTypeSays() async throws {
        let emulator = try await EmulatorProcess.start(environment: .production)
        defer { emulator.stop() }
        let root = try await emulator.saveRootCertificate()
        let data = emulator.directory.appending(path: "ledger")
        let arguments =
            ["--port", "0", "--data", data.path, "--ledger-only"]
            + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
        let server = try await ServeProcess.start(arguments, directory: emulator.directory)
        let token = "1f2e3d4c-5b6a-4789-8a9b-0c1d2e3f4a5b"
        let coins = try await emulator.purchase("coins.100", account: "bob", token: token)
        let premium = try await emulator.purchase("premium", account: "bob", token: token)
        #expect(try await server.submitUntilFinished(coins.signedTransaction, as: "bob").status == 200)
        #expect(try await server.submitUntilFinished(premium.signedTransaction, as: "bob").status == 200)
        let listing = try ServeCommandTests.object(
            try await server.send("GET", "/iap/v1/users/bob/entitlements", bearer: ServeProcess.serviceToken)
        )
        // One unit per item bought: the signed transaction names a consumable, not its pack size.
        #expect((listing["balances"] as? [String: Any])?["coins.100"] as? Int == 1)
        let rows = listing["entitlements"] as? [[String: Any]] ?? []
        #expect(rows.contains { $0["productId"] as? String == "premium" && $0["hasAccess"] as? Bool == true })
        server.stop()
        #expect(try server.standardError().contains("note: no catalog"))

        let check = try await CLI.iap(["ledger", "check", "--data", data.path])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdoutLines.contains { $0.hasPrefix("note: no catalog is saved with the ledger") })
    }

    @Test func aSandboxRefundOfAProductionTransactionIdIsRefusedAndChangesNothing() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-env-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rootFile = directory.appending(path: "root.der")
        let pki = try Self.testPKI(rootAt: rootFile)
        let signer = JWSSigner(key: pki.leafKey, certificateChain: pki.x5c)
        let now = Date(millisecondsSince1970: 1_767_225_600_000)
        var purchase = TransactionPayload(
            originalTransactionId: "2000000000000001",
            transactionId: "2000000000000001",
            bundleId: "com.example.app",
            productId: "premium",
            purchaseDate: now,
            originalPurchaseDate: now,
            quantity: 1,
            type: .nonConsumable,
            inAppOwnershipType: .purchased,
            signedDate: now,
            environment: .production
        )
        purchase.appTransactionId = nil
        var refund = purchase
        refund.environment = .sandbox
        refund.revocationDate = now.addingTimeInterval(60)
        refund.revocationReason = .refundedForOtherReason
        refund.signedDate = now.addingTimeInterval(60)
        let input = try signer.sign(purchase) + "\n" + signer.sign(refund) + "\n"
        let catalog = directory.appending(path: "catalog.json")
        try Data(
            #"{"version": 1, "products": [{"productId": "premium", "type": "nonConsumable"}]}"#.utf8
        ).write(to: catalog)
        let data = directory.appending(path: "ledger").path
        let ingest = try await CLI.iap(
            [
                "ledger", "ingest", "--data", data, "--catalog", catalog.path, "--root", rootFile.path,
                "--bundle-id", "com.example.app", "--environment", "Production,Sandbox", "--app-apple-id", "1",
                "--user", "alice", "--ledger-only",
            ],
            input: Data(input.utf8)
        )
        #expect(ingest.status == 1)
        #expect(ingest.stdoutLines == ["ACK 2000000000000001 delivered", "REJECT 2 environmentMismatch"])
        let export = try await CLI.iap(["ledger", "export", "--data", data])
        let entry = try CLI.json(try #require(export.stdoutLines.first))
        #expect(export.stdoutLines.count == 1)
        #expect((entry["transaction"] as? [String: Any])?["environment"] as? String == "Production")
        #expect(entry["revokedAt"] == nil)
        #expect(entry["userId"] as? String == "alice")
    }
}
