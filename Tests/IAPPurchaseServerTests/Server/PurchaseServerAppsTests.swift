import Foundation
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPStorageFile
import IAPTesting
import IAPTransportURLSession
import Testing

/// One `PurchaseServer` serving two apps into one ledger: a free app on Production and a pro app on the Sandbox, each
/// selling a `coins` product of its own (100 and 500 coins), each signing with its own PKI.
@Suite("Purchase server of several apps")
struct PurchaseServerAppsTests {
    static let free = "com.example.free"
    static let pro = "com.example.pro"

    struct Setup {
        let directory: URL
        let free: SimulatedAppStore
        let pro: SimulatedAppStore
        let wallet = RecordingFulfillmentHook()
        let events = InMemoryEventSink()

        init(proFirstTransactionId: UInt64 = 3_000_000_000_000_001) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("iap-apps-\(UUID().uuidString)")
            let clock = ManualClock(now: SystemClock().now)
            var freeConfiguration = SimulatedAppStore.Configuration(environment: .production)
            freeConfiguration.bundleId = PurchaseServerAppsTests.free
            free = try SimulatedAppStore(
                products: [
                    CatalogProduct(productId: "coins", kind: .consumable, entitlements: [], unitsPerPurchase: 100)
                ],
                configuration: freeConfiguration,
                clock: clock
            )
            var proConfiguration = SimulatedAppStore.Configuration(environment: .sandbox)
            proConfiguration.bundleId = PurchaseServerAppsTests.pro
            proConfiguration.firstTransactionId = proFirstTransactionId
            pro = try SimulatedAppStore(
                products: [
                    CatalogProduct(productId: "coins", kind: .consumable, entitlements: [], unitsPerPurchase: 500)
                ],
                configuration: proConfiguration,
                clock: clock
            )
        }

