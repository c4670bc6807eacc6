public import IAPCore
public import IAPHTTPServer
import IAPServerAPI

/// The purchase server: the app's submissions, the App Store's notifications, entitlements, history, support and
/// operations endpoints (``PurchaseServerRoutes``) on an ``HTTPServer``, the retry queue drained and the ledger
/// reconciled with Apple in the background (``PurchaseServerWorker``), over one ledger site. `iap serve` is this type
/// behind a command line.
///
/// A ``Configuration`` goes in; ``start()`` opens what is kept beside the ledger, composes the server, listens, and
/// delivers what an earlier run parked for products its catalog did not know; ``run(until:started:)`` starts and serves until
/// SIGINT or SIGTERM; ``stop(reason:)`` stops gracefully (not ready, no new connections, the requests in flight finished,
/// the background work stopped, the ledger site closed).
///
/// ```swift
/// let server = try PurchaseServer(configuration)
/// try await server.start()
/// print("listening on \(server.origin ?? "")")
/// // ... until the process is asked to stop:
/// await server.stop()
/// ```
///
/// Every step is reported as an ``IAPEvent`` to the configuration's ``Configuration/events``: `server.started` (the
/// origin, the ledger, the grant path, the schedule, what was released, whether support is on), `server.stopping`,
/// `server.stopped`, `catalog.reloaded` or `catalog.reloadFailed`, `support.audit` when the support audit stops or
/// starts matching the ledger's head, and what the pipeline, the routes and the worker report.
public final class PurchaseServer: Sendable {
    /// What the server was made of.
    public let configuration: Configuration
    /// What `GET /metrics` exposes; register your own families on its registry before ``start()``.
    public let metrics: PurchaseServerMetrics
    /// What `GET /readyz` answers.
    public let readiness: ServerReadiness
    /// The pipeline: what the routes, the notifications, the worker and support deliver through.
    public let pipeline: DeliveryPipeline
    /// What the server saw lately (notifications, the fulfillment's answers, the last reconciliation), from its
    /// events: what the console shows.
    public let activity = ConsoleActivity()

    private let state = LockedValue(Lifecycle())

    /// Where the server is in its life, and who waits for its end.
    private struct Lifecycle {
        enum Phase {
            case idle
            /// Composing; a stop asked meanwhile is kept and carried out once the start is done.
            case starting(stopRequested: String?)
            case running(Running)
            case stopping
            case stopped
        }

        var phase = Phase.idle
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// What a started server holds.
    struct Running {
        let http: HTTPServer
        /// The console's listener, when the configuration has one.
        let console: HTTPServer?
        let worker: PurchaseServerWorker
        /// Checks the support audit every ``auditWatchInterval``, so that one tampered with while the server runs
        /// shows on `GET /readyz` without waiting for a support request.
        let auditWatch: Task<Void, Never>
    }

    /// How often a running server checks that its support audit was not deleted, replaced or cut under it.
    static let auditWatchInterval = Duration.seconds(5)

