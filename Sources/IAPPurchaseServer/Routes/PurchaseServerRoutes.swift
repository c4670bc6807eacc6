#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore
public import IAPHTTPServer
public import IAPServerAPI

/// The purchase server's endpoints, to add to an ``HTTPRouter``: what `iap serve` answers, for a Swift server that
/// embeds the same routes.
///
/// | route | who may call | what |
/// |---|---|---|
/// | `POST /iap/v1/transactions` | the app, with a user token (``UserAuthenticator``) | the app's submission, answered exactly as ``TransactionSubmissionHandler`` answers (`401` in its shape without a valid token) |
/// | `POST /iap/v1/notifications` | the App Store (the data is verified) | App Store Server Notifications V2 of every accepted environment: `200` once durably recorded (a duplicate too), `400` for what does not verify, `503` to be sent again |
/// | `GET /iap/v1/users/{userId}/entitlements` | the service token | ``EntitlementListing``'s JSON; `?at=MILLIS` for another instant |
/// | `GET /iap/v1/users/{userId}/history?limit=N&cursor=C` | the service token | ``OrderHistoryPage``'s JSON, `limit` 1 to 200 (20 by default) |
/// | `GET /iap/v1/app-transactions/{appTransactionId}/history` | the service token | ``AppAccountHistory``'s JSON: an Apple Account's purchases, each with its owner |
/// | `POST /iap/v1/users/{userId}/account-tokens` | the service token | binds `{"appAccountToken": "UUID"}` to the user before the purchase: `201` bound, `200` already bound to this user, `409` bound to another user (not named), `400` not a UUID, `422` not derived from this user when a ``TokenOwnershipCheck`` is given |
/// | `POST /iap/v1/support/orders/{orderId}/lookup` | the service token and `X-Operator` | ``OrderLookup/lookUp(orderId:actor:)``, audited |
/// | `POST /iap/v1/support/orders/{orderId}/redeliver` | the service token and `X-Operator` | ``OrderLookup/redeliver(orderId:actor:userId:)`` with the optional body `{"userId": "..."}`, audited |
/// | `GET /iap/v1/analytics?from=…&to=…&interval=…&environment=…&product=…` | the service token | ``AnalyticsReport``'s JSON (``LedgerAnalytics``) |
/// | `GET /healthz` | anyone | `200` while the process serves |
/// | `GET /readyz` | anyone | `200` once ready (``ServerReadiness``), `503` before and while stopping; a failing check that leaves purchases flowing is listed as `degraded: NAME: reason` in a `200` |
/// | `GET /metrics` | anyone | ``PurchaseServerMetrics`` in the Prometheus text format 0.0.4 |
///
/// Errors outside the submission's own shape are `{"code": "<IAPError code>", "error": "<neutral message>"}`: `401`
/// (with `WWW-Authenticate: Bearer`) without the credential a route needs, `400` for a malformed request, `404` for an
/// order Apple does not know, `501` for support without an App Store Server API client of Production, `502` when the
/// App Store Server API fails, `503` when the ledger does. What went wrong in detail goes to the ``EventSink``, never to
/// the client.
///
/// ```swift
/// var router = HTTPRouter()
/// routes.register(on: &router)
/// let server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 8080), router: router)
/// ```
public struct PurchaseServerRoutes: Sendable {
    let pipeline: DeliveryPipeline
    let submissions: TransactionSubmissionHandler
    let notifications: NotificationProcessor
    let users: any UserAuthenticator
    let service: ServiceTokenAuthenticator
    let support: OrderLookup?
    let metrics: PurchaseServerMetrics
    let readiness: ServerReadiness
    let ledger: (any ListableEntitlementStore)?

    var store: any EntitlementStore { pipeline.store }
    var catalog: any ProductCatalog { pipeline.catalog }
    var unknownProducts: UnknownProductPolicy { pipeline.unknownProducts }
    var proratedRefunds: ProratedRefundPolicy { pipeline.proratedRefunds }
    var events: any EventSink { pipeline.events }
    var clock: any WallClock { pipeline.clock }
    var tokenOwnership: TokenOwnershipCheck? { pipeline.tokenOwnership }