        func configuration() throws -> PurchaseServer.Configuration {
            var configuration = try PurchaseServer.Configuration(
                site: try FileLedgerSite(directory: directory, access: .create),
                apps: [
                    PurchaseServer.App(
                        bundleId: PurchaseServerAppsTests.free,
                        verifier: try AppStoreSignedDataVerifier(configuration: free.verifierConfiguration),
                        catalog: try StaticProductCatalog(products: free.products)
                    ),
                    PurchaseServer.App(
                        bundleId: PurchaseServerAppsTests.pro,
                        verifier: try AppStoreSignedDataVerifier(configuration: pro.verifierConfiguration),
                        catalog: try StaticProductCatalog(products: pro.products)
                    ),
                ],
                grant: .hook(wallet, description: "recording wallet"),
                users: HS256UserAuthenticator(secret: try HMACSHA256(key: Array(PurchaseServerTests.userSecret.utf8))),
                service: try ServiceTokenAuthenticator(token: Array(PurchaseServerTests.serviceToken.utf8))
            )
            configuration.events = events
            return configuration
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func submit(_ server: PurchaseServer, _ signed: String, as user: String) async throws -> HTTPResponse {
        try await PurchaseServerTests.post(
            server,
            "/iap/v1/transactions",
            body: #"{"signedTransaction":"\#(signed)"}"#,
            headers: [
                "Authorization": "Bearer \(try PurchaseServerTests.userToken(user))",
                "Content-Type": "application/json",
            ]
        )
    }

    /// alice buys coins in each app, and each purchase is delivered through the server's pipeline.
    static func buyCoinsInBothApps(_ setup: Setup, through server: PurchaseServer) async throws {
        for store in [setup.free, setup.pro] {
            let purchase = try #require(try await store.purchase(productId: "coins", account: "a").transaction)
            let outcome = await server.pipeline.submit(signedTransaction: purchase.signedTransaction, userId: "alice")
            #expect(outcome.shouldFinishTransaction, "\(outcome)")
        }
    }

    static func get(_ server: PurchaseServer, _ path: String) async throws -> (status: Int, json: [String: Any]) {
        let origin = try #require(server.origin)
        let url = try #require(URL(string: origin + path))
        let response = try await URLSessionTransport().send(
            HTTPRequest(
                method: "GET",
                url: url,
                headers: ["Authorization": "Bearer \(PurchaseServerTests.serviceToken)"],
                timeout: .seconds(60)
            )
        )
        let json = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        return (response.status, json ?? [:])
    }

    @Test func eachAppsPurchasesGoToItsOwnCatalogAndAreReadPerApp() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let server = try PurchaseServer(try setup.configuration())
        try await server.start()

        let freePurchase = try #require(try await setup.free.purchase(productId: "coins", account: "a").transaction)
        let proPurchase = try #require(try await setup.pro.purchase(productId: "coins", account: "a").transaction)
        for purchase in [freePurchase, proPurchase] {
            let answer = try await Self.submit(server, purchase.signedTransaction, as: "alice")
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        }
        #expect(setup.wallet.calls.map(\.units) == [100, 500])
        #expect(setup.wallet.calls.map(\.transaction.bundleId) == [Self.free, Self.pro])

        // Entitlements and history name the app.
        // Without the app: the user's entitlements in every app, each by its own catalog.
        let everyApp = try await Self.get(server, "/iap/v1/users/alice/entitlements")
        #expect(everyApp.status == 200)
        let apps = try #require(everyApp.json["apps"] as? [[String: Any]])
        #expect(apps.map { $0["bundleId"] as? String } == [Self.free, Self.pro])
        #expect(apps.map { ($0["balances"] as? [String: Int])?["coins"] } == [100, 500])
        #expect(everyApp.json["user"] as? String == "alice")
        let freeCoins = try await Self.get(server, "/iap/v1/users/alice/entitlements?bundleId=\(Self.free)")
        #expect(freeCoins.status == 200)
        #expect((freeCoins.json["balances"] as? [String: Int])?["coins"] == 100)
        let proCoins = try await Self.get(server, "/iap/v1/users/alice/entitlements?bundleId=\(Self.pro)")
        #expect((proCoins.json["balances"] as? [String: Int])?["coins"] == 500)
        #expect(try await Self.get(server, "/iap/v1/users/alice/entitlements?bundleId=com.example.other").status == 400)
        let proHistory = try await Self.get(server, "/iap/v1/users/alice/history?bundleId=\(Self.pro)")
        let items = try #require(proHistory.json["items"] as? [[String: Any]])
        #expect(items.map { $0["transactionId"] as? String } == [proPurchase.payload.transactionId])
        #expect(try await Self.get(server, "/iap/v1/users/alice/history").status == 400)

        // A purchase of an app the server does not serve is refused and changes nothing.
        var otherConfiguration = SimulatedAppStore.Configuration(environment: .production)
        otherConfiguration.bundleId = "com.example.other"
        let other = try SimulatedAppStore(
            products: setup.free.products,
            configuration: otherConfiguration,
            clock: SystemClock()
        )
        let stranger = try #require(try await other.purchase(productId: "coins", account: "b").transaction)
        #expect(try await Self.submit(server, stranger.signedTransaction, as: "alice").status != 200)
        #expect(setup.wallet.calls.count == 2)

        // The metrics count each app under its bundle id, and the stranger as unknown.
        let origin = try #require(server.origin)
        let scrape = try await URLSessionTransport().send(
            HTTPRequest(method: "GET", url: try #require(URL(string: origin + "/metrics")), timeout: .seconds(60))
        )
        let metrics = String(decoding: scrape.body, as: UTF8.self)
        for line in [
            #"iap_submissions_total{app="com.example.free",outcome="delivered"} 1"#,
            #"iap_submissions_total{app="com.example.pro",outcome="delivered"} 1"#,
            #"iap_submissions_total{app="unknown",outcome="rejected"} 1"#,
            #"iap_webhook_requests_total{app="com.example.pro",type="grant",result="success"} 1"#,
            #"iap_verification_failures_total{app="unknown",code="bundleIdMismatch"} 1"#,
        ] {
            #expect(metrics.contains(line + "\n"), "\(line) in \(metrics)")
        }
        await server.stop()
    }

    @Test func aRefundNotificationOfOneAppTakesBackOnlyItsPurchase() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let server = try PurchaseServer(try setup.configuration())
        try await server.start()
        let freePurchase = try #require(try await setup.free.purchase(productId: "coins", account: "a").transaction)
        let proPurchase = try #require(try await setup.pro.purchase(productId: "coins", account: "a").transaction)
        for purchase in [freePurchase, proPurchase] {
            #expect(try await Self.submit(server, purchase.signedTransaction, as: "alice").status == 200)
        }
        _ = await setup.pro.drainNotifications()
        try await setup.pro.refund(transactionId: try #require(proPurchase.payload.transactionId))
        for signed in await setup.pro.drainNotifications() {
            let answer = try await PurchaseServerTests.post(
                server,
                "/iap/v1/notifications",
                body: #"{"signedPayload":"\#(signed)"}"#,
                headers: ["Content-Type": "application/json"]
            )
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        }
        #expect(setup.wallet.balance("alice") == 100)
        let freeEntry = try await server.pipeline.store.entry(
            transactionId: try #require(freePurchase.payload.transactionId)
        )
        #expect(freeEntry?.revokedAt == nil)
        let proEntry = try await server.pipeline.store.entry(
            transactionId: try #require(proPurchase.payload.transactionId)
        )
        #expect(proEntry?.revokedAt != nil)
        await server.stop()
    }

    @Test func twoAppsWhoseTransactionIdsMeetNeverTouchEachOthersEntry() async throws {
        // Both stores hand out the same first id: the second app's purchase meets the first's entry.
        let setup = try Setup(proFirstTransactionId: SimulatedAppStore.Configuration().firstTransactionId)
        defer { setup.remove() }
        let server = try PurchaseServer(try setup.configuration())
        try await server.start()
        let freePurchase = try #require(try await setup.free.purchase(productId: "coins", account: "a").transaction)
        let proPurchase = try #require(try await setup.pro.purchase(productId: "coins", account: "b").transaction)
        #expect(freePurchase.payload.transactionId == proPurchase.payload.transactionId)
        #expect(try await Self.submit(server, freePurchase.signedTransaction, as: "alice").status == 200)
        let refused = try await Self.submit(server, proPurchase.signedTransaction, as: "bob")
        #expect(refused.status != 200)
        let entry = try await server.pipeline.store.entry(
            transactionId: try #require(freePurchase.payload.transactionId)
        )
        #expect(entry?.userId == "alice")
        #expect(entry?.transaction.bundleId == Self.free)
        #expect(setup.wallet.calls.map(\.userId) == ["alice"])
        #expect(setup.events.events.contains { $0.event == "delivery.appConflict" })
        await server.stop()
    }

    @Test func theScheduledReconciliationAsksEachAppsOwnAPIAndDeliversWhatEachLost() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        var configuration = try setup.configuration()
        let free = try SimulatedAppStoreTransport.connect(to: setup.free)
        let pro = try SimulatedAppStoreTransport.connect(to: setup.pro)
        configuration.api = PurchaseServer.AppStoreAPI(
            clients: try AppStoreServerAPIClients(apps: [Self.free: [free.client], Self.pro: [pro.client]]),
            reconcileEvery: .milliseconds(200),
            reconciliation: .init(requestsPerSecond: 0)
        )
        let server = try PurchaseServer(configuration)
        try await server.start()
        // Each app's customer makes two purchases with alice's token; the app reports the first only (the second is a
        // lost order, whose owner the token names).
        let token = UUID()
        var lost: [String] = []
        for store in [setup.free, setup.pro] {
            let reported = try #require(
                try await store.purchase(productId: "coins", account: "a", appAccountToken: token).transaction
            )
            #expect(try await Self.submit(server, reported.signedTransaction, as: "alice").status == 200)
            let missed = try #require(
                try await store.purchase(productId: "coins", account: "a", appAccountToken: token).transaction
            )
            lost.append(try #require(missed.payload.transactionId))
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, setup.wallet.balance("alice") < 1_200 {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(setup.wallet.balance("alice") == 1_200)
        for (transactionId, bundleId) in zip(lost, [Self.free, Self.pro]) {
            let entry = try await server.pipeline.store.entry(transactionId: transactionId)
            #expect(entry?.deliveryState == .delivered)
            #expect(entry?.transaction.bundleId == bundleId)
        }
        // Each app's API was asked (each checks that the token names its bundle id: another app's is refused).
        #expect(!free.transport.requests.isEmpty && !pro.transport.requests.isEmpty)
        await server.stop()
    }

    @Test func aReconciliationOfOneAppLeavesTheOtherAppsFamiliesAlone() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let server = try PurchaseServer(try setup.configuration())
        try await Self.buyCoinsInBothApps(setup, through: server)
        let free = try SimulatedAppStoreTransport.connect(to: setup.free)
        var configuration = Reconciler.Configuration(requestsPerSecond: 0)
        configuration.apps = [Self.free]
        let reconciler = Reconciler(
            client: free.client,
            pipeline: server.pipeline,
            checkpoints: nil,
            configuration: configuration
        )
        let summary = try await reconciler.reconcileLedger()
        #expect(summary.families == 1)
        #expect(summary.otherApps == 1)
        #expect(summary.failed == 0)
        let report = try await reconciler.reconcile(userId: "alice")
        #expect(report.stillFailing.isEmpty)
        // Every request went to the free app's API, and none asked about the pro app's purchase.
        #expect(!free.transport.requests.isEmpty)
        await server.stop()
    }

