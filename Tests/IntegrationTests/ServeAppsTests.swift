import Foundation
import IAPCore
import IAPCrypto
import IAPTestSupport
import IAPWebhook
import Testing

/// `iap serve` with two apps: two bundle ids, two test roots, two catalogs, one ledger and one webhook.
@Suite("iap serve: several apps")
struct ServeAppsTests {
    typealias CLI = CommandLineContractTests

    static let free = "com.example.free"
    static let pro = "com.example.pro"

    /// `iap testdata transactions` for one app: its root, its signed transactions (coins.100, coins.100,
    /// pro.lifetime, plus.monthly in turn, ids from 2000000000000001).
    static func testdata(_ bundleId: String, count: Int, in directory: URL) async throws -> (root: String, [String]) {
        let root = directory.appending(path: "\(bundleId).der").path
        let made = try await ChildProcess.run(
            try EmulatorProcess.binary(),
            ["testdata", "transactions", "--count", String(count), "--root-out", root, "--bundle-id", bundleId],
            timeout: .seconds(120)
        )
        try #require(made.status == 0, "\(String(decoding: made.standardError, as: UTF8.self))")
        return (root, String(decoding: made.standardOutput, as: UTF8.self).split(separator: "\n").map(String.init))
    }

    /// A catalog whose `coins.100` gives `units`, without the product `without`.
    static func catalog(units: Int, at path: URL, without: String? = nil) throws {
        let products = [
            #"{"productId":"coins.100","type":"consumable","unitsPerPurchase":\#(units),"entitlements":[]}"#,
            #"{"productId":"pro.lifetime","type":"nonConsumable","entitlements":["pro"]}"#,
            #"{"productId":"plus.monthly","type":"autoRenewable","subscriptionGroupId":"plus","groupLevel":1,"#
                + #""entitlements":["plus"]}"#,
        ].filter { product in without.map { !product.contains(#""\#($0)""#) } ?? true }
        try Data((#"{"version":1,"products":["# + products.joined(separator: ",") + "]}").utf8).write(to: path)
    }

    static func text(_ response: HTTPResponse) -> String {
        String(decoding: response.body, as: UTF8.self)
    }

    @Test func twoAppsFromTheConfigFileGrantEachThroughTheWebhookAndNeverTouchEachOther() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-apps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The free app's first purchase and the pro app's first share an id; the pro app's second is its own.
        let (freeRoot, freeTransactions) = try await Self.testdata(Self.free, count: 1, in: directory)
        let (proRoot, proTransactions) = try await Self.testdata(Self.pro, count: 2, in: directory)
        let freeCatalog = directory.appending(path: "free.json")
        let proCatalog = directory.appending(path: "pro.json")
        try Self.catalog(units: 100, at: freeCatalog)
        try Self.catalog(units: 500, at: proCatalog)
        let config = directory.appending(path: "serve.json")
        let apps: [[String: Any]] = [
            ["bundleId": Self.free, "environments": ["Sandbox"], "catalog": freeCatalog.path, "roots": [freeRoot]],
            ["bundleId": Self.pro, "environments": "Sandbox", "catalog": proCatalog.path, "roots": [proRoot]],
        ]
        try JSONSerialization.data(withJSONObject: ["apps": apps, "data": directory.appending(path: "ledger").path])
            .write(to: config)

        let wallet = try ServeCommandTests.Wallet()
        defer { wallet.stop() }
        let server = try await ServeProcess.start(
            ["--port", "0", "--config", config.path]
                + (try ServeProcess.grantOptions(wallet.url, directory: directory)),
            directory: directory
        )
        defer { server.stop() }
        let freeCoins = try await server.submit(freeTransactions[0], as: "alice")
        #expect(freeCoins.status == 200, "\(Self.text(freeCoins))")
        let proCoins = try await server.submit(proTransactions[1], as: "alice")
        #expect(proCoins.status == 200, "\(Self.text(proCoins))")
        // The pro app's purchase whose id the free app's holds: refused, the free app's entry untouched.
        let collision = try await server.submit(proTransactions[0], as: "bob")
        #expect(collision.status != 200, "\(Self.text(collision))")
        #expect(Self.text(collision).contains("bundleIdMismatch"), "\(Self.text(collision))")

        let grants = wallet.deliveries.filter { $0.type == .grant }
        #expect(grants.map(\.bundleId) == [Self.free, Self.pro])
        #expect(grants.map(\.units) == [100, 500])
        #expect(grants.map(\.userId) == ["alice", "alice"])

        let service = ServeProcess.serviceToken
        let everyApp = try await server.send("GET", "/iap/v1/users/alice/entitlements", bearer: service)
        #expect(everyApp.status == 200, "\(Self.text(everyApp))")
        let listed = try ServeCommandTests.object(everyApp)["apps"] as? [[String: Any]]
        #expect(listed?.compactMap { $0["bundleId"] as? String } == [Self.free, Self.pro], "\(Self.text(everyApp))")
        for (bundleId, units) in [(Self.free, 100), (Self.pro, 500)] {
            let listing = try await server.send(
                "GET",
                "/iap/v1/users/alice/entitlements?bundleId=\(bundleId)",
                bearer: service
            )
            #expect(listing.status == 200, "\(Self.text(listing))")
            let balances = try ServeCommandTests.object(listing)["balances"] as? [String: Int]
            #expect(balances?["coins.100"] == units, "\(Self.text(listing))")
            let history = try await server.send(
                "GET",
                "/iap/v1/users/alice/history?bundleId=\(bundleId)",
                bearer: service
            )
            #expect((try ServeCommandTests.object(history)["items"] as? [Any])?.count == 1, "\(Self.text(history))")
        }
        let range = "from=2020-01-01&to=2040-01-01&interval=month&environment=Sandbox"
        let analytics = try await server.send("GET", "/iap/v1/analytics?\(range)&bundleId=\(Self.pro)", bearer: service)
        #expect(analytics.status == 200, "\(Self.text(analytics))")
        let report = try ServeCommandTests.object(analytics)
        #expect(report["bundleId"] as? String == Self.pro)
        let consumables = (report["totals"] as? [String: Any])?["consumableUnits"] as? [String: Any]
        #expect(consumables?["granted"] as? Int == 500, "\(Self.text(analytics))")
        #expect(try await server.send("GET", "/iap/v1/analytics?\(range)", bearer: service).status == 400)
        let bob = try await server.send("GET", "/iap/v1/users/bob/history?bundleId=\(Self.pro)", bearer: service)
        #expect((try ServeCommandTests.object(bob)["items"] as? [Any])?.isEmpty == true, "\(Self.text(bob))")
        #expect(try server.standardError().contains("delivery.appConflict"))
        server.stop()
        let data = directory.appending(path: "ledger").path
        let check = try await CLI.iap(["ledger", "check", "--data", data])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")

        // The ledger commands read one app's purchases with --bundle-id.
        for (bundleId, catalog, units) in [(Self.free, freeCatalog, 100), (Self.pro, proCatalog, 500)] {
            let listing = try await CLI.iap([
                "ledger", "entitlements", "--data", data, "--user", "alice", "--bundle-id", bundleId,
                "--catalog", catalog.path, "--json",
            ])
            #expect(listing.status == 0, "\(listing.stderr)")
            #expect((try CLI.json(listing.stdout)["balances"] as? [String: Int])?["coins.100"] == units)
            let history = try await CLI.iap([
                "ledger", "history", "--data", data, "--user", "alice", "--bundle-id", bundleId, "--json",
            ])
            let items = try CLI.json(history.stdout)["items"] as? [[String: Any]]
            #expect(items?.count == 1, "\(history.stdout)")
            let report = try await CLI.iap([
                "ledger", "analytics", "--data", data, "--from", "2020-01-01", "--to", "2040-01-01", "--interval",
                "month", "--environment", "Sandbox", "--bundle-id", bundleId, "--catalog", catalog.path, "--json",
            ])
            let totals = try CLI.json(report.stdout)["totals"] as? [String: Any]
            #expect((totals?["consumableUnits"] as? [String: Any])?["granted"] as? Int == units, "\(report.stdout)")
        }
    }

    @Test func twoEmulatorsOneAPIKeyOneServerNotificationsSubmissionsAReconciliationAndARefund() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-apps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try P256PrivateKey()
        let port = try ServeProcess.freePort()
        // The first app's store notifies the server; the second's does not (its purchases arrive by the app, and a lost
        // one by the reconciliation). Each hands out ids of its own.
        let first = try await EmulatorProcess.start(
            extraArguments: ["--notify-url", "http://127.0.0.1:\(port)/iap/v1/notifications"],
            key: key,
            directory: directory.appending(path: "first")
        )
        defer { first.stop() }
        let second = try await EmulatorProcess.start(
            extraArguments: ["--first-transaction-id", "3000000000000001"],
            key: key,
            directory: directory.appending(path: "second"),
            bundleId: "com.example.second"
        )
        defer { second.stop() }
        let wallet = try ServeCommandTests.Wallet()
        defer { wallet.stop() }
        var arguments = [
            "--port", String(port), "--data", directory.appending(path: "ledger").path, "--issuer-id",
            EmulatorProcess.issuerId, "--key-id", EmulatorProcess.keyId, "--auth-key",
            first.directory.appending(path: "AuthKey_\(EmulatorProcess.keyId).p8").path, "--reconcile-every", "1s",
        ]
        for emulator in [first, second] {
            let root = try await emulator.saveRootCertificate()
            arguments += [
                "--app",
                "bundle-id=\(emulator.appBundleId) environment=Sandbox catalog=\(try emulator.saveCatalog().path) "
                    + "root=\(root.path) api-url=\(emulator.baseURL.absoluteString)",
            ]
        }
        arguments += try ServeProcess.grantOptions(wallet.url, directory: directory)
        let server = try await ServeProcess.start(arguments, directory: directory)
        defer { server.stop() }
        let token = "6c1f2e3d-4b5a-4968-8776-a5b4c3d2e1f0"
        let bound = try await server.send(
            "POST",
            "/iap/v1/users/alice/account-tokens",
            bearer: ServeProcess.serviceToken,
            headers: ["Content-Type": "application/json"],
            body: #"{"appAccountToken":"\#(token)"}"#
        )
        #expect(bound.status == 201, "\(Self.text(bound))")

        // The first app's purchase arrives by its notification.
        let notified = try await first.purchase("coins.100", account: "alice", token: token)
        #expect(await eventually(30) { wallet.deliveries.contains { $0.transactionId == notified.transactionId } })
        // The second app's arrives by the app; its next one is lost, and the reconciliation finds it.
        let submitted = try await second.purchase("coins.100", account: "alice", token: token)
        let answer = try await server.submitUntilFinished(submitted.signedTransaction, as: "alice")
        #expect(answer.status == 200, "\(Self.text(answer))")
        let lost = try await second.purchase("premium", account: "alice", token: token)
        let found = await eventually(30) { wallet.deliveries.contains { $0.transactionId == lost.transactionId } }
        #expect(found)

        // A refund in the first app takes back its purchase only.
        #expect(try await first.post("/emulator/v1/transactions/\(notified.transactionId)/refund").status == 200)
        #expect(await eventually(30) { wallet.deliveries.contains { $0.type == .revoke } })
        let grants = wallet.deliveries.filter { $0.type == .grant }
        #expect(
            Dictionary(grants.map { ($0.transactionId, $0.bundleId ?? "") }, uniquingKeysWith: { $1 }) == [
                notified.transactionId: EmulatorProcess.bundleId, submitted.transactionId: "com.example.second",
                lost.transactionId: "com.example.second",
            ]
        )
        let revokes = wallet.deliveries.filter { $0.type == .revoke }
        #expect(revokes.map(\.transactionId) == [notified.transactionId])
        #expect(revokes.map(\.bundleId) == [EmulatorProcess.bundleId])
        #expect(grants.allSatisfy { $0.userId == "alice" })
    }

    @Test func aDrainOfALedgerOfSeveralAppsNamesItsAppOrRefuses() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-apps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Each app sells a product its catalog does not name yet (the free app's pro.lifetime, id ...003; the pro app's
        // plus.monthly, id ...004): both purchases are parked.
        let (freeRoot, freeTransactions) = try await Self.testdata(Self.free, count: 3, in: directory)
        let (proRoot, proTransactions) = try await Self.testdata(Self.pro, count: 4, in: directory)
        let freeCatalog = directory.appending(path: "free.json")
        let proCatalog = directory.appending(path: "pro.json")
        let proFull = directory.appending(path: "pro-full.json")
        try Self.catalog(units: 100, at: freeCatalog, without: "pro.lifetime")
        try Self.catalog(units: 500, at: proCatalog, without: "plus.monthly")
        try Self.catalog(units: 500, at: proFull)
        let data = directory.appending(path: "ledger").path
        let server = try await ServeProcess.start(
            [
                "--port", "0", "--data", data, "--ledger-only",
                "--app", "bundle-id=\(Self.free) environment=Sandbox catalog=\(freeCatalog.path) root=\(freeRoot)",
                "--app", "bundle-id=\(Self.pro) environment=Sandbox catalog=\(proCatalog.path) root=\(proRoot)",
            ],
            directory: directory
        )
        for signed in [freeTransactions[2], proTransactions[3]] {
            let parked = try await server.submit(signed, as: "alice")
            #expect(parked.status == 202, "\(Self.text(parked))")
        }
        server.stop()

        // Without --bundle-id the drain does not deliver one app's purchase by the other's catalog.
        let refused = try await CLI.iap(["ledger", "drain", "--data", data, "--ledger-only", "--catalog", proFull.path])
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("several apps (\(Self.free), \(Self.pro))"), "\(refused.stderr)")
        // With it, that app's only.
        let drained = try await CLI.iap([
            "ledger", "drain", "--data", data, "--ledger-only", "--bundle-id", Self.pro, "--catalog", proFull.path,
            "--json",
        ])
        #expect(drained.status == 0, "\(drained.stderr)")
        #expect(try CLI.json(drained.stdout)["delivered"] as? Int == 1, "\(drained.stdout)")
        let stats = try await CLI.iap(["ledger", "stats", "--data", data, "--json"])
        #expect(try CLI.json(stats.stdout)["unknownProduct"] as? Int == 1, "\(stats.stdout)")
    }

    @Test func theAppFormOnTheCommandLineAndItsUsageErrors() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-apps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (root, transactions) = try await Self.testdata(Self.pro, count: 1, in: directory)
        let catalog = directory.appending(path: "pro.json")
        try Self.catalog(units: 500, at: catalog)
        let data = directory.appending(path: "ledger").path
        let app = "bundle-id=\(Self.pro) environment=Sandbox catalog=\(catalog.path) root=\(root)"

        let server = try await ServeProcess.start(
            ["--port", "0", "--data", data, "--ledger-only", "--app", app],
            directory: directory
        )
        let bought = try await server.submit(transactions[0], as: "carol")
        #expect(bought.status == 200, "\(Self.text(bought))")
        // One app: the bundle id may be left out.
        let listing = try await server.send(
            "GET",
            "/iap/v1/users/carol/entitlements",
            bearer: ServeProcess.serviceToken
        )
        #expect((try ServeCommandTests.object(listing)["balances"] as? [String: Int])?["coins.100"] == 500)
        server.stop()

        // With one API key for every app: the server starts, each app's clients naming its bundle id.
        let key = directory.appending(path: "AuthKey.p8")
        try ServeProcess.writePrivate(try P256PrivateKey().pemRepresentation, to: key)
        let other = "bundle-id=com.example.other environment=Sandbox catalog=\(catalog.path) root=\(root)"
        let withAPI = try await ServeProcess.start(
            [
                "--port", "0", "--data", data, "--ledger-only", "--app", app, "--app", other, "--issuer-id",
                "57246542-96fe-1a63-e053-0824d011072a", "--key-id", "KEY1", "--auth-key", key.path, "--api-url",
                "http://127.0.0.1:9", "--reconcile-every", "off",
            ],
            directory: directory
        )
        #expect(try await withAPI.send("GET", "/readyz").status == 200)
        withAPI.stop()

        let secrets = [
            "--user-jwt-secret-file", directory.appending(path: "user-jwt.secret").path,
            "--service-token-file", directory.appending(path: "service.token").path,
        ]
        for (extra, says) in [
            (["--app", app, "--bundle-id", Self.pro], "--bundle-id is a setting of one app"),
            (["--app", app, "--app", app], "given twice"),
            (["--app", "bundle-id=\(Self.pro) environment=Sandbox root=\(root)"], "catalog=FILE is required"),
            (["--app", "bundle-id=\(Self.pro) colour=blue"], "unknown key 'colour'"),
            (["--app", "bundle-id=\(Self.pro) environment=Production catalog=\(catalog.path)"], "app-apple-id"),
            (["--app", app, "--issuer-id", "I"], "--issuer-id, --key-id and --auth-key together"),
        ] {
            let run = try await CLI.iap(["serve", "--port", "0", "--data", data, "--ledger-only"] + secrets + extra)
            #expect(run.status == 2, "\(extra): \(run.stderr)")
            #expect(run.stderr.contains(says), "\(extra): \(run.stderr)")
        }
    }
}
