public import IAPCore
import IAPHTTPServer

/// The metrics of the purchase server, on a ``MetricsRegistry``: what `GET /metrics` exposes.
///
/// | family | type | labels | what |
/// |---|---|---|---|
/// | `iap_submissions_total` | counter | `outcome` | app submissions, by the answer's outcome (`delivered`, `alreadyDelivered`, `pending`, `awaitingOwner`, `deferred`, `revoked`, `rejected`) |
/// | `iap_notifications_total` | counter | `type`, `outcome` | App Store notifications, by type (`unknown` when it did not verify) and outcome (`processed`, `duplicate`, `unowned`, `rejected`, `failed`) |
/// | `iap_webhook_requests_total` | counter | `type`, `result` | calls of the fulfillment webhook, by `grant`/`revoke` and `success`, `failure` (retried: a 5xx, a 4xx other than 409, 410 and 422, a timeout) or `refused` (a 410 or 422, dead-lettered at once) |
/// | `iap_retry_queue_depth` | gauge | | deliveries waiting for a retry |
/// | `iap_dead_letters` | gauge | | deliveries that failed too often and wait for a person |
/// | `iap_verification_failures_total` | counter | `code` | signed data that did not verify, by the failed check |
/// | `iap_http_request_duration_seconds` | histogram | `route` | time to answer, by route pattern |
/// | `iap_http_responses_total` | counter | `route`, `status` | answers, by route pattern and status |
/// | `iap_reconciliations_total` | counter | `outcome` | scheduled reconciliation runs: `clean`, `repaired`, `failed`, or `skipped` (another instance held the lock) |
/// | `iap_reconciliation_alarms_total` | counter | | reconciliation alarms: customers whose ledger had missed more than the threshold |
/// | `iap_support_audit_refused` | gauge | | 1 while support actions are refused because the support audit does not match the ledger's head, else 0 |
/// | `iap_unknown_product_purchases` | gauge | | purchases recorded but parked: the catalog does not know their product |
/// | `iap_claimed_deliveries` | gauge | | deliveries under way: a deliverer claimed them and its claim holds |
/// | `iap_stale_claims` | gauge | | deliveries whose deliverer stopped before the outcome (claim expired); the next drain takes them |
///
/// On a server of several apps (``init(registry:apps:)`` with two or more bundle ids), `iap_submissions_total`,
/// `iap_notifications_total`, `iap_webhook_requests_total` and `iap_verification_failures_total` carry an `app` label
/// first: the bundle id of a served app the data names, or `unknown` (data that names none, or an app not served); a
/// server of one app has no `app` label, as before.
///
/// Labels never hold a user id, a transaction id or anything a client chose: routes are patterns
/// (`/iap/v1/users/{userId}/history`), types and codes are the package's or Apple's, and an `app` is one of the apps
/// served or `unknown`.
public final class PurchaseServerMetrics: Sendable {
    /// The registry the families are registered on.
    public let registry: MetricsRegistry
    /// `iap_submissions_total{outcome}`.
    public let submissions: MetricCounter
    /// `iap_notifications_total{type,outcome}`.
    public let notifications: MetricCounter
    /// `iap_webhook_requests_total{type,result}`.
    public let webhookRequests: MetricCounter
    /// `iap_retry_queue_depth`.
    public let retryQueueDepth: MetricGauge
    /// `iap_dead_letters`.
    public let deadLetters: MetricGauge
    /// `iap_verification_failures_total{code}`.
    public let verificationFailures: MetricCounter
    /// `iap_http_request_duration_seconds{route}`.
    public let requestDuration: MetricHistogram
    /// `iap_http_responses_total{route,status}`.
    public let responses: MetricCounter
    /// `iap_reconciliations_total{outcome}`.
    public let reconciliations: MetricCounter
    /// `iap_reconciliation_alarms_total`.
    public let reconciliationAlarms: MetricCounter
    /// `iap_support_audit_refused`.
    public let supportAuditRefused: MetricGauge
    /// `iap_unknown_product_purchases`.
    public let unknownProductPurchases: MetricGauge
    /// `iap_claimed_deliveries`.
    public let claimedDeliveries: MetricGauge
    /// `iap_stale_claims`.
    public let staleClaims: MetricGauge

    /// The bundle ids the `app` label takes, sorted; empty on a server of one app (no `app` label).
    public let apps: [String]

    private let ledgerRefresh = LockedValue<ContinuousClock.Instant?>(nil)