    /// The largest body the routes need: a notification (``NotificationProcessor/maximumBodySize``). Give the
    /// ``HTTPServer`` this ``HTTPServer/Configuration/maximumBodySize``.
    public static let maximumBodySize = NotificationProcessor.maximumBodySize

    /// The longest operator name (`X-Operator`) accepted.
    public static let maximumOperatorLength = 128

    /// Creates the routes.
    ///
    /// - Parameters:
    ///   - pipeline: Delivers the app's submissions and the App Store's notifications; its store is the ledger the
    ///     entitlements and history are read from, its catalog and policies (unknown products, prorated refunds, who
    ///     may claim an appAccountToken) decide the entitlements and the `account-tokens` answers, its clock is the
    ///     instant of the entitlements, and its event sink hears of refused credentials and failures.
    ///   - consumptionRequests: Answers the App Store's `CONSUMPTION_REQUEST`s; without one they are acknowledged
    ///     only.
    ///   - appNotifications: Handles the app-level notifications (`RESCIND_CONSENT`, ...); without one they are
    ///     acknowledged only.
    ///   - users: Authenticates the app's user.
    ///   - service: Checks the service token of the user and support endpoints.
    ///   - support: The order tool, with the App Store Server API client of Production and the audit log; `nil`
    ///     answers the support endpoints `501`.
    ///   - metrics: What `GET /metrics` exposes, counted as requests are answered.
    ///   - readiness: What `GET /readyz` answers.
    ///   - ledger: The ledger read whole by `GET /iap/v1/analytics` (a ledger site's store); without one, the
    ///     pipeline's store when it can be read whole, else the route answers `501`.
    public init(
        pipeline: DeliveryPipeline,
        consumptionRequests: (any ConsumptionRequestHandler)? = nil,
        appNotifications: (any AppNotificationHandler)? = nil,
        users: some UserAuthenticator,
        service: ServiceTokenAuthenticator,
        support: OrderLookup? = nil,
        metrics: PurchaseServerMetrics,
        readiness: ServerReadiness = ServerReadiness(ready: true),
        ledger: (any ListableEntitlementStore)? = nil
    ) {
        self.pipeline = pipeline
        self.submissions = TransactionSubmissionHandler(pipeline: pipeline)
        self.notifications = NotificationProcessor(
            pipeline: pipeline,
            consumptionRequests: consumptionRequests,
            appNotifications: appNotifications
        )
        self.users = users
        self.service = service
        self.support = support
        self.metrics = metrics
        self.readiness = readiness
        self.ledger = ledger ?? (pipeline.store as? any ListableEntitlementStore)
    }

    /// Adds every route to a router.
    ///
    /// - Parameter router: The router.
    public func register(on router: inout HTTPRouter) {
        add(&router, "POST", "/iap/v1/transactions", submit)
        add(&router, "POST", "/iap/v1/notifications", notify)
        add(&router, "GET", "/iap/v1/users/{userId}/entitlements", entitlements)
        add(&router, "GET", "/iap/v1/me/entitlements", myEntitlements)
        add(&router, "GET", "/iap/v1/users/{userId}/history", history)
        add(&router, "GET", "/iap/v1/app-transactions/{appTransactionId}/history", appAccountHistory)
        add(&router, "POST", "/iap/v1/users/{userId}/account-tokens", bindAccountToken)
        add(&router, "POST", "/iap/v1/support/orders/{orderId}/lookup", lookUp)
        add(&router, "POST", "/iap/v1/support/orders/{orderId}/redeliver", redeliver)
        add(&router, "GET", "/iap/v1/analytics", analytics)
        add(&router, "GET", "/healthz") { _ in .text("ok\n") }
        add(&router, "GET", "/readyz") { [readiness] _ in
            guard readiness.isReady else { return .text("not ready\n", status: 503) }
            let degraded = readiness.degradedChecks.map { "degraded: \($0.name): \($0.reason)\n" }
            return .text("ready\n" + degraded.joined())
        }
        add(&router, "GET", "/metrics", exposeMetrics)
    }

