import Foundation
import IAPCore
import IAPHTTPServer
import IAPServerAPI
import IAPStorageFile

/// A running `iap serve`: the ledger and its stores, the pipeline, the routes on an `HTTPServer`, the background
/// worker.
struct ServeServer {
    let http: HTTPServer
    let worker: PurchaseServerWorker
    let readiness: ServerReadiness
    let ledger: CommandLedger
    let stores: ServeStores
    let events: any EventSink

    /// How long a delivery claim holds: longer than a webhook call may take (its timeout is 10 seconds), short enough
    /// that what a killed server was delivering is picked up again soon after it restarts.
    static let claimDuration: Duration = .seconds(30)

    /// The HTTP limits: a body as large as a notification, 256 connections (503 at once beyond), a client idle for
    /// 10 seconds dropped, 30 seconds for a whole request, 10 seconds for the requests in flight at a stop.
    static func httpConfiguration(_ settings: ServeSettings, events: any EventSink) -> HTTPServer.Configuration {
        var configuration = HTTPServer.Configuration(host: settings.host, port: settings.port)
        configuration.maximumBodySize = PurchaseServerRoutes.maximumBodySize
        configuration.maximumConnections = 256
        configuration.idleTimeout = .seconds(10)
        configuration.requestDeadline = .seconds(30)
        configuration.shutdownGracePeriod = .seconds(10)
        configuration.events = HTTPFailureEvents(events)
        return configuration
    }

    /// Opens the ledger and its stores, composes the server and starts it listening and working.
    static func start(_ settings: ServeSettings, _ parsed: Arguments) async throws -> ServeServer {
        let events = settings.events
        let grant = try GrantOptions.hook(settings.grant)
        let metrics = try PurchaseServerMetrics()
        let hook: any FulfillmentHook
        if case .webhook = settings.grant {
            hook = metrics.measuring(grant.hook)
        } else {
            hook = grant.hook
        }
        let ledger = try await CommandLedger.open(parsed, access: .create)
        let catalog: any ProductCatalog
        let stores: ServeStores
        do {
            catalog = try await ledger.catalog(parsed, save: true) ?? NonConsumableCatalog()
            stores = try await ServeStores.open(for: ledger)
        } catch {
            await ledger.store.close()
            throw error
        }
        let clock = SystemClock()
        let pipeline = DeliveryPipeline(
            verifier: settings.verifier,
            catalog: catalog,
            store: ledger.store,
            hook: hook,
            clock: clock,
            retryPolicy: RetryPolicy(claimDuration: claimDuration),
            tokenOwnership: settings.tokenOwnership,
            events: events
        )
        let processor = NotificationProcessor(
            verifier: settings.verifier,
            pipeline: pipeline,
            store: ledger.store,
            clock: clock
        )
        var reconciler: Reconciler?
        var support: OrderLookup?
        if let api = settings.api {
            reconciler = Reconciler(
                clients: api.clients,
                verifier: settings.verifier,
                pipeline: pipeline,
                store: ledger.store,
                checkpoints: stores.checkpoints,
                wallClock: clock,
                events: events
            )
            if let audit = stores.audit {
                support = OrderLookup(
                    clients: api.clients,
                    verifier: settings.verifier,
                    store: ledger.store,
                    pipeline: pipeline,
                    auditLog: audit,
                    clock: clock,
                    fulfillment: grant.description,
                    events: events
                )
            }
        }
        let readiness = ServerReadiness()
        let routes = PurchaseServerRoutes(
            submissions: TransactionSubmissionHandler(pipeline: pipeline),
            notifications: processor,
            store: ledger.store,
            catalog: catalog,
            users: settings.users,
            service: settings.service,
            support: support,
            metrics: metrics,
            readiness: readiness,
            events: events,
            clock: clock,
            tokenOwnership: settings.tokenOwnership
        )
        let http: HTTPServer
        do {
            http = try HTTPServer(configuration: httpConfiguration(settings, events: events), router: routes.router)
        } catch {
            await stores.close()
            await ledger.store.close()
            throw error
        }
        readiness.markReady()
        let worker = PurchaseServerWorker(
            pipeline: pipeline,
            store: ledger.store,
            reconciler: reconciler,
            lock: stores.lock,
            metrics: metrics,
            events: events,
            configuration: .init(reconcileEvery: settings.reconcileEvery),
            wallClock: clock
        )
        await worker.start()
        var started = "\(http.origin), ledger \(ledger.name), grant \(grant.description)"
        if let every = settings.reconcileEvery {
            started += ", reconciling every \(every)"
        }
        if support == nil {
            started +=
                ", support off (\(settings.api == nil ? "no App Store Server API" : stores.auditUnavailable ?? ""))"
        }
        events.record(IAPEvent(time: clock.now, event: "server.started", outcome: "listening", message: started))
        return ServeServer(
            http: http,
            worker: worker,
            readiness: readiness,
            ledger: ledger,
            stores: stores,
            events: events
        )
    }

    /// Stops: not ready, no new connections, the requests in flight finished, the background work stopped, the
    /// ledger closed.
    func stop(signal: Int32) async {
        let clock = SystemClock()
        let started = ContinuousClock.now
        events.record(
            IAPEvent(
                time: clock.now,
                event: "server.stopping",
                outcome: "signal \(signal)",
                message: "signal \(signal)"
            )
        )
        readiness.markStopping()
        await http.shutdown()
        await worker.stop()
        await stores.close()
        await ledger.store.close()
        let elapsed = ContinuousClock.now - started
        events.record(
            IAPEvent(
                time: clock.now,
                event: "server.stopped",
                outcome: "stopped",
                durationMs: Int64((elapsed / .milliseconds(1)).rounded())
            )
        )
    }
}

/// The HTTP server's events worth a line: failures (a handler that threw, an answer that could not be sent, a request
/// cut off at its deadline, a full server), not every answer (`GET /metrics` counts those).
struct HTTPFailureEvents: EventSink {
    let sink: any EventSink

    init(_ sink: any EventSink) {
        self.sink = sink
    }

    func record(_ event: IAPEvent) {
        guard event.event != "http.request" else { return }
        sink.record(event)
    }
}
