#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore
public import IAPHTTPServer
public import IAPServerAPI

/// The operations console's pages, on a listener of their own (`iap serve --console-port`): sign-in and sign-out,
/// the overview and the analytics, server-rendered HTML with no script, every value escaped.
///
/// | route | what |
/// |---|---|
/// | `GET /console` | to the overview when signed in, else to the sign-in page |
/// | `GET`, `POST /console/sign-in` | the form (`Operator`, `Password`, `Sign in`); a wrong name or password and a throttled sign-in get the same answer |
/// | `POST /console/sign-out` | ends the session |
/// | `GET /console/overview` | the ledger's state, revenue today and this month, active subscriptions |
/// | `GET /console/analytics` | ``LedgerAnalytics`` over a range, as charts and tables |
/// | `GET /console/order?id=ORDER` | ``OrderLookup/lookUp(orderId:actor:)``, audited under the operator's name and role |
/// | `POST /console/order/redeliver` | ``OrderLookup/redeliver(orderId:actor:userId:)`` (support and admin), audited |
/// | `GET /console/dead-letters` | dead letters, retries waiting and dead letters given up, with `Retry now` and `Give up` |
/// | `POST /console/dead-letters/retry` | ``DeliveryPipeline/redeliver(transactionId:)`` (support and admin), audited |
/// | `POST /console/dead-letters/give-up` | ``DeliveryPipeline/giveUp(transactionId:)`` (admin), audited |
/// | `GET /console/notifications[?type=&environment=&outcome=]` | the notifications this instance processed lately (``ConsoleActivity``), filtered |
/// | `GET /console/audit[?before=N]` | the support audit, newest first, under its chain's verification |
/// | `GET /console/customer?q=TEXT[&cursor=C]` | a customer (by user id, transaction id, original transaction id or app transaction id): entitlements now and the timeline, paged; audited (`customer.lookup`) |
///
/// Every `POST` must come from the console's own origin (`Origin` naming the `Host` it was sent to) and, once signed
/// in, carry the session's CSRF token (``ConsoleSessions``); anything else is `403`.
public struct ConsoleRoutes: Sendable {
    /// Who may sign in.
    public let operators: ConsoleOperators
    /// The sessions' cookies and CSRF tokens.
    public let sessions: ConsoleSessions
    /// Failed sign-ins, per name and address.
    public let throttle: ConsoleSignInThrottle
    let pipeline: DeliveryPipeline
    let ledger: (any ListableEntitlementStore)?
    let readiness: ServerReadiness
    let support: OrderLookup?
    let audit: (any SupportAuditLog)?
    let activity: ConsoleActivity?

    /// Creates the console.
    ///
    /// - Parameters:
    ///   - operators: Who may sign in.
    ///   - sessions: The sessions.
    ///   - pipeline: The purchase server's pipeline: its store, catalog, clock and events.
    ///   - ledger: The ledger read whole for the figures (a ledger site's store).
    ///   - readiness: The purchase server's readiness, shown on the overview.
    ///   - support: The order tool (the App Store Server API of Production and the support audit); without it the
    ///     order page says so.
    ///   - audit: The support audit, where every customer read is written before it is shown; without it the
    ///     customer page shows nobody.
    ///   - activity: What the server saw lately (``PurchaseServer/activity``), for the notifications page and the
    ///     overview; without it they say so.
    public init(
        operators: ConsoleOperators,
        sessions: ConsoleSessions,
        pipeline: DeliveryPipeline,
        ledger: (any ListableEntitlementStore)?,
        readiness: ServerReadiness,
        support: OrderLookup? = nil,
        audit: (any SupportAuditLog)? = nil,
        activity: ConsoleActivity? = nil
    ) {
        self.operators = operators
        self.sessions = sessions
        self.throttle = ConsoleSignInThrottle()
        self.pipeline = pipeline
        self.ledger = ledger
        self.readiness = readiness
        self.support = support
        self.audit = audit
        self.activity = activity
    }