    /// Registers the families on a registry.
    ///
    /// - Parameters:
    ///   - registry: Where to register; a new one by default. Register your own families on it too, and
    ///     `GET /metrics` exposes them.
    ///   - apps: The bundle ids of a server of several apps: with two or more, the families that count what an app
    ///     sent carry an `app` label first. Empty (the default) or one: no `app` label.
    /// - Throws: ``IAPError`` `invalidArgument` when the registry has one of the names already.
    public init(registry: MetricsRegistry = MetricsRegistry(), apps: [String] = []) throws {
        self.registry = registry
        let apps = Set(apps).count > 1 ? Set(apps).sorted() : []
        self.apps = apps
        let app = apps.isEmpty ? [] : ["app"]
        submissions = try registry.counter(
            "iap_submissions_total",
            help: "App submissions (POST /iap/v1/transactions), by \(apps.isEmpty ? "" : "app and ")outcome.",
            labels: app + ["outcome"]
        )
        notifications = try registry.counter(
            "iap_notifications_total",
            help: "App Store Server Notifications, by \(apps.isEmpty ? "" : "app, ")type and outcome.",
            labels: app + ["type", "outcome"]
        )
        webhookRequests = try registry.counter(
            "iap_webhook_requests_total",
            help: "Calls of the fulfillment webhook, by \(apps.isEmpty ? "" : "app, ")type (grant, revoke) and "
                + "result (success, failure, refused).",
            labels: app + ["type", "result"]
        )
        retryQueueDepth = try registry.gauge(
            "iap_retry_queue_depth",
            help: "Deliveries waiting for a retry of the fulfillment hook."
        )
        deadLetters = try registry.gauge(
            "iap_dead_letters",
            help: "Deliveries that failed too often and wait for a person."
        )
        verificationFailures = try registry.counter(
            "iap_verification_failures_total",
            help: "Signed data that did not verify, by \(apps.isEmpty ? "" : "app and ")the failed check.",
            labels: app + ["code"]
        )
        requestDuration = try registry.histogram(
            "iap_http_request_duration_seconds",
            help: "Time to answer a request, by route pattern.",
            labels: ["route"],
            buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
        )
        responses = try registry.counter(
            "iap_http_responses_total",
            help: "Answers, by route pattern and status.",
            labels: ["route", "status"]
        )
        reconciliations = try registry.counter(
            "iap_reconciliations_total",
            help: "Scheduled reconciliation runs, by outcome (clean, repaired, failed, skipped).",
            labels: ["outcome"]
        )
        reconciliationAlarms = try registry.counter(
            "iap_reconciliation_alarms_total",
            help: "Reconciliation alarms: customers whose ledger had missed more than the threshold."
        )
        supportAuditRefused = try registry.gauge(
            "iap_support_audit_refused",
            help: "1 while support actions are refused: the support audit does not match the ledger's head."
        )
        unknownProductPurchases = try registry.gauge(
            "iap_unknown_product_purchases",
            help: "Purchases recorded but parked: the catalog does not know their product (nothing is granted by "
                + "guess); reload the catalog (SIGHUP) once it names them."
        )
        claimedDeliveries = try registry.gauge(
            "iap_claimed_deliveries",
            help: "Deliveries under way: a deliverer claimed them and its claim has not expired."
        )
        staleClaims = try registry.gauge(
            "iap_stale_claims",
            help: "Deliveries whose deliverer stopped between its claim and the outcome (the claim expired); the "
                + "next drain of due deliveries delivers them."
        )
        for name in apps.isEmpty ? [String?.none] : apps.map(Optional.some) {
            for outcome in TransactionSubmissionResult.Outcome.allCases {
                submissions.initialize(labels: labels(app: name, [outcome.rawValue]))
            }
        }
        for outcome in ["clean", "repaired", "failed", "skipped"] {
            reconciliations.initialize(labels: [outcome])
        }
        reconciliationAlarms.initialize()
        retryQueueDepth.set(0)
        deadLetters.set(0)
        supportAuditRefused.set(0)
        unknownProductPurchases.set(0)
        claimedDeliveries.set(0)
        staleClaims.set(0)
    }

    /// A fulfillment hook that counts each call of `hook` in `iap_webhook_requests_total`: wrap the webhook with it
    /// before the pipeline is made.
    ///
    /// - Parameter hook: The hook (a `WebhookFulfillmentHook`).
    /// - Returns: The counting hook.
    public func measuring(_ hook: some FulfillmentHook) -> MeasuredFulfillmentHook {
        for name in apps.isEmpty ? [String?.none] : apps.map(Optional.some) {
            webhookRequests.initialize(labels: labels(app: name, ["grant", "success"]))
            webhookRequests.initialize(labels: labels(app: name, ["revoke", "success"]))
        }
        return MeasuredFulfillmentHook(hook, counter: webhookRequests, metrics: self)
    }

