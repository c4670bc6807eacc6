// A child process for the signal tests (IntegrationTests/SignalStopTests): it waits for SIGTERM as a program that
// embeds swift-iap does, and says when it is ready and what stopped it.
//
//   SignalStopHelper shutdown-signals
//   SignalStopHelper purchase-server DIRECTORY
//
// `shutdown-signals` creates a ShutdownSignals (SIGINT and SIGTERM), prints `ready`, waits, prints `signal N` and
// exits 0. `purchase-server` runs a PurchaseServer on a file ledger in DIRECTORY (created), `run()` awaited inside a
// Task, prints `listening on ORIGIN` once it serves, and when the run returns prints `stopped by N` and exits 0.
// Exit status 2 for a usage error, 1 when the server fails.
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

default:
    fail("usage: SignalStopHelper shutdown-signals | purchase-server DIRECTORY", status: 2)
}