    /// A router with the console's routes.
    public var router: HTTPRouter {
        var router = HTTPRouter()
        router.add("GET", "/console") { [self] request in
            sessions.session(of: request, at: pipeline.clock.now) == nil
                ? ConsoleHTML.redirect(to: "/console/sign-in") : ConsoleHTML.redirect(to: "/console/overview")
        }
        router.add("GET", "/console/console.css") { _ in
            var response = HTTPServerResponse(status: 200, body: Data(ConsoleHTML.stylesheet.utf8))
            response.headers.add(name: "Content-Type", value: "text/css; charset=utf-8")
            for (name, value) in ConsoleHTML.securityHeaders {
                response.headers.add(name: name, value: value)
            }
            return response
        }
        router.add("GET", "/console/sign-in") { _ in Self.signInPage(error: nil) }
        router.add("POST", "/console/sign-in") { [self] request in await signIn(request) }
        router.add("POST", "/console/sign-out") { [self] request in
            guard let session = checkedPost(request) else { return await refused(request) }
            record("console.signOut", session.operatorName, outcome: "signedOut")
            return ConsoleHTML.redirect(to: "/console/sign-in", cookie: sessions.signOutCookie)
        }
        router.add("GET", "/console/overview") { [self] request in
            await signedIn(request) { session in await overview(session) }
        }
        router.add("GET", "/console/analytics") { [self] request in
            await signedIn(request) { session in await analytics(session, request) }
        }
        router.add("GET", "/console/order") { [self] request in
            await signedIn(request) { session in await order(session, request) }
        }
        router.add("GET", "/console/dead-letters") { [self] request in
            await signedIn(request) { session in await deadLetters(session) }
        }
        router.add("POST", "/console/dead-letters/retry") { [self] request in
            guard let session = checkedPost(request), session.role.mayRedeliver else { return await refused(request) }
            return await signedIn(request) { session in await retryNow(session, request) }
        }
        router.add("POST", "/console/dead-letters/give-up") { [self] request in
            guard let session = checkedPost(request), session.role.mayGiveUp else { return await refused(request) }
            return await signedIn(request) { session in await giveUp(session, request) }
        }
        router.add("GET", "/console/notifications") { [self] request in
            await signedIn(request) { session in notifications(session, request) }
        }
        router.add("GET", "/console/audit") { [self] request in
            await signedIn(request) { session in await auditPage(session, request) }
        }
        router.add("GET", "/console/customer") { [self] request in
            await signedIn(request) { session in await customer(session, request) }
        }
        router.add("POST", "/console/order/redeliver") { [self] request in
            guard let session = checkedPost(request), session.role.mayRedeliver else { return await refused(request) }
            return await signedIn(request) { session in await redeliver(session, request) }
        }
        // Any other path: a page of the console all the same (with its header when signed in), never a bare 404.
        router.fallback = { [self] request in
            await signedIn(request, status: 404, signedOut: Self.notFound) { _ in
                (
                    "Not found",
                    "<h1>Not found</h1><p>The console has no page \(ConsoleHTML.escape(request.path)).</p>"
                        + "<p><a href=\"/console/overview\">Back to the overview</a></p>"
                )
            }
        }
        return router
    }

    // MARK: - Sign-in

    static func signInPage(error: String?, status: Int = 200) -> HTTPServerResponse {
        let message = error.map { "<p class=\"error\" role=\"alert\">\(ConsoleHTML.escape($0))</p>" } ?? ""
        return ConsoleHTML.page(
            title: "Sign in",
            body: """
                <main><form class="sign-in" method="post" action="/console/sign-in">
                <h1>iap console</h1>\(message)
                <label for="operator">Operator</label>
                <input id="operator" name="operator" autocomplete="username" required maxlength="64">
                <label for="password">Password</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required>
                <button type="submit">Sign in</button>
                </form></main>
                """,
            status: status
        )
    }

    private func signIn(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        guard Self.isSameOrigin(request) else { return Self.forbidden }
        let fields = ConsoleHTML.form(request.body)
        let name = fields["operator"] ?? ""
        let password = fields["password"] ?? ""
        let now = pipeline.clock.now
        let refusal = "The operator or the password is wrong, or too many sign-ins failed: try again later."
        if throttle.isThrottled(name: name, address: request.remoteAddress, at: now) {
            record("console.signIn", name, outcome: "throttled")
            return Self.signInPage(error: refusal, status: 429)
        }
        let operators = self.operators
        // The derivation takes a noticeable time: off the request's thread of the pool, as any slow work.
        let signedIn = await Task.detached { operators.signIn(name: name, password: password) }.value
        guard let signedIn else {
            throttle.recordFailure(name: name, address: request.remoteAddress, at: now)
            record("console.signIn", nil, outcome: "refused")
            return Self.signInPage(error: refusal, status: 401)
        }
        let (_, cookie) = sessions.issue(for: signedIn, at: now)
        record("console.signIn", signedIn.name, outcome: "signedIn")
        return ConsoleHTML.redirect(to: "/console/overview", cookie: cookie)
    }

    // MARK: - Checks

