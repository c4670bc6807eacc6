public import IAPCore
public import IAPHTTPServer
public import IAPServerAPI

extension PurchaseServer {
    /// How grants and take-backs reach the customer.
    public enum Grant: Sendable {
        /// The ledger is the entitlement source: the app's backend reads entitlements from it (or from the server's
        /// entitlements endpoint), so a purchase is delivered once it is recorded.
        case ledgerOnly
        /// A hook carries out each grant and take-back (a `WebhookFulfillmentHook` of `IAPWebhook`, or your own);
        /// its calls are counted in `iap_webhook_requests_total`.
        ///
        /// - Parameters:
        ///   - hook: The hook.
        ///   - description: How the audit log and the start-up event name it, such as `webhook wallet.internal`; never
        ///     a secret.
        case hook(any FulfillmentHook, description: String)
        /// The ledger carries out each grant and take-back in the transaction that records it (a wallet kept in the
        /// ledger's database: `PostgresTransactionalFulfillmentStore` of `IAPStoragePostgres` over the site's
        /// `PostgresEntitlementStore`). The store must write into the site's ledger: one that forwards to another
        /// store is refused by ``PurchaseServer/init(_:)``.
        ///
        /// - Parameters:
        ///   - store: The transactional store, wrapping the site's ledger.
        ///   - description: How the audit log and the start-up event name it, such as `transactional wallet`.
        case transactional(any TransactionalFulfillmentStore, description: String)

        /// How the audit log and the start-up event name the grant path.
        public var description: String {
            switch self {
            case .ledgerOnly: "ledger-only"
            case .hook(_, let description): description
            case .transactional(_, let description): description
            }
        }
    }

    /// The App Store Server API, for the scheduled reconciliation and the support endpoints.
    public struct AppStoreAPI: Sendable {
        /// The clients, one per environment the ledger holds; the support endpoints need the Production one.
        public var clients: AppStoreServerAPIClients
        /// The time between the end of a reconciliation and the start of the next; `nil` reconciles never.
        public var reconcileEvery: Duration?
        /// How the reconciler runs (alarm threshold, rate limit, page size).
        public var reconciliation: Reconciler.Configuration
        /// Called when a run's discrepancies exceed the threshold (page someone); the `reconciliation.alarm` event is
        /// reported either way.
        public var alarm: (@Sendable (ReconciliationAlarm) async -> Void)?

        /// Creates the API settings.
        ///
        /// - Parameters:
        ///   - clients: The clients.
        ///   - reconcileEvery: The time between reconciliations; one hour by default, `nil` for never.
        ///   - reconciliation: How the reconciler runs.
        ///   - alarm: Called when a run's discrepancies exceed the threshold.
        public init(
            clients: AppStoreServerAPIClients,
            reconcileEvery: Duration? = .seconds(3600),
            reconciliation: Reconciler.Configuration = Reconciler.Configuration(),
            alarm: (@Sendable (ReconciliationAlarm) async -> Void)? = nil
        ) {
            self.clients = clients
            self.reconcileEvery = reconcileEvery
            self.reconciliation = reconciliation
            self.alarm = alarm
        }
    }

    /// What a purchase server is made of: a configuration value in, a ``PurchaseServer`` out.
    public struct Configuration: Sendable {
        /// The ledger and what is kept beside it (reconciliation checkpoints, the support audit, the lock that lets
        /// one instance of a fleet reconcile at a time). The server closes it when it stops or fails to start; until
        /// then (a server never started and never stopped) it is the caller's.
        public var site: any LedgerSite
        /// Verifies the app's submissions and the App Store's notifications.
        public var verifier: any Verifier
        /// What each product is; ``PurchaseServer/reloadCatalog(_:)`` replaces what it holds.
        public var catalog: ReloadableProductCatalog
        /// How grants and take-backs reach the customer.
        public var grant: Grant
        /// Authenticates the app's user on `POST /iap/v1/transactions`.
        public var users: any UserAuthenticator
        /// The service token of the entitlements, history, account-token and support endpoints.
        public var service: ServiceTokenAuthenticator
        /// The App Store Server API; `nil` reconciles never and answers the support endpoints `501`.
        public var api: AppStoreAPI?
        /// Every delivery policy of the pipeline, as one value: retries, unclaimed tokens, sandbox purchases, token
        /// ownership, prorated refunds, unknown products (parked by default, delivered once a reloaded catalog names
        /// them). The initializer sets the retry policy to the site's for a server
        /// (``LedgerSite/retryPolicy(for:)`` of ``LedgerUse/server``: claims that hold 30 seconds); the rest are the
        /// pipeline's defaults.
        public var delivery: DeliveryPipeline.Policies
        /// Answers the App Store's `CONSUMPTION_REQUEST`s; without one they are acknowledged only.
        public var consumptionRequests: (any ConsumptionRequestHandler)?
        /// Hears the app-level notifications (``NotificationType/appLevel``: `RESCIND_CONSENT`,
        /// `EXTERNAL_PURCHASE_TOKEN`, `METADATA_UPDATE`, `MIGRATION`, `PRICE_CHANGE`) after the server's own handling
        /// (``rescindConsent``); a throw makes the App Store send the notification again. `iap serve` forwards them
        /// on its webhook (`WebhookAppNotificationForwarder` of `IAPWebhook`). `nil` by default.
        public var appNotifications: (any AppNotificationHandler)?
        /// What a `RESCIND_CONSENT` does: ``RescindConsentPolicy/notify`` (the default) or
        /// ``RescindConsentPolicy/revoke``.
        public var rescindConsent: RescindConsentPolicy
        /// Where the HTTP server listens and its limits: ``PurchaseServer/httpConfiguration(host:port:)`` by default.
        /// Its `events` are not used: the HTTP server's failures go to ``events``.
        public var http: HTTPServer.Configuration
        /// Where the server, the pipeline and the engines report what they do (one ``IAPEvent`` each).
        public var events: any EventSink
        /// How often the retry queue is drained.
        public var drainInterval: Duration
        /// The operations console, on a listener of its own; `nil` (the default) serves none.
        public var console: PurchaseServer.Console?
        /// The apps served, when the server serves several into one ledger: each app's data goes to its own verifier
        /// and catalog (``AppRoutingVerifier``, ``AppRoutingCatalog``), and ``verifier`` and ``catalog`` are not used.
        /// Empty (the default): one app, ``verifier`` and ``catalog``.
        public var apps: [PurchaseServer.App]

