// A child process for the signal tests (IntegrationTests/SignalStopTests): it waits for SIGTERM as a program that
// embeds swift-iap does, and says when it is ready and what stopped it.
//
//   SignalStopHelper shutdown-signals
//   SignalStopHelper purchase-server DIRECTORY
//
// `shutdown-signals` creates a ShutdownSignals (SIGINT and SIGTERM), prints `ready`, waits, prints `signal N` and
// exits 0. `purchase-server` runs a PurchaseServer on a file ledger in DIRECTORY (created), `run()` awaited inside a
// Task, prints `listening on ORIGIN` once it serves, and when the run returns prints `stopped by N` and exits 0.
// `documented CONFIG LEDGER` is the program of Documentation/Server.md as an embedder writes it, trusting a test root
// (its second variant): the secrets CONFIG/user-jwt.secret and CONFIG/service.token read by the library, the test
// root CONFIG/root.der for both environments, the catalog CONFIG/catalog.json, a file ledger in LEDGER, port 0;
// it prints `listening on ORIGIN`, and `stopped by N` when a signal stopped it.
// Exit status 2 for a usage error, 1 when the server fails (its error on standard error).
import Foundation
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPStorageFile
import IAPTesting

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

let arguments = CommandLine.arguments
switch (arguments.count, arguments.dropFirst().first) {
case (2, "shutdown-signals"):
    let signals = ShutdownSignals()
    say("ready")
    let received = await signals.wait()
    say("signal \(received)")
    exit(0)

case (3, "purchase-server"):
    // First, as the documentation asks: from here on SIGTERM is kept for the server.
    let signals = ShutdownSignals()
    do {
        let directory = URL(filePath: arguments[2])
        let product = CatalogProduct(productId: "coins.100", kind: .consumable, entitlements: [], unitsPerPurchase: 100)
        let appStore = try SimulatedAppStore(
            products: [product],
            configuration: .init(environment: .production),
            clock: SystemClock()
        )
        let configuration = PurchaseServer.Configuration(
            site: try FileLedgerSite(directory: directory, access: .create),
            verifier: try AppStoreSignedDataVerifier(configuration: appStore.verifierConfiguration),
            catalog: try StaticProductCatalog(products: [product]),
            grant: .ledgerOnly,
            users: HS256UserAuthenticator(secret: try HMACSHA256(key: Array("user-secret-of-the-signal-helper".utf8))),
            service: try ServiceTokenAuthenticator(token: Array("service-token-of-the-signal-helper".utf8))
        )
        let server = try PurchaseServer(configuration)
        let running = Task { try await server.run(until: signals) }
        let deadline = ContinuousClock.now + .seconds(60)
        while server.origin == nil {
            guard ContinuousClock.now < deadline else {
                _ = try await running.value
                fail("purchase-server: not listening after 60 s", status: 1)
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        say("listening on \(server.origin ?? "")")
        let received = try await running.value
        say("stopped by \(received.map(String.init) ?? "stop()")")
        exit(0)
    } catch {
        fail("purchase-server: \(error)", status: 1)
    }

case (4, "documented"):
    let signals = ShutdownSignals()
    do {
        let config = URL(filePath: arguments[2])
        let testRoot = try X509Certificate(
            derEncoded: [UInt8](try Data(contentsOf: config.appending(path: "root.der")))
        )
        let verifier = try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [testRoot],
                bundleId: "com.example.app",
                environments: [.production, .sandbox],
                appAppleId: 1_234_567_890
            )
        )
        let catalog = try StaticProductCatalog(contentsOf: config.appending(path: "catalog.json"))
        let users = try HS256UserAuthenticator(
            secretFile: config.appending(path: "user-jwt.secret"),
            keyedBy: HMACSHA256.init(key:)
        )
        let service = try ServiceTokenAuthenticator(tokenFile: config.appending(path: "service.token"))
        var configuration = PurchaseServer.Configuration(
            site: try FileLedgerSite(directory: URL(filePath: arguments[3]), access: .create),
            verifier: verifier,
            catalog: catalog,
            grant: .ledgerOnly,
            users: users,
            service: service,
            host: "127.0.0.1",
            port: 0
        )
        configuration.events = JSONLinesEventSink.standardError()
        let server = try PurchaseServer(configuration)
        let received = try await server.run(until: signals) { server in
            say("listening on \(server.origin ?? "")")
        }
        say("stopped by \(received.map(String.init) ?? "stop()")")
        exit(0)
    } catch {
        fail("documented: \(error)", status: 1)
    }

default:
    fail("usage: SignalStopHelper shutdown-signals | purchase-server DIRECTORY | documented CONFIG LEDGER", status: 2)
}