    /// Creates the server and checks its configuration; nothing is opened or listening before ``start()``.
    ///
    /// Everything that can be checked without listening is checked here: the HTTP limits and the address (an IPv4
    /// or IPv6 literal), and that a ``Grant/transactional(_:description:)`` store writes into the site's ledger. (The
    /// authenticators, the verifier and the catalog check what they are given when they are created: create them,
    /// and this server, before you open the ledger site, and a misconfigured program stops before it creates any
    /// ledger file.)
    ///
    /// - Parameter configuration: What the server is made of.
    /// - Throws: ``IAPError`` `invalidConfiguration` naming what is wrong; the site stays the caller's.
    public init(_ configuration: Configuration) throws {
        try configuration.http.validate()
        try configuration.console?.http.validate()
        let (verifier, catalog) = try Self.routing(configuration)
        self.configuration = configuration
        let metrics = try PurchaseServerMetrics(apps: configuration.apps.map(\.bundleId))
        self.metrics = metrics
        self.readiness = ServerReadiness()
        let events = RecordingActivity(sink: configuration.events, activity: activity)
        let hook: any FulfillmentHook
        switch configuration.grant {
        case .ledgerOnly:
            // The ledger is what the app's backend reads: once recorded, the purchase is delivered.
            hook = ClosureFulfillmentHook(grant: { _ in }, revoke: { _ in })
        case .hook(let given, _):
            hook = metrics.measuring(given)
        case .transactional(let store, let description):
            guard Self.store(store, writesInto: configuration.site.store) else {
                throw IAPError(
                    .invalidConfiguration,
                    "the transactional store of '\(description)' does not write into the ledger of "
                        + "\(configuration.site.description): wrap the site's own store"
                )
            }
            self.pipeline = DeliveryPipeline(
                verifier: verifier,
                catalog: catalog,
                store: store,
                clock: SystemClock(),
                policies: configuration.delivery,
                events: events
            )
            return
        }
        self.pipeline = DeliveryPipeline(
            verifier: verifier,
            catalog: catalog,
            store: configuration.site.store,
            hook: hook,
            clock: SystemClock(),
            policies: configuration.delivery,
            events: events
        )
    }

    /// Whether a transactional store writes into `ledger`: it is the ledger, or forwards to it.
    private static func store(_ store: any TransactionalFulfillmentStore, writesInto ledger: any EntitlementStore)
        -> Bool
    {
        let target = ledger as AnyObject
        if (store as AnyObject) === target {
            return true
        }
        guard let forwarding = store as? any ForwardingEntitlementStore else {
            return false
        }
        return base(of: forwarding) === target
    }

    private static func base(of store: some ForwardingEntitlementStore) -> AnyObject {
        store.store as AnyObject
    }

    /// Where the server listens, such as `http://127.0.0.1:8080`, while it runs.
    public var origin: String? {
        running?.http.origin
    }

    /// The port the server listens on (the one the system picked for port `0`), while it runs.
    public var port: UInt16? {
        running?.http.port
    }

    var runningConsole: HTTPServer? {
        running?.console
    }

    private var running: Running? {
        state.withLock { lifecycle in
            if case .running(let running) = lifecycle.phase {
                return running
            }
            return nil
        }
    }

    /// Opens what is kept beside the ledger, composes the routes and the worker, listens, starts the background work,
    /// and delivers what an earlier run parked for products its catalog did not know.
    ///
    /// A support audit that does not match the head the ledger keeps does not stop the start: support actions are
    /// refused (the `support-audit` check of `GET /readyz` is degraded) and purchases go on. A ``stop(reason:)``
    /// called while the server starts is carried out as soon as it has started.
    ///
    /// - Throws: ``IAPError`` when the stores beside the ledger cannot be opened or the address cannot be bound (what
    ///   was opened is closed, the ledger site included); `invalidArgument` when the server was started before.
    public func start() async throws {
        try state.withLock { lifecycle in
            guard case .idle = lifecycle.phase else {
                throw IAPError(.invalidArgument, "a purchase server starts once")
            }
            lifecycle.phase = .starting(stopRequested: nil)
        }
        let running: Running
        do {
            running = try await compose()
        } catch {
            state.withLock { $0.phase = .stopping }
            await configuration.site.close()
            finish()
            throw error
        }
        let requested: String? = state.withLock { lifecycle in
            if case .starting(let reason?) = lifecycle.phase {
                lifecycle.phase = .stopping
                return reason
            }
            lifecycle.phase = .running(running)
            return nil
        }
        if let requested {
            await tearDown(running, reason: requested)
        }
    }