    @Test func theConsoleShowsEachAppsEntitlementsAndItsAnalyticsOneAppAtATime() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let server = try PurchaseServer(try setup.configuration())
        try await Self.buyCoinsInBothApps(setup, through: server)
        var operators = ConsoleOperators(derivation: PBKDF2HMACSHA256())
        try operators.set(name: "carol", role: .admin, password: "correct horse battery")
        let routes = ConsoleRoutes(
            operators: operators,
            sessions: ConsoleSessions(authenticator: try HMACSHA256(key: ConsoleRoutesTests.secret)),
            pipeline: server.pipeline,
            ledger: server.configuration.site.store,
            readiness: ServerReadiness(ready: true),
            audit: InMemorySupportAuditLog()
        )
        let client = RouterTester(router: routes.router)
        let host = [("Host", ConsoleRoutesTests.host)]
        let signIn = try await client.send(
            "POST",
            "/console/sign-in",
            headers: host + [
                ("Content-Type", "application/x-www-form-urlencoded"), ("Origin", ConsoleRoutesTests.origin),
            ],
            body: "operator=carol&password=correct+horse+battery"
        )
        let cookie = String(try #require(signIn.headers["Set-Cookie"]).split(separator: ";")[0])
        let customer = try await client.send("GET", "/console/customer?q=alice", headers: host + [("Cookie", cookie)])
        #expect(customer.status == 200, "\(customer.text)")
        for app in [Self.free, Self.pro] {
            #expect(customer.text.contains("Entitlements now in \(app)"), "\(customer.text)")
        }
        let analytics = try await client.send(
            "GET",
            "/console/analytics?from=2020-01-01&to=2040-01-01&interval=month&bundleId=\(Self.pro)",
            headers: host + [("Cookie", cookie)]
        )
        #expect(analytics.status == 200)
        #expect(analytics.text.contains("Production of \(Self.pro), by month"), "\(analytics.text)")
        #expect(analytics.text.contains("<option selected>\(Self.pro)</option>"))
        await server.stop()
    }

