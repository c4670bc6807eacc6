import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPPurchaseServer
import IAPServerAPI
import IAPTransportURLSession
import IAPWebhook

/// `iap serve`'s composition: the settings and the ledger site turned into a `PurchaseServer`'s configuration.
enum ServeServer {
    /// Opens the ledger site, picks the catalog, and makes a purchase server on them (`run` starts it).
    ///
    /// - Throws: A usage error for a grant path without a catalog; ``IAPError`` when the ledger or the stores beside
    ///   it cannot be opened (the site is closed again).
    static func make(_ settings: ServeSettings, _ parsed: Arguments) async throws -> PurchaseServer {
        let grant = try GrantOptions.hook(settings.grant)
        let path: PurchaseServer.Grant
        if case .ledgerOnly = settings.grant {
            path = .ledgerOnly
        } else {
            path = .hook(grant.hook, description: grant.description)
        }
        // What can be refused without the ledger (an address that is not one) is refused before it is created.
        var http = PurchaseServer.httpConfiguration(host: settings.host, port: settings.port)
        http.maximumConnectionsPerAddress = settings.connectionsPerAddress
        try http.validate()
        // Each app's catalog is read before the ledger is opened: a missing one stops the program first.
        var apps: [PurchaseServer.App] = []
        for (app, verifier) in settings.apps {
            apps.append(PurchaseServer.App(bundleId: app.bundleId, verifier: verifier, catalog: try app.loadCatalog()))
        }
        let site = try await CommandLedger.open(parsed, access: .create)
        let server: PurchaseServer
        do {
            let choice =
                apps.isEmpty
                ? try CatalogChoice.choose(
                    try await site.catalog(parsed, save: true),
                    grant: settings.grant,
                    command: "iap serve"
                ) : CatalogChoice(catalog: ReloadableProductCatalog(.empty), unknownProducts: .park)
            var configuration = PurchaseServer.Configuration(
                site: site,
                verifier: settings.verifier,
                catalog: choice.catalog.catalog,
                grant: path,
                users: settings.users,
                service: settings.service,
                host: settings.host,
                port: settings.port
            )
            configuration.apps = apps
            configuration.http = http
            configuration.console = settings.console
            configuration.delivery.unknownProducts = choice.unknownProducts
            configuration.delivery.tokenOwnership = settings.tokenOwnership
            configuration.delivery.proratedRefunds = settings.proratedRefunds
            configuration.rescindConsent = settings.rescindConsent
            if case .webhook(let url, let secret) = settings.grant {
                configuration.appNotifications = WebhookAppNotificationForwarder(
                    url: url,
                    authenticator: try HMACSHA256(key: secret),
                    transport: URLSessionTransport(redirects: .none),
                    ledger: site.store
                )
            }
            configuration.events = settings.events
            if let clients = settings.api {
                configuration.api = PurchaseServer.AppStoreAPI(
                    clients: clients,
                    reconcileEvery: settings.reconcileEvery
                )
            }
            server = try PurchaseServer(configuration)
        } catch {
            await site.close()
            throw error
        }
        // The server closes the site from here on, also when it does not start.
        return server
    }

    /// Reads the catalog again (`--catalog FILE`, else the one saved with the ledger) and hands it to the server,
    /// which delivers what was parked for products it did not know: what `SIGHUP` does. A catalog that cannot be
    /// read leaves the one in use as it was; either way an event (`catalog.reloaded` or `catalog.reloadFailed`) says
    /// what happened.
    ///
    /// - Parameters:
    ///   - server: The running server.
    ///   - parsed: The command line the server started with.
    static func reloadCatalog(_ server: PurchaseServer, _ parsed: Arguments) async {
        guard server.configuration.apps.isEmpty else {
            // A server of several apps: each app's catalog from its own file.
            for text in parsed.values("app") {
                guard let app = try? ServeApp.parse(text) else { continue }
                await server.reloadCatalog(bundleId: app.bundleId) { try app.loadCatalog() }
            }
            return
        }
        await server.reloadCatalog {
            guard let fresh = try await server.configuration.site.catalog(parsed, save: true) else {
                throw IAPError(.notFound, "no catalog to reload: give --catalog FILE")
            }
            return fresh
        }
    }
}