    /// Starts, serves until one of `signals` arrives or ``stop(reason:)`` is called, and stops.
    ///
    /// ```swift
    /// let signals = ShutdownSignals()  // first thing in the program
    /// // ... the configuration ...
    /// let stoppedBy = try await PurchaseServer(configuration).run(until: signals) { server in
    ///     print("listening on \(server.origin ?? "")")  // the bound port when port 0 was asked
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - signals: The signals to wait for; create them early, before anything else of the program (see
    ///     ``ShutdownSignals``). SIGINT and SIGTERM by default.
    ///   - started: Called once the server listens (``origin`` and ``port`` are known then), before the wait: to
    ///     say where it listens, or to arm what needs the running server (a reload on SIGHUP).
    /// - Returns: The signal that stopped the server, or `nil` when ``stop(reason:)`` did.
    /// - Throws: What ``start()`` throws.
    @discardableResult
    public func run(
        until signals: ShutdownSignals = ShutdownSignals(),
        started: (PurchaseServer) -> Void = { _ in }
    ) async throws -> Int32? {
        try await start()
        started(self)
        let received = LockedValue<Int32?>(nil)
        let waiting = Task {
            let signal = await signals.wait()
            received.withLock { $0 = signal }
            await self.stop(reason: "signal \(signal)")
        }
        await waitUntilStopped()
        waiting.cancel()
        return received.withLock { $0 }
    }

    /// Stops: not ready, no new connections, the requests in flight finished (within the HTTP configuration's
    /// `shutdownGracePeriod`, which the background work is given too), the background work stopped, the ledger site
    /// closed. A server that never started closes its ledger site. When it returns the server has stopped, whoever
    /// else asked for it first; calling it again does nothing.
    ///
    /// - Parameter reason: Why, for the `server.stopping` event.
    public func stop(reason: String = "stopped") async {
        enum Next {
            case tearDown(Running)
            case close
            case wait
            case nothing
        }
        let next: Next = state.withLock { lifecycle in
            switch lifecycle.phase {
            case .idle:
                lifecycle.phase = .stopping
                return .close
            case .starting(let requested):
                lifecycle.phase = .starting(stopRequested: requested ?? reason)
                return .wait
            case .running(let running):
                lifecycle.phase = .stopping
                return .tearDown(running)
            case .stopping:
                return .wait
            case .stopped:
                return .nothing
            }
        }
        switch next {
        case .tearDown(let running):
            await tearDown(running, reason: reason)
        case .close:
            await configuration.site.close()
            finish()
        case .wait:
            await waitUntilStopped()
        case .nothing:
            return
        }
    }

    /// Waits until the server has stopped (at once when it has).
    public func waitUntilStopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let stopped: Bool = state.withLock { lifecycle in
                if case .stopped = lifecycle.phase {
                    return true
                }
                lifecycle.waiters.append(continuation)
                return false
            }
            if stopped {
                continuation.resume()
            }
        }
    }

    private func tearDown(_ running: Running, reason: String) async {
        let clock = pipeline.clock
        let started = ContinuousClock.now
        configuration.events.record(
            IAPEvent(time: clock.now, event: "server.stopping", outcome: reason, message: reason)
        )
        readiness.markStopping()
        running.auditWatch.cancel()
        await running.console?.shutdown()
        await running.http.shutdown()
        await running.worker.stop(gracePeriod: configuration.http.shutdownGracePeriod)
        await configuration.site.close()
        let elapsed = ContinuousClock.now - started
        configuration.events.record(
            IAPEvent(
                time: clock.now,
                event: "server.stopped",
                outcome: "stopped",
                durationMs: Int64((elapsed / .milliseconds(1)).rounded())
            )
        )
        finish()
    }