    /// Counts a verification failure, when the error is one.
    ///
    /// - Parameters:
    ///   - error: An error of a verification, a submission or a notification.
    ///   - app: The bundle id the data named, on a server of several apps.
    public func recordVerificationFailure(_ error: IAPError?, app: String? = nil) {
        guard let error, error.code.isVerificationFailure else { return }
        verificationFailures.increment(labels: labels(app: app, [error.code.rawValue]))
    }

    /// The `app` label of a bundle id: itself when it is served, else `unknown`.
    ///
    /// - Parameter bundleId: The bundle id the data named, or `nil`.
    /// - Returns: The label's value.
    public func appLabel(_ bundleId: String?) -> String {
        guard let bundleId, apps.contains(bundleId) else { return "unknown" }
        return bundleId
    }

    /// The labels of a family that counts what an app sent: `rest`, after the `app` label on a server of several apps.
    ///
    /// - Parameters:
    ///   - app: The bundle id the data named, or `nil`.
    ///   - rest: The family's other labels, in order.
    /// - Returns: The labels to count with.
    public func labels(app: String?, _ rest: [String]) -> [String] {
        apps.isEmpty ? rest : [appLabel(app)] + rest
    }

    /// Sets `iap_retry_queue_depth`, `iap_dead_letters` and `iap_unknown_product_purchases` from the ledger's
    /// statistics, and `iap_claimed_deliveries` and `iap_stale_claims` from its claims when it can list them
    /// (``ListableEntitlementStore``), at most once per `interval` (the statistics of a large database ledger are a
    /// scan).
    ///
    /// - Parameters:
    ///   - store: The ledger.
    ///   - interval: The shortest time between two reads of the statistics.
    ///   - clock: The clock the claims are judged by (the pipeline's).
    /// - Throws: ``IAPError`` when the ledger fails; the gauges keep their last values.
    public func refreshLedgerGauges(
        from store: some EntitlementStore,
        interval: Duration = .seconds(1),
        clock: any WallClock = SystemClock()
    ) async throws {
        let now = ContinuousClock.now
        let due = ledgerRefresh.withLock { last -> Bool in
            if let last, now - last < interval {
                return false
            }
            last = now
            return true
        }
        guard due else { return }
        let statistics = try await store.statistics()
        retryQueueDepth.set(Double(statistics.pendingRetries))
        deadLetters.set(Double(statistics.deadLetters))
        unknownProductPurchases.set(Double(statistics.unknownProduct))
        if let listable = store as? any ListableEntitlementStore {
            let claims = try await listable.claims(at: clock.now)
            claimedDeliveries.set(Double(claims.claimed))
            staleClaims.set(Double(claims.staleClaims))
        }
    }
}

/// A ``FulfillmentHook`` that counts each call of another in `iap_webhook_requests_total{type,result}`: `success`,
/// `failure` (a failure that is retried: a 5xx, a 4xx other than 409, 410 and 422, a timeout, a refused connection) or
/// `refused` (a failure that is not: a 410 or 422, dead-lettered at once). Made by
/// ``PurchaseServerMetrics/measuring(_:)``.
public struct MeasuredFulfillmentHook: FulfillmentHook {
    private let hook: any FulfillmentHook
    private let counter: MetricCounter
    private let metrics: PurchaseServerMetrics

    init(_ hook: some FulfillmentHook, counter: MetricCounter, metrics: PurchaseServerMetrics) {
        self.hook = hook
        self.counter = counter
        self.metrics = metrics
    }

    public func grant(_ delivery: Delivery) async throws {
        try await count("grant", delivery) { try await hook.grant(delivery) }
    }

    public func revoke(_ delivery: Delivery) async throws {
        try await count("revoke", delivery) { try await hook.revoke(delivery) }
    }

    private func count(_ type: String, _ delivery: Delivery, _ call: () async throws -> Void) async throws {
        let app = delivery.transaction.bundleId
        do {
            try await call()
            counter.increment(labels: metrics.labels(app: app, [type, "success"]))
        } catch {
            let retryable = (error as? IAPError)?.isRetryable ?? true
            counter.increment(labels: metrics.labels(app: app, [type, retryable ? "failure" : "refused"]))
            throw error
        }
    }
}
