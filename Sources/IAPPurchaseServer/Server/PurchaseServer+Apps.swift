public import IAPCore
import IAPServerAPI

extension PurchaseServer {
    /// One app of a server that serves several (a free and a pro app, an iPad app): its bundle id, the verifier of
    /// its data and its products.
    public struct App: Sendable {
        /// The app's bundle id: the signed data that names it goes to this app's verifier and catalog.
        public var bundleId: String
        /// Verifies the app's data: it checks this bundle id, the app's environments and roots.
        public var verifier: any Verifier
        /// The app's products; ``PurchaseServer/reloadCatalog(_:bundleId:)`` replaces what it holds.
        public var catalog: ReloadableProductCatalog

        /// Creates an app.
        ///
        /// - Parameters:
        ///   - bundleId: The bundle id.
        ///   - verifier: Verifies the app's data (an `AppStoreSignedDataVerifier` configured with this bundle id).
        ///   - catalog: The app's products.
        public init(bundleId: String, verifier: any Verifier, catalog: StaticProductCatalog) {
            self.bundleId = bundleId
            self.verifier = verifier
            self.catalog = ReloadableProductCatalog(catalog)
        }
    }

    /// The verifier and the catalog the pipeline uses: the configuration's, or with ``Configuration/apps`` ones that
    /// route each app's data to its own.
    static func routing(_ configuration: Configuration) throws -> (verifier: any Verifier, catalog: any ProductCatalog)
    {
        guard !configuration.apps.isEmpty else { return (configuration.verifier, configuration.catalog) }
        var verifiers: [String: any Verifier] = [:]
        var catalogs: [String: any ProductCatalog] = [:]
        for app in configuration.apps {
            guard verifiers.updateValue(app.verifier, forKey: app.bundleId) == nil else {
                throw IAPError(.invalidConfiguration, "the app \(app.bundleId) is configured twice")
            }
            catalogs[app.bundleId] = app.catalog
        }
        if let api = configuration.api, configuration.apps.count > 1 {
            let served = configuration.apps.map(\.bundleId).sorted()
            guard api.clients.bundleIds == served else {
                throw IAPError(
                    .invalidConfiguration,
                    "the App Store Server API of a server of several apps needs the clients of each app "
                        + "(AppStoreServerAPIClients(apps:), one token per bundle id): it serves "
                        + served.joined(separator: ", ") + ", the clients are of "
                        + (api.clients.bundleIds.isEmpty ? "one app" : api.clients.bundleIds.joined(separator: ", "))
                )
            }
        }
        return (try AppRoutingVerifier(verifiers), try AppRoutingCatalog(catalogs))
    }
}