    static let forbidden: HTTPServerResponse = ConsoleHTML.page(
        title: "Refused",
        body: "<main><h1>Refused</h1><p>This request did not come from a page of the console.</p>"
            + "<p><a href=\"/console\">Back to the console</a></p></main>",
        status: 403
    )

    static let notFound: HTTPServerResponse = ConsoleHTML.page(
        title: "Not found",
        body: "<main><h1>Not found</h1><p><a href=\"/console\">Back to the console</a></p></main>",
        status: 404
    )

    /// The answer to a refused POST: the refusal page, with the console's header for a signed-in operator (whose
    /// role, or whose form's origin or CSRF token, did not allow it).
    func refused(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        await signedIn(request, status: 403, signedOut: Self.forbidden) { _ in
            (
                "Refused",
                "<h1>Refused</h1><p>This request did not come from a page of the console, or your role does not "
                    + "allow it.</p><p><a href=\"/console/overview\">Back to the overview</a></p>"
            )
        }
    }

    /// Whether a request's `Origin` names the host it was sent to.
    ///
    /// A browser sends `Origin: null` with a form of a page whose policy is `Referrer-Policy: no-referrer`, as every
    /// console page's is; it then says where the request came from in `Sec-Fetch-Site`, a header no page can set or
    /// change: `same-origin` is accepted with `null`, and nothing else is (another site's form, a sandboxed frame or a
    /// page of another port says `cross-site` or `same-site`).
    static func isSameOrigin(_ request: HTTPServerRequest) -> Bool {
        if request.headers["Origin"] == "null" {
            return request.headers["Sec-Fetch-Site"]?.lowercased() == "same-origin"
        }
        guard let origin = request.headers["Origin"], let host = request.headers["Host"],
            let url = URL(string: origin), let originHost = url.host(percentEncoded: false)
        else { return false }
        let authority = url.port.map { "\(originHost):\($0)" } ?? originHost
        return authority.lowercased() == host.lowercased()
    }

    /// The session of a state-changing request, when it comes from the console's origin with the session's CSRF
    /// token.
    func checkedPost(_ request: HTTPServerRequest) -> ConsoleSession? {
        guard Self.isSameOrigin(request), let session = sessions.session(of: request, at: pipeline.clock.now),
            sessions.isValid(csrfToken: ConsoleHTML.form(request.body)["csrf"], for: session)
        else { return nil }
        return session
    }

    /// A page for a signed-in operator (the session renewed), or, signed out, the sign-in page (or `signedOut`).
    func signedIn(
        _ request: HTTPServerRequest,
        status: Int = 200,
        signedOut: HTTPServerResponse? = nil,
        _ render: (ConsoleSession) async -> (title: String, body: String)
    ) async -> HTTPServerResponse {
        let now = pipeline.clock.now
        guard let session = sessions.session(of: request, at: now) else {
            return signedOut ?? ConsoleHTML.redirect(to: "/console/sign-in")
        }
        let (title, body) = await render(session)
        return ConsoleHTML.page(
            title: title,
            body: header(session) + "<main>" + body + "</main>",
            status: status,
            cookie: sessions.renewed(session, at: now)
        )
    }

    /// The header of every signed-in page: the pages, and sign-out.
    private func header(_ session: ConsoleSession) -> String {
        """
        <header><strong>iap console</strong>
        <nav aria-label="Pages"><a href="/console/overview">Overview</a> · <a href="/console/order">Order lookup</a> · \
        <a href="/console/customer">Customers</a> · <a href="/console/dead-letters">Dead letters</a> · \
        <a href="/console/notifications">Notifications</a> · <a href="/console/analytics">Analytics</a> · \
        <a href="/console/audit">Audit</a></nav>
        <form method="get" action="/console/customer" role="search"><label for="search-customer">Customer</label>\
        <input id="search-customer" name="q" maxlength="256" required><button type="submit">Search</button></form>
        <form method="get" action="/console/order"><label for="search-order">Order ID</label>\
        <input id="search-order" name="id" maxlength="64" required><button type="submit">Look up</button></form>
        <span>\(ConsoleHTML.escape(session.operatorName)) (\(session.role.rawValue))</span>
        <form method="post" action="/console/sign-out"><input type="hidden" name="csrf" value="\(sessions.csrfToken(for: session))"><button type="submit">Sign out</button></form>
        </header>
        """
    }

    func record(_ event: String, _ name: String?, outcome: String) {
        pipeline.events.record(
            IAPEvent(time: pipeline.clock.now, event: event, outcome: outcome, message: name.map { "operator \($0)" })
        )
    }
}
