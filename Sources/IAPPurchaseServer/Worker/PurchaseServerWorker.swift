public import IAPCore
import IAPHTTPServer
public import IAPServerAPI

/// The purchase server's background work: the retry queue drained continuously, and a reconciliation with Apple on
/// a schedule, by one instance of a fleet at a time.
///
/// - **Drain.** ``DeliveryPipeline/drainDueRetries(limit:)`` in batches of ``Configuration/drainBatch``: again at once
///   while a whole batch was delivered or deferred, else after ``Configuration/drainInterval``. Every instance of a
///   fleet drains: the ledger's claims let exactly one of them call the hook for an entry.
/// - **Reconciliation.** Every ``Configuration/reconcileEvery`` (counted from the end of the run before, the first one
///   period after ``start()``), ``Reconciler/reconcileLedger(progress:)`` under an `ExclusiveRunLock`: every
///   customer's histories from the checkpoints of the last run (incremental), the statuses of their subscriptions,
///   paced by the reconciler's `requestsPerSecond`. When another instance holds the lock, the run is skipped.
///
/// Each run is reported as a `reconciliation.run` event (outcome `clean`, `repaired` or `failed`, with its duration
/// and totals in the message) or `reconciliation.skipped`, and counted in ``PurchaseServerMetrics``; a drain the
/// ledger failed is reported as `delivery.drainFailed`.
///
/// ```swift
/// let worker = PurchaseServerWorker(pipeline: pipeline, reconciler: reconciler, metrics: metrics)
/// await worker.start()
/// // ... serve ...
/// await worker.stop()
/// ```
public actor PurchaseServerWorker {
    /// How often the work runs.
    public struct Configuration: Sendable, Hashable {
        /// The wait between two drains that found less than a full batch.
        public var drainInterval: Duration
        /// The most entries one drain takes.
        public var drainBatch: Int
        /// The time between the end of a reconciliation and the start of the next; `nil` reconciles never.
        public var reconcileEvery: Duration?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - drainInterval: The wait between drains that found little; 1 second by default.
        ///   - drainBatch: The most entries per drain; 50 by default.
        ///   - reconcileEvery: The time between reconciliations; `nil` (never) by default.
        public init(drainInterval: Duration = .seconds(1), drainBatch: Int = 50, reconcileEvery: Duration? = nil) {
            self.drainInterval = drainInterval
            self.drainBatch = drainBatch
            self.reconcileEvery = reconcileEvery
        }
    }

    /// What one scheduled reconciliation did.
    public enum Run: Sendable, Hashable {
        /// The run ended; its totals.
        case completed(LedgerReconciliationSummary)
        /// The run failed as a whole (the ledger could not be walked, the lock could not be asked for).
        case failed(IAPError)
        /// Another instance held the lock.
        case skipped
    }

    /// The configuration.
    public let configuration: Configuration

    private let pipeline: DeliveryPipeline
    private let reconciler: Reconciler?
    private let lock: (any ExclusiveRunLock)?
    private var reconciling = false
    private let metrics: PurchaseServerMetrics?
    private let clock: any Clock<Duration>
    private var store: any EntitlementStore { pipeline.store }
    private var events: any EventSink { pipeline.events }
    private var wallClock: any WallClock { pipeline.clock }
    private var tasks: [Task<Void, Never>] = []
    private var stopping = false
    private var drainRunning = false
    /// Whether the drain waits for its next round (between batches, not in one).
    private var drainSleeping = false

    /// Creates the worker; nothing runs before ``start()``.
    ///
    /// - Parameters:
    ///   - pipeline: The pipeline whose retry queue is drained; its ledger refreshes the metrics' gauges, its event
    ///     sink hears of runs and failures, its clock dates them.
    ///   - reconciler: The reconciler of the scheduled runs; `nil` reconciles never.
    ///   - lock: Lets one instance of a fleet reconcile at a time (`PostgresAdvisoryLock` on a PostgreSQL ledger,
    ///     `FileExclusiveRunLock` beside a file ledger); `nil` for a ledger only this process opens.
    ///   - metrics: Where drains and runs are counted, and the ledger gauges refreshed.
    ///   - configuration: How often.
    ///   - clock: The clock the waits between drains and between reconciliations sleep on.
    public init(
        pipeline: DeliveryPipeline,
        reconciler: Reconciler? = nil,
        lock: (any ExclusiveRunLock)? = nil,
        metrics: PurchaseServerMetrics? = nil,
        configuration: Configuration = Configuration(),
        clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.pipeline = pipeline
        self.reconciler = reconciler
        self.lock = lock
        self.metrics = metrics
        self.configuration = configuration
        self.clock = clock
    }

    /// Starts the drain, and the reconciliation when a reconciler and a period are configured. Calling it again does
    /// nothing.
    public func start() {
        guard tasks.isEmpty, !stopping else { return }
        drainRunning = true
        tasks.append(Task { await self.drainLoop() })
        if reconciler != nil, let period = configuration.reconcileEvery, period > .zero {
            tasks.append(Task { await self.reconcileLoop(every: period) })
        }
    }

    /// Stops the work: the reconciliation at once (what it repaired stays repaired, its next run goes on from the
    /// checkpoints), the drain after the batch in hand, or when `gracePeriod` is over. When it returns, no hook call of
    /// the worker is running.
    ///
    /// - Parameter gracePeriod: How long the batch in hand may take.
    public func stop(gracePeriod: Duration = .seconds(10)) async {
        stopping = true
        guard !tasks.isEmpty else { return }
        for task in tasks.dropFirst() {
            task.cancel()
        }
        // A drain between batches has nothing in hand: it stops at once rather than at the end of its wait.
        if drainSleeping {
            tasks.first?.cancel()
        }
        let deadline = ContinuousClock.now.advanced(by: gracePeriod)
        while drainRunning, ContinuousClock.now < deadline {
            try? await ContinuousClock().sleep(for: .milliseconds(10))
        }
        tasks.first?.cancel()
        for task in tasks {
            await task.value
        }
        tasks = []
    }

    // MARK: - The drain

    /// Drains once: delivers every entry due for a retry, up to a batch, and refreshes the ledger gauges.
    ///
    /// - Returns: What the drain did.
    @discardableResult
    public func drainOnce() async -> DeliveryPipeline.DrainReport {
        let report = await pipeline.drainDueRetries(limit: configuration.drainBatch)
        if let error = report.errors.first {
            events.record(
                IAPEvent(
                    time: wallClock.now,
                    event: "delivery.drainFailed",
                    outcome: "failed",
                    errorCode: error.code.rawValue,
                    message: "\(report.errors.count) error(s) draining the retry queue: \(error.message)"
                )
            )
        }
        if report.delivered + report.deferred + report.skipped + report.errors.count > 0 {
            try? await metrics?.refreshLedgerGauges(from: store, clock: wallClock)
        }
        return report
    }

    private func drainLoop() async {
        defer { drainRunning = false }
        while !stopping, !Task.isCancelled {
            let report = await drainOnce()
            let busy = report.errors.isEmpty && report.delivered + report.deferred >= configuration.drainBatch
            if !busy, !stopping {
                drainSleeping = true
                await sleep(configuration.drainInterval)
                drainSleeping = false
            }
        }
    }

    // MARK: - Reconciliation

    /// Runs one reconciliation now, under the lock.
    ///
    /// - Returns: What it did, or ``Run/skipped`` when another instance holds the lock; ``Run/failed(_:)`` without a
    ///   reconciler.
    @discardableResult
    public func reconcileOnce() async -> Run {
        guard let reconciler else {
            return .failed(IAPError(.unsupportedOperation, "the worker has no reconciler"))
        }
        let started = ContinuousClock.now
        let run: Run
        do {
            if reconciling {
                run = .skipped
            } else {
                reconciling = true
                defer { reconciling = false }
                let summary: LedgerReconciliationSummary?
                if let lock {
                    summary = try await lock.runExclusively { _ in try await reconciler.reconcileLedger() }
                } else {
                    summary = try await reconciler.reconcileLedger()
                }
                run = summary.map { .completed($0) } ?? .skipped
            }
        } catch {
            run = .failed(IAPError.wrapping(error, as: .internalError, "the reconciliation failed"))
        }
        report(run, elapsed: ContinuousClock.now - started)
        return run
    }

    private func reconcileLoop(every period: Duration) async {
        while !stopping, !Task.isCancelled {
            await sleep(period)
            guard !stopping, !Task.isCancelled else { return }
            await reconcileOnce()
        }
    }

    private func report(_ run: Run, elapsed: Duration) {
        let outcome: String
        var errorCode: String?
        var message: String?
        switch run {
        case .completed(let summary):
            let repaired =
                summary.deliveredNow + summary.revokedNow + summary.renewalInfosUpdated + summary.awaitingOwner
            outcome = summary.failed > 0 ? "failed" : repaired > 0 ? "repaired" : "clean"
            message =
                "\(summary.families) purchase families, \(summary.appleTransactions) transactions from Apple: "
                + "\(summary.deliveredNow) delivered now, \(summary.revokedNow) taken back now, "
                + "\(summary.renewalInfosUpdated) renewal states updated, \(summary.failed) failed, "
                + "\(summary.alarms) alarms"
            if summary.alarms > 0 {
                metrics?.reconciliationAlarms.increment(by: Double(summary.alarms))
            }
            errorCode =
                summary.failedCustomers.values.first?.code.rawValue ?? summary.stillFailing.first?.error.code.rawValue
        case .failed(let error):
            outcome = "failed"
            errorCode = error.code.rawValue
            message = error.message
        case .skipped:
            outcome = "skipped"
            message = "another instance holds the reconciliation lock"
        }
        metrics?.reconciliations.increment(labels: [outcome])
        events.record(
            IAPEvent(
                time: wallClock.now,
                event: run == .skipped ? "reconciliation.skipped" : "reconciliation.run",
                outcome: outcome,
                errorCode: errorCode,
                message: message,
                durationMs: Int64((elapsed / .milliseconds(1)).rounded())
            )
        )
    }

    /// Sleeps, or returns early when cancelled.
    private func sleep(_ duration: Duration) async {
        try? await clock.sleep(for: duration, tolerance: nil)
    }
}