        /// Creates a configuration with the defaults of `iap serve`.
        ///
        /// - Parameters:
        ///   - site: The ledger site.
        ///   - verifier: Verifies what the app and the App Store send.
        ///   - catalog: The products.
        ///   - grant: How grants reach the customer.
        ///   - users: Authenticates the app's users.
        ///   - service: The service token.
        ///   - host: The address to listen on; `127.0.0.1` by default.
        ///   - port: The port; `0` picks a free one (``PurchaseServer/port`` tells which).
        public init(
            site: any LedgerSite,
            verifier: any Verifier,
            catalog: StaticProductCatalog,
            grant: Grant,
            users: any UserAuthenticator,
            service: ServiceTokenAuthenticator,
            host: String = "127.0.0.1",
            port: UInt16 = 0
        ) {
            self.site = site
            self.verifier = verifier
            self.catalog = ReloadableProductCatalog(catalog)
            self.grant = grant
            self.users = users
            self.service = service
            self.api = nil
            self.delivery = DeliveryPipeline.Policies(retry: site.retryPolicy(for: .server))
            self.consumptionRequests = nil
            self.appNotifications = nil
            self.rescindConsent = .notify
            self.http = PurchaseServer.httpConfiguration(host: host, port: port)
            self.events = DiscardingEventSink()
            self.drainInterval = .seconds(1)
            self.console = nil
            self.apps = []
        }

        /// Creates a configuration of a server of several apps, with the defaults of `iap serve`.
        ///
        /// - Parameters:
        ///   - site: The ledger site, one for every app.
        ///   - apps: The apps, each with its bundle id, verifier and catalog.
        ///   - grant: How grants reach the customer; the hook sees each purchase's app in its transaction's `bundleId`.
        ///   - users: Authenticates the apps' users: a user id spans the apps.
        ///   - service: The service token.
        ///   - host: The address to listen on; `127.0.0.1` by default.
        ///   - port: The port; `0` picks a free one.
        /// - Throws: ``IAPError`` `invalidConfiguration` when there is no app.
        public init(
            site: any LedgerSite,
            apps: [PurchaseServer.App],
            grant: Grant,
            users: any UserAuthenticator,
            service: ServiceTokenAuthenticator,
            host: String = "127.0.0.1",
            port: UInt16 = 0
        ) throws {
            guard let first = apps.first else {
                throw IAPError(.invalidConfiguration, "a server of several apps needs at least one app")
            }
            self.init(
                site: site,
                verifier: first.verifier,
                catalog: first.catalog.catalog,
                grant: grant,
                users: users,
                service: service,
                host: host,
                port: port
            )
            self.apps = apps
        }

        /// What a purchase of a product the catalog does not know gets: ``delivery``'s.
        @available(*, deprecated, message: "use delivery.unknownProducts")
        public var unknownProducts: UnknownProductPolicy {
            get { delivery.unknownProducts }
            set { delivery.unknownProducts = newValue }
        }

        /// Whether an unclaimed appAccountToken may go to the user who claims it: ``delivery``'s.
        @available(*, deprecated, message: "use delivery.tokenOwnership")
        public var tokenOwnership: TokenOwnershipCheck? {
            get { delivery.tokenOwnership }
            set { delivery.tokenOwnership = newValue }
        }

        /// What a prorated refund of a non-consumable or a subscription does: ``delivery``'s.
        @available(*, deprecated, message: "use delivery.proratedRefunds")
        public var proratedRefunds: ProratedRefundPolicy {
            get { delivery.proratedRefunds }
            set { delivery.proratedRefunds = newValue }
        }
    }

    /// The most connections served at once.
    public static let maximumConnections = 256

    /// The most connections from one IP address by default: an eighth of ``maximumConnections``, so that one client
    /// cannot take the server from the others. Behind a reverse proxy every client has the proxy's address: raise it.
    public static let defaultConnectionsPerAddress = maximumConnections / 8

    /// The HTTP limits of a purchase server: a body as large as a notification, 256 connections (`503` at once beyond),
    /// 32 from one address (beyond it closed at once), a client idle for 10 seconds dropped, 30 seconds for a whole
    /// request, 10 seconds for the requests in flight at a stop.
    ///
    /// - Parameters:
    ///   - host: The address to listen on.
    ///   - port: The port; `0` picks a free one.
    /// - Returns: The configuration.
    public static func httpConfiguration(host: String, port: UInt16) -> HTTPServer.Configuration {
        var configuration = HTTPServer.Configuration(host: host, port: port)
        configuration.maximumBodySize = PurchaseServerRoutes.maximumBodySize
        configuration.maximumConnections = maximumConnections
        configuration.maximumConnectionsPerAddress = defaultConnectionsPerAddress
        configuration.idleTimeout = .seconds(10)
        configuration.requestDeadline = .seconds(30)
        configuration.shutdownGracePeriod = .seconds(10)
        return configuration
    }
}