    @Test func aCatalogIsReloadedPerAppAndTheAPINeedsEachAppsClients() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let server = try PurchaseServer(try setup.configuration())
        let more = try StaticProductCatalog(products: [
            CatalogProduct(productId: "coins", kind: .consumable, entitlements: [], unitsPerPurchase: 500),
            CatalogProduct(productId: "gems", kind: .consumable, entitlements: [], unitsPerPurchase: 5),
        ])
        #expect(await server.reloadCatalog(more).errors.map(\.code) == [.invalidArgument])
        #expect(await server.reloadCatalog(more, bundleId: "com.example.other") == nil)
        #expect(await server.reloadCatalog(more, bundleId: Self.pro) != nil)
        #expect(setup.events.events.filter { $0.event == "catalog.reloadFailed" }.count == 2)
        #expect(
            setup.events.events.contains { $0.event == "catalog.reloaded" && $0.message?.contains(Self.pro) == true }
        )
        await server.stop()

        var withAPI = try setup.configuration()
        struct NoTokens: BearerTokenProvider {
            func token() async throws -> String { throw IAPError(.invalidKey, "no key in this test") }
            func invalidate() async {}
        }
        let client = try AppStoreServerAPIClient(
            environment: .production,
            transport: ScriptedTransport(),
            tokenProvider: NoTokens()
        )
        withAPI.api = PurchaseServer.AppStoreAPI(clients: AppStoreServerAPIClients(client))
        #expect(throws: IAPError.self) { _ = try PurchaseServer(withAPI) }
        await withAPI.site.close()
    }
}
