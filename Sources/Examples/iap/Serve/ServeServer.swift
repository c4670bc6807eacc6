import Foundation
import IAPCore
import IAPHTTPServer
import IAPServerAPI

/// A running `iap serve`: the ledger site, the pipeline, the routes on an `HTTPServer`, the background
/// worker.
struct ServeServer {
    let http: HTTPServer
    let worker: PurchaseServerWorker
    let readiness: ServerReadiness
    let site: any LedgerSite
    let events: any EventSink
    /// The catalog the pipeline and the routes ask; replaced by ``reloadCatalog(_:)``.
    let catalog: ReloadableProductCatalog
    let pipeline: DeliveryPipeline

    /// The most connections served at once.
    static let maximumConnections = 256
    /// The most connections from one IP address by default: an eighth of ``maximumConnections``, so that one client
    /// cannot take the server from the others. Behind a reverse proxy every client has the proxy's address: raise it
    /// (`--max-connections-per-address 256`).
    static let defaultConnectionsPerAddress = maximumConnections / 8

    /// The HTTP limits: a body as large as a notification, 256 connections (503 at once beyond), 32 from one address
    /// (`--max-connections-per-address`; beyond it closed at once), a client idle for 10 seconds dropped, 30 seconds
    /// for a whole request, 10 seconds for the requests in flight at a stop.
    static func httpConfiguration(_ settings: ServeSettings, events: any EventSink) -> HTTPServer.Configuration {
        var configuration = HTTPServer.Configuration(host: settings.host, port: settings.port)
        configuration.maximumBodySize = PurchaseServerRoutes.maximumBodySize
        configuration.maximumConnections = maximumConnections
        configuration.maximumConnectionsPerAddress = settings.connectionsPerAddress
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
        let site = try await CommandLedger.open(parsed, access: .create)
        let choice: CatalogChoice
        let checkpoints: any ReconciliationCheckpointStore
        let audit: LedgerGuardedSupportAuditLog
        let lock: any ExclusiveRunLock
        let readiness = ServerReadiness()
        do {
            choice = try CatalogChoice.choose(
                try await site.catalog(parsed, save: true),
                grant: settings.grant,
                command: "iap serve"
            )
            // What is kept beside the ledger, opened now so that a failure stops the start. The support audit is
            // guarded by the head the ledger keeps: one that does not match it opens refusing every support action,
            // and the server still starts and takes purchases.
            lock = try site.reconciliationLock()
            checkpoints = try await site.reconciliationCheckpoints()
            audit = try await site.supportAudit(
                observer: auditObserver(readiness: readiness, metrics: metrics, events: events)
            )
        } catch {
            await site.close()
            throw error
        }
        let clock = SystemClock()
        let pipeline = DeliveryPipeline(
            verifier: settings.verifier,
            catalog: choice.catalog,
            store: site.store,
            hook: hook,
            clock: clock,
            retryPolicy: site.retryPolicy(for: .server),
            tokenOwnership: settings.tokenOwnership,
            proratedRefunds: settings.proratedRefunds,
            unknownProducts: choice.unknownProducts,
            events: events
        )
        let processor = NotificationProcessor(
            verifier: settings.verifier,
            pipeline: pipeline,
            store: site.store,
            clock: clock
        )
        var reconciler: Reconciler?
        var support: OrderLookup?
        if let api = settings.api {
            reconciler = Reconciler(
                clients: api.clients,
                verifier: settings.verifier,
                pipeline: pipeline,
                store: site.store,
                checkpoints: checkpoints,
                wallClock: clock,
                events: events
            )
            support = OrderLookup(
                clients: api.clients,
                verifier: settings.verifier,
                store: site.store,
                pipeline: pipeline,
                auditLog: audit,
                clock: clock,
                fulfillment: grant.description,
                events: events
            )
        }
        let routes = PurchaseServerRoutes(
            submissions: TransactionSubmissionHandler(pipeline: pipeline),
            notifications: processor,
            store: site.store,
            catalog: choice.catalog,
            unknownProducts: choice.unknownProducts,
            proratedRefunds: settings.proratedRefunds,
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
            await site.close()
            throw error
        }
        readiness.markReady()
        let worker = PurchaseServerWorker(
            pipeline: pipeline,
            store: site.store,
            reconciler: reconciler,
            lock: lock,
            metrics: metrics,
            events: events,
            configuration: .init(reconcileEvery: settings.reconcileEvery),
            wallClock: clock
        )
        await worker.start()
        // What an earlier run parked for products its catalog did not know, this catalog may name.
        let released = await pipeline.releaseParked()
        var started = "\(http.origin), ledger \(site.description), grant \(grant.description)"
        if let every = settings.reconcileEvery {
            started += ", reconciling every \(every)"
        }
        if released.delivered + released.deferred > 0 {
            started += ", \(released.delivered + released.deferred) parked purchases released"
        }
        if support == nil {
            started += ", support off (no App Store Server API)"
        }
        events.record(IAPEvent(time: clock.now, event: "server.started", outcome: "listening", message: started))
        return ServeServer(
            http: http,
            worker: worker,
            readiness: readiness,
            site: site,
            events: events,
            catalog: choice.catalog,
            pipeline: pipeline
        )
    }

