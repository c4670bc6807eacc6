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

/// `PurchaseServer` as Documentation/Server.md embeds it: a configuration in, a server on a file ledger out, a
/// submission served over HTTP, a graceful stop that closes the ledger.
@Suite("Purchase server")
struct PurchaseServerTests {
    static let userSecret = "user-jwt-secret-of-the-embedded-server-0123"
    static let serviceToken = "service-token-of-the-embedded-server-4f1e"

    /// A temporary directory, a simulated App Store of Production and a configuration on a file ledger.
    struct Setup {
        let directory: URL
        let appStore: SimulatedAppStore
        let catalog: StaticProductCatalog
        let events = InMemoryEventSink()

        init(products: [String] = ["coins.100"]) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("iap-server-\(UUID().uuidString)")
            let all = [
                CatalogProduct(productId: "coins.100", kind: .consumable, entitlements: [], unitsPerPurchase: 100),
                CatalogProduct(productId: "gems.10", kind: .consumable, entitlements: [], unitsPerPurchase: 10),
            ]
            catalog = try StaticProductCatalog(products: all.filter { products.contains($0.productId) })
            appStore = try SimulatedAppStore(
                products: all,
                configuration: .init(environment: .production),
                clock: ManualClock(now: SystemClock().now)
            )
        }

        func configuration() throws -> PurchaseServer.Configuration {
            var configuration = PurchaseServer.Configuration(
                site: try FileLedgerSite(directory: directory, access: .create),
                verifier: try AppStoreSignedDataVerifier(configuration: appStore.verifierConfiguration),
                catalog: catalog,
                grant: .ledgerOnly,
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

    /// A user token for `user`, valid for an hour.
    static func userToken(_ user: String) throws -> String {
        let now = SystemClock().now.millisecondsSince1970 / 1_000
        let header = Base64.encodeURL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let claims = Base64.encodeURL(Array(#"{"sub":"\#(user)","iat":\#(now),"exp":\#(now + 3_600)}"#.utf8))
        let input = header + "." + claims
        let code = try HMACSHA256(key: Array(userSecret.utf8)).authenticationCode(for: Array(input.utf8))
        return input + "." + Base64.encodeURL(code)
    }

    static func post(_ server: PurchaseServer, _ path: String, body: String, headers: [String: String]) async throws
        -> HTTPResponse
    {
        let origin = try #require(server.origin)
        let url = try #require(URL(string: origin + path))
        return try await URLSessionTransport().send(
            HTTPRequest(method: "POST", url: url, headers: headers, body: Data(body.utf8), timeout: .seconds(60))
        )
    }

    @Test func aServerOnAFileLedgerServesASubmissionOverHTTPAndClosesTheLedgerWhenItStops() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let server = try PurchaseServer(try setup.configuration())
        try await server.start()
        #expect(server.port != nil && server.port != 0)
        #expect(setup.events.events.contains { $0.event == "server.started" })

        let purchase = try #require(
            try await setup.appStore.purchase(productId: "coins.100", account: "alice").transaction
        )
        let answer = try await Self.post(
            server,
            "/iap/v1/transactions",
            body: #"{"signedTransaction":"\#(purchase.signedTransaction)"}"#,
            headers: ["Authorization": "Bearer \(try Self.userToken("alice"))", "Content-Type": "application/json"]
        )
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        let result = try JSONDecoder().decode(TransactionSubmissionResult.self, from: answer.body)
        #expect(result.outcome == .delivered)

        await server.stop()
        await server.stop()  // a second stop does nothing
        #expect(server.origin == nil)
        #expect(setup.events.events.map(\.event).suffix(2) == ["server.stopping", "server.stopped"])
        // The ledger was closed: another process (here, this one) may open it, and it holds the delivery.
        let reopened = try FileLedgerSite(directory: setup.directory, access: .readOnly)
        let entry = try await reopened.store.entry(transactionId: try #require(purchase.payload.transactionId))
        #expect(entry?.deliveryState == .delivered)
        #expect(entry?.userId == "alice")
        await reopened.close()
    }

    @Test func aServerStartsOnceAndAServerThatCannotListenClosesItsLedger() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let first = try PurchaseServer(try setup.configuration())
        try await first.start()
        await #expect(throws: IAPError.self) { try await first.start() }
        await first.stop()

        // Another server on a port in use: it does not start, and leaves the ledger closed for the next one.
        let other = try Setup()
        defer { other.remove() }
        let blocker = try PurchaseServer(try other.configuration())
        try await blocker.start()
        var configuration = try setup.configuration()
        configuration.http.port = try #require(blocker.port)
        let refused = try PurchaseServer(configuration)
        await #expect(throws: (any Error).self) { try await refused.start() }
        #expect(refused.origin == nil)
        let again = try FileLedgerSite(directory: setup.directory, access: .readWrite)
        await again.close()
        await blocker.stop()
    }

    @Test func aReloadedCatalogDeliversWhatWasParkedForAProductItDidNotKnow() async throws {
        let setup = try Setup(products: ["coins.100"])
        defer { setup.remove() }
        let server = try PurchaseServer(try setup.configuration())
        try await server.start()
        let purchase = try #require(
            try await setup.appStore.purchase(productId: "gems.10", account: "bob").transaction
        )
        let parked = try await Self.post(
            server,
            "/iap/v1/transactions",
            body: #"{"signedTransaction":"\#(purchase.signedTransaction)"}"#,
            headers: ["Authorization": "Bearer \(try Self.userToken("bob"))", "Content-Type": "application/json"]
        )
        #expect(parked.status == 202)

        let report = await server.reloadCatalog(try StaticProductCatalog(products: setup.appStore.products))
        #expect(report.delivered == 1)
        #expect(setup.events.events.contains { $0.event == "catalog.reloaded" })
        let entry = try await server.pipeline.store.entry(transactionId: try #require(purchase.payload.transactionId))
        #expect(entry?.deliveryState == .delivered)
        await server.stop()
    }

    @Test func runReturnsWhenAnotherTaskStopsTheServerAndEveryStopWaitsForTheEnd() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let server = try PurchaseServer(try setup.configuration())
        // No signal at all (none of the test process's dispositions changes): only stop() ends the run.
        let announced = LockedValue<[String?]>([])
        let running = Task {
            try await server.run(until: ShutdownSignals([])) { started in
                announced.withLock { $0.append(started.origin) }
            }
        }
        while server.origin == nil {
            try await Task.sleep(for: .milliseconds(10))
        }
        // `started` was called once the server listened, with its address.
        #expect(await eventuallyTrue { announced.withLock { $0 } == [server.origin] })
        async let first: Void = server.stop(reason: "first")
        async let second: Void = server.stop(reason: "second")
        _ = await (first, second)
        // Both returned only once the ledger was closed: it opens again at once.
        let reopened = try FileLedgerSite(directory: setup.directory, access: .readWrite)
        await reopened.close()
        #expect(try await running.value == nil)
        #expect(setup.events.events.filter { $0.event == "server.stopping" }.count == 1)
    }

    @Test func aStopAskedWhileTheServerStartsIsCarriedOutAndAServerNeverStartedClosesItsLedger() async throws {
        let setup = try Setup()
        defer { setup.remove() }
        let server = try PurchaseServer(try setup.configuration())
        async let started: Void = server.start()
        async let stopped: Void = server.stop(reason: "early")
        _ = try await (started, stopped)
        await server.waitUntilStopped()
        #expect(server.origin == nil)
        let reopened = try FileLedgerSite(directory: setup.directory, access: .readWrite)
        await reopened.close()

        let idle = try PurchaseServer(try setup.configuration())
        await idle.stop()
        await #expect(throws: IAPError.self) { try await idle.start() }
        let again = try FileLedgerSite(directory: setup.directory, access: .readWrite)
        await again.close()
    }
}

/// Whether `condition` holds within 10 seconds, checked every 10 ms.
private func eventuallyTrue(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}