    /// A router with every route.
    public var router: HTTPRouter {
        var router = HTTPRouter()
        register(on: &router)
        return router
    }

    /// Adds a route whose answers are timed and counted by route pattern.
    private func add(
        _ router: inout HTTPRouter,
        _ method: String,
        _ pattern: String,
        _ handler: @escaping @Sendable (HTTPServerRequest) async -> HTTPServerResponse
    ) {
        router.add(method, pattern) { [metrics] request in
            let started = ContinuousClock.now
            let response = await handler(request)
            metrics.requestDuration.observe(ContinuousClock.now - started, labels: [pattern])
            metrics.responses.increment(labels: [pattern, String(response.status)])
            return response
        }
    }

    // MARK: - The app and the App Store

    /// `POST /iap/v1/transactions`.
    @Sendable
    func submit(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        let userId: String
        do {
            userId = try await users.authenticate(request)
        } catch {
            let detail = IAPError.wrapping(error, as: .unauthenticated, "the user authenticator failed")
            let response = TransactionSubmissionResponse(
                result: TransactionSubmissionResult(
                    outcome: .rejected,
                    transactionId: nil,
                    error: IAPError(.unauthenticated, "the request is not authenticated")
                ),
                status: 401,
                detail: detail
            )
            events.record(
                IAPEvent(
                    time: clock.now,
                    event: "submission.rejected",
                    outcome: TransactionSubmissionResult.Outcome.rejected.rawValue,
                    errorCode: IAPError.Code.unauthenticated.rawValue,
                    message: detail.message
                )
            )
            let app = metricApp(ofBody: request.body, field: .transaction)
            metrics.submissions.increment(labels: metrics.labels(app: app, [response.result.outcome.rawValue]))
            var answer = Self.answer(response)
            answer.headers.add(name: "WWW-Authenticate", value: #"Bearer realm="iap""#)
            return answer
        }
        let response = await submissions.handle(body: request.body, authenticatedUserId: userId)
        let app = metricApp(ofBody: request.body, field: .transaction)
        metrics.submissions.increment(labels: metrics.labels(app: app, [response.result.outcome.rawValue]))
        metrics.recordVerificationFailure(response.detail, app: app)
        return Self.answer(response)
    }

    private static func answer(_ response: TransactionSubmissionResponse) -> HTTPServerResponse {
        HTTPServerResponse(
            status: response.status,
            headers: ["Content-Type": TransactionSubmissionResponse.contentType],
            body: response.body
        )
    }

    /// `POST /iap/v1/notifications`: the processor's neutral answer (``NotificationOutcome/response``).
    @Sendable
    func notify(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        let outcome = await notifications.process(body: request.body)
        let app = metricApp(ofBody: request.body, field: .notification)
        metrics.notifications.increment(
            labels: metrics.labels(app: app, [outcome.notificationType?.rawValue ?? "unknown", outcome.name])
        )
        if case .rejected(let error) = outcome {
            metrics.recordVerificationFailure(error, app: app)
        }
        let answer = outcome.response
        var response = HTTPServerResponse.json(Data(answer.body.utf8), status: answer.status)
        if let seconds = answer.retryAfterSeconds {
            response.headers.add(name: "Retry-After", value: String(seconds))
        }
        return response
    }

    // MARK: - Operations

    /// `GET /metrics`.
    @Sendable
    func exposeMetrics(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        do {
            try await metrics.refreshLedgerGauges(from: store, clock: pipeline.clock)
        } catch {
            // The gauges keep their last values; the scrape still answers.
            report("metrics.failed", error, route: "/metrics")
        }
        return HTTPServerResponse(
            status: 200,
            headers: ["Content-Type": MetricsRegistry.contentType],
            body: Data(metrics.registry.exposition().utf8)
        )
    }
}