    /// Reads the catalog again (`--catalog FILE`, else the one saved with the ledger), replaces the one in use, and
    /// delivers what was parked for products it did not know: what `SIGHUP` does. A catalog that cannot be read
    /// leaves the one in use as it was; either way an event (`catalog.reloaded` or `catalog.reloadFailed`) says what
    /// happened.
    ///
    /// - Parameter parsed: The command line the server started with.
    func reloadCatalog(_ parsed: Arguments) async {
        let clock = SystemClock()
        do {
            guard let fresh = try await site.catalog(parsed, save: true) else {
                throw IAPError(.notFound, "no catalog to reload: give --catalog FILE")
            }
            let added = catalog.replace(with: fresh)
            let released = await pipeline.releaseParked()
            var message = "\(fresh.products.count) products"
            if !added.isEmpty {
                message += ", new: \(added.joined(separator: ", "))"
            }
            message += "; parked purchases delivered: \(released.delivered), deferred: \(released.deferred)"
            message += ", still unknown: \(released.skipped)"
            events.record(IAPEvent(time: clock.now, event: "catalog.reloaded", outcome: "reloaded", message: message))
        } catch {
            let failure = IAPError.wrapping(error, as: .invalidConfiguration, "the catalog could not be reloaded")
            events.record(
                IAPEvent(
                    time: clock.now,
                    event: "catalog.reloadFailed",
                    outcome: "failed",
                    errorCode: failure.code.rawValue,
                    message: "\(failure.message); the catalog in use is kept"
                )
            )
        }
    }

    /// Reports whether support may write to the audit: the `support-audit` check of `GET /readyz` (degraded, the
    /// server still ready for purchases), the `iap_support_audit_refused` gauge, and a `support.audit` event
    /// (outcome `refused`, error code `storageCorrupted`, or `writable` when a reseal lifted it).
    static func auditObserver(
        readiness: ServerReadiness,
        metrics: PurchaseServerMetrics,
        events: any EventSink
    ) -> @Sendable (LedgerGuardedSupportAuditLog.Standing) -> Void {
        let reported = LockedValue(false)
        return { standing in
            let clock = SystemClock()
            switch standing {
            case .writable:
                readiness.setCheck("support-audit", failing: nil)
                metrics.supportAuditRefused.set(0)
                // Only a lifted refusal is news.
                guard reported.withLock({ $0 }) else { return }
                reported.withLock { $0 = false }
                events.record(
                    IAPEvent(
                        time: clock.now,
                        event: "support.audit",
                        outcome: "writable",
                        message: "the support audit matches the ledger's head again: support actions are taken"
                    )
                )
            case .refused(let reason):
                readiness.setCheck(
                    "support-audit",
                    failing: "support actions refused: the support audit does not match the ledger's head"
                )
                metrics.supportAuditRefused.set(1)
                reported.withLock { $0 = true }
                events.record(
                    IAPEvent(
                        time: clock.now,
                        event: "support.audit",
                        outcome: "refused",
                        errorCode: IAPError.Code.storageCorrupted.rawValue,
                        message: "support actions are refused (purchases go on): \(reason); check it with 'iap "
                            + "support audit verify' and run 'iap support audit reseal --reason TEXT'"
                    )
                )
            }
        }
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
        await site.close()
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
