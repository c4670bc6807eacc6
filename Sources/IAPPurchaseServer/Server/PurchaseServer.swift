public import IAPCore
public import IAPHTTPServer
import IAPServerAPI

/// The purchase server: the app's submissions, the App Store's notifications, entitlements, history, support and
/// operations endpoints (``PurchaseServerRoutes``) on an ``HTTPServer``, the retry queue drained and the ledger
/// reconciled with Apple in the background (``PurchaseServerWorker``), over one ledger site. `iap serve` is this type
/// behind a command line.
///
/// A ``Configuration`` goes in; ``start()`` opens what is kept beside the ledger, composes the server, listens, and
/// delivers what an earlier run parked for products its catalog did not know; ``run(until:)`` starts and serves until
/// SIGINT or SIGTERM; ``stop(reason:)`` stops gracefully (not ready, no new connections, the requests in flight finished,
/// the background work stopped, the ledger site closed).
///
/// ```swift
/// let server = PurchaseServer(configuration)
/// try await server.start()
/// print("listening on \(server.origin)")
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

    private let state = LockedValue(State.idle)

    private enum State {
        case idle
        case starting
        case running(Running)
        case stopped
    }

    /// What a started server holds.
    struct Running {
        let http: HTTPServer
        let worker: PurchaseServerWorker
    }

    /// Creates the server; nothing is opened or listening before ``start()``.
    ///
    /// - Parameter configuration: What the server is made of.
    /// - Throws: ``IAPError`` `invalidConfiguration` when the metrics cannot be registered.
    public init(_ configuration: Configuration) throws {
        self.configuration = configuration
        let metrics = try PurchaseServerMetrics()
        self.metrics = metrics
        self.readiness = ServerReadiness()
        let hook: any FulfillmentHook
        switch configuration.grant {
        case .ledgerOnly:
            // The ledger is what the app's backend reads: once recorded, the purchase is delivered.
            hook = ClosureFulfillmentHook(grant: { _ in }, revoke: { _ in })
        case .hook(let given, _):
            hook = metrics.measuring(given)
        }
        self.pipeline = DeliveryPipeline(
            verifier: configuration.verifier,
            catalog: configuration.catalog,
            store: configuration.site.store,
            hook: hook,
            clock: SystemClock(),
            retryPolicy: configuration.site.retryPolicy(for: .server),
            tokenOwnership: configuration.tokenOwnership,
            proratedRefunds: configuration.proratedRefunds,
            unknownProducts: configuration.unknownProducts,
            events: configuration.events
        )
    }

    /// Where the server listens, such as `http://127.0.0.1:8080`, once started.
    public var origin: String? {
        if case .running(let running) = state.withLock({ $0 }) {
            return running.http.origin
        }
        return nil
    }

    /// The port the server listens on (the one the system picked for port `0`), once started.
    public var port: UInt16? {
        if case .running(let running) = state.withLock({ $0 }) {
            return running.http.port
        }
        return nil
    }

    /// Opens what is kept beside the ledger, composes the routes and the worker, listens, starts the background work,
    /// and delivers what an earlier run parked for products its catalog did not know.
    ///
    /// A support audit that does not match the head the ledger keeps does not stop the start: support actions are
    /// refused (the `support-audit` check of `GET /readyz` is degraded) and purchases go on.
    ///
    /// - Throws: ``IAPError`` when the stores beside the ledger cannot be opened or the address cannot be bound (what
    ///   was opened is closed, the ledger site included); `invalidArgument` when the server was started before.
    public func start() async throws {
        try state.withLock { state in
            guard case .idle = state else {
                throw IAPError(.invalidArgument, "a purchase server starts once")
            }
            state = .starting
        }
        do {
            let running = try await compose()
            state.withLock { $0 = .running(running) }
        } catch {
            state.withLock { $0 = .stopped }
            await configuration.site.close()
            throw error
        }
    }

    /// Starts, serves until one of `signals` arrives, and stops.
    ///
    /// - Parameter signals: The signals to wait for; create them early, before anything else of the program (see
    ///   ``ShutdownSignals``). SIGINT and SIGTERM by default.
    /// - Returns: The signal that stopped the server.
    /// - Throws: What ``start()`` throws.
    @discardableResult
    public func run(until signals: ShutdownSignals = ShutdownSignals()) async throws -> Int32 {
        try await start()
        let received = await signals.wait()
        await stop(reason: "signal \(received)")
        return received
    }

    /// Stops: not ready, no new connections, the requests in flight finished (within the HTTP configuration's
    /// `shutdownGracePeriod`), the background work stopped, the ledger site closed. Calling it again does nothing.
    ///
    /// - Parameter reason: Why, for the `server.stopping` event.
    public func stop(reason: String = "stopped") async {
        let running: Running? = state.withLock { state in
            defer { state = .stopped }
            if case .running(let running) = state {
                return running
            }
            return nil
        }
        guard let running else { return }
        let clock = pipeline.clock
        let started = ContinuousClock.now
        configuration.events.record(
            IAPEvent(time: clock.now, event: "server.stopping", outcome: reason, message: reason)
        )
        readiness.markStopping()
        await running.http.shutdown()
        await running.worker.stop()
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
    }

    /// Replaces the catalog in use and delivers what was parked for products it did not know: what `iap serve` does
    /// on `SIGHUP`. The `catalog.reloaded` event says what changed.
    ///
    /// - Parameter catalog: The new catalog.
    /// - Returns: What the parked purchases became.
    @discardableResult
    public func reloadCatalog(_ catalog: StaticProductCatalog) async -> DeliveryPipeline.DrainReport {
        let added = configuration.catalog.replace(with: catalog)
        let released = await pipeline.releaseParked()
        var message = "\(catalog.products.count) products"
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

    /// Reports a catalog that could not be reloaded (`catalog.reloadFailed`); the one in use is kept.
    ///
    /// - Parameter error: Why it could not be read.
    public func reportReloadFailure(_ error: any Error) {
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
