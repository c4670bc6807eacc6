import IAPCore
import IAPHTTPServer
import IAPServerAPI

extension PurchaseServer {
    /// Opens the stores beside the ledger, composes the routes and the worker, listens and starts working.
    func compose() async throws -> Running {
        let events = configuration.events
        let site = configuration.site
        let audit = try await site.supportAudit(
            observer: Self.auditObserver(readiness: readiness, metrics: metrics, events: events)
        )
        var reconciler: Reconciler?
        var support: OrderLookup?
        var lock: (any ExclusiveRunLock)?
        if let api = configuration.api {
            reconciler = Reconciler(
                clients: api.clients,
                pipeline: pipeline,
                checkpoints: try await site.reconciliationCheckpoints(),
                configuration: api.reconciliation,
                alarm: api.alarm
            )
            lock = try site.reconciliationLock()
            support = OrderLookup(
                clients: api.clients,
                pipeline: pipeline,
                auditLog: audit,
                fulfillment: configuration.grant.description
            )
        }
        let routes = PurchaseServerRoutes(
            pipeline: pipeline,
            consumptionRequests: configuration.consumptionRequests,
            appNotifications: PurchaseServerAppNotifications(
                pipeline: pipeline,
                rescindConsent: configuration.rescindConsent,
                next: configuration.appNotifications
            ),
            users: configuration.users,
            service: configuration.service,
            support: support,
            metrics: metrics,
            readiness: readiness,
            ledger: site.store
        )
        var http = configuration.http
        http.events = FailureEvents(events)
        let server = try HTTPServer(configuration: http, router: routes.router)
        var consoleServer: HTTPServer?
        if let console = configuration.console {
            let consoleRoutes = ConsoleRoutes(
                operators: console.operators,
                sessions: console.sessions,
                pipeline: pipeline,
                ledger: site.store,
                readiness: readiness,
                support: support,
                audit: audit,
                activity: activity
            )
            var consoleHTTP = console.http
            consoleHTTP.events = FailureEvents(events)
            do {
                consoleServer = try HTTPServer(configuration: consoleHTTP, router: consoleRoutes.router)
            } catch {
                await server.shutdown()
                throw error
            }
        }
        readiness.markReady()
        let worker = PurchaseServerWorker(
            pipeline: pipeline,
            reconciler: reconciler,
            lock: lock,
            metrics: metrics,
            configuration: .init(
                drainInterval: configuration.drainInterval,
                reconcileEvery: configuration.api?.reconcileEvery
            )
        )
        await worker.start()
        // What an earlier run parked for products its catalog did not know, this catalog may name.
        let released = await pipeline.releaseParked()
        var started = "\(server.origin), ledger \(site.description), grant \(configuration.grant.description)"
        if let every = configuration.api?.reconcileEvery {
            started += ", reconciling every \(every)"
        }
        if released.delivered + released.deferred > 0 {
            started += ", \(released.delivered + released.deferred) parked purchases released"
        }
        if support == nil {
            started += ", support off (no App Store Server API)"
        }
        if let consoleServer {
            started += ", console \(consoleServer.origin)"
        }
        events.record(
            IAPEvent(
                time: pipeline.clock.now,
                event: "server.started",
                outcome: "listening",
                message: started,
                address: server.origin
            )
        )
        let auditWatch = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.auditWatchInterval)
                guard !Task.isCancelled else { return }
                // A refusal is reported by the audit's observer (readiness, gauge, event); nothing to do here.
                try? await audit.checkWritable()
            }
        }
        return Running(http: server, console: consoleServer, worker: worker, auditWatch: auditWatch)
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
}

/// The HTTP server's events worth a line: failures (a handler that threw, an answer that could not be sent, a request
/// cut off at its deadline, a full server), not every answer (`GET /metrics` counts those).
struct FailureEvents: EventSink {
    let sink: any EventSink

    init(_ sink: any EventSink) {
        self.sink = sink
    }

    func record(_ event: IAPEvent) {
        guard event.event != "http.request" else { return }
        sink.record(event)
    }
}