    /// Marks the server stopped and wakes who waits for it.
    private func finish() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { lifecycle in
            lifecycle.phase = .stopped
            defer { lifecycle.waiters = [] }
            return lifecycle.waiters
        }
        for waiter in waiters {
            waiter.resume()
        }
    }

    /// Replaces the catalog in use and delivers what was parked for products it did not know: what `iap serve` does
    /// on `SIGHUP`. The `catalog.reloaded` event says what changed. On a server of several apps, see
    /// ``reloadCatalog(_:bundleId:)``: this replaces the catalog of the only app, and of none when there are several
    /// (the report then holds the error, and a `catalog.reloadFailed` event says it).
    ///
    /// - Parameter catalog: The new catalog.
    /// - Returns: What the parked purchases became.
    @discardableResult
    public func reloadCatalog(_ catalog: StaticProductCatalog) async -> DeliveryPipeline.DrainReport {
        if let report = await reloadCatalog(catalog, bundleId: nil) {
            return report
        }
        var refused = DeliveryPipeline.DrainReport()
        refused.errors.append(
            IAPError(.invalidArgument, "this server serves several apps: name the app whose catalog to reload")
        )
        return refused
    }

    /// Replaces the catalog of one app and delivers what was parked for products it did not know.
    ///
    /// - Parameters:
    ///   - catalog: The new catalog.
    ///   - bundleId: The app's bundle id, on a server of several apps (``Configuration/apps``); `nil` for the only app.
    /// - Returns: What the parked purchases became, or `nil` when the server serves no such app (or several and none
    ///   was named): nothing was replaced, and a `catalog.reloadFailed` event says why.
    @discardableResult
    public func reloadCatalog(_ catalog: StaticProductCatalog, bundleId: String?) async
        -> DeliveryPipeline.DrainReport?
    {
        let target: ReloadableProductCatalog
        do {
            target = try reloadable(bundleId: bundleId)
        } catch {
            reportReloadFailure(error)
            return nil
        }
        let added = target.replace(with: catalog)
        let released = await pipeline.releaseParked()
        var message = "\(catalog.products.count) products"
        if let bundleId {
            message += " of \(bundleId)"
        }
        if !added.isEmpty {
            message += ", new: \(added.joined(separator: ", "))"
        }
        message += "; parked purchases delivered: \(released.delivered), deferred: \(released.deferred)"
        message += ", still unknown: \(released.skipped)"
        configuration.events.record(
            IAPEvent(time: pipeline.clock.now, event: "catalog.reloaded", outcome: "reloaded", message: message)
        )
        return released
    }

    /// Reads a catalog with `load` and, when it could be read, replaces the one in use with it (see
    /// ``reloadCatalog(_:bundleId:)``); when it could not, keeps the one in use and says so in a `catalog.reloadFailed`
    /// event.
    ///
    /// - Parameters:
    ///   - bundleId: The app whose catalog to replace, on a server of several apps; `nil` for the only app.
    ///   - load: Reads the new catalog (a file, the copy saved with the ledger).
    /// - Returns: What the parked purchases became, or `nil` when the catalog could not be read or replaced.
    @discardableResult
    public func reloadCatalog(
        bundleId: String? = nil,
        from load: () async throws -> StaticProductCatalog
    ) async -> DeliveryPipeline.DrainReport? {
        let catalog: StaticProductCatalog
        do {
            catalog = try await load()
        } catch {
            reportReloadFailure(error)
            return nil
        }
        return await reloadCatalog(catalog, bundleId: bundleId)
    }

    /// The catalog a reload replaces.
    private func reloadable(bundleId: String?) throws -> ReloadableProductCatalog {
        let apps = configuration.apps
        guard !apps.isEmpty else {
            guard bundleId == nil else {
                throw IAPError(
                    .invalidArgument,
                    "this server serves one app and names none: reload without a bundle id"
                )
            }
            return configuration.catalog
        }
        if let bundleId {
            guard let app = apps.first(where: { $0.bundleId == bundleId }) else {
                throw IAPError(.invalidArgument, "this server does not serve \(bundleId)")
            }
            return app.catalog
        }
        guard apps.count == 1 else {
            throw IAPError(.invalidArgument, "this server serves several apps: name the app whose catalog to reload")
        }
        return apps[0].catalog
    }

    private func reportReloadFailure(_ error: any Error) {
        let failure = IAPError.wrapping(error, as: .invalidConfiguration, "the catalog could not be reloaded")
        configuration.events.record(
            IAPEvent(
                time: pipeline.clock.now,
                event: "catalog.reloadFailed",
                outcome: "failed",
                errorCode: failure.code.rawValue,
                message: "\(failure.message); the catalog in use is kept"
            )
        )
    }
}
