import Foundation
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPTesting
import Testing

/// The console's sign-in, sessions and pages, driven in process: what an attacker tries (no Origin, another origin,
/// no CSRF token, a forged or expired cookie, guessing passwords, HTML in a product id) is refused or shown as text.
@Suite("Console: sign-in, sessions, pages")
struct ConsoleRoutesTests {
    static let secret = Array("console-secret-for-route-tests-0123".utf8)
    static let host = "console.internal:8081"
    static let origin = "http://console.internal:8081"

    struct Console {
        let world: PurchaseServerWorld
        let routes: ConsoleRoutes
        /// Fed by ``replayEvents()``: the world's pipeline reports to its own sink.
        let activity = ConsoleActivity()
        let client: RouterTester

        init(operators: [(String, ConsoleRole, String)] = [("carol", .support, "correct horse battery")]) throws {
            world = try PurchaseServerWorld()
            var list = ConsoleOperators(derivation: PBKDF2HMACSHA256())
            for (name, role, password) in operators {
                try list.set(name: name, role: role, password: password)
            }
            routes = ConsoleRoutes(
                operators: list,
                sessions: ConsoleSessions(authenticator: try HMACSHA256(key: ConsoleRoutesTests.secret)),
                pipeline: world.pipeline,
                ledger: world.ledger,
                readiness: world.readiness,
                support: world.lookup,
                audit: world.auditLog,
                activity: activity
            )
            client = RouterTester(router: routes.router)
        }

        /// Gives the console's activity record what the world's pipeline reported, as a purchase server's does live.
        func replayEvents() {
            for event in world.events.events {
                activity.record(event)
            }
        }

        func post(_ path: String, _ form: String, cookie: String? = nil, origin: String? = ConsoleRoutesTests.origin)
            async throws -> TestResponse
        {
            var headers = [("Host", ConsoleRoutesTests.host), ("Content-Type", "application/x-www-form-urlencoded")]
            if let origin {
                headers.append(("Origin", origin))
            }
            if let cookie {
                headers.append(("Cookie", cookie))
            }
            return try await client.send("POST", path, headers: headers, body: form)
        }

        func get(_ path: String, cookie: String? = nil) async throws -> TestResponse {
            var headers = [("Host", ConsoleRoutesTests.host)]
            if let cookie {
                headers.append(("Cookie", cookie))
            }
            return try await client.send("GET", path, headers: headers)
        }

        /// Signs in and returns the cookie (`name=value`).
        func signIn(_ name: String = "carol", _ password: String = "correct horse battery") async throws -> String {
            let answer = try await post(
                "/console/sign-in",
                "operator=\(name)&password=\(password.replacingOccurrences(of: " ", with: "+"))"
            )
            try #require(answer.status == 303, "\(answer.everything)")
            let cookie = try #require(answer.headers["Set-Cookie"])
            return String(cookie.split(separator: ";")[0])
        }
    }

    static func csrf(in page: String) throws -> String {
        let marker = #"name="csrf" value=""#
        let start = try #require(page.range(of: marker)).upperBound
        return String(page[start...].prefix { $0 != "\"" })
    }

    @Test func theSignInPageIsLabelledAndEveryAnswerCarriesTheSecurityHeaders() async throws {
        let console = try Console()
        let root = try await console.get("/console")
        #expect(root.status == 303 && root.headers["Location"] == "/console/sign-in")
        let page = try await console.get("/console/sign-in")
        #expect(page.status == 200)
        for label in [
            #"<label for="operator">Operator</label>"#, #"<label for="password">Password</label>"#, ">Sign in</button>",
        ] {
            #expect(page.text.contains(label))
        }
        #expect(!page.text.contains("<script"))
        let policy = try #require(page.headers["Content-Security-Policy"])
        #expect(policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"))
        #expect(!policy.contains("unsafe-inline"))
        #expect(page.headers["X-Content-Type-Options"] == "nosniff")
        #expect(page.headers["Referrer-Policy"] == "no-referrer")
        // Signed-out pages send to the sign-in page.
        #expect(try await console.get("/console/overview").headers["Location"] == "/console/sign-in")
    }

    @Test func aWrongPasswordAndAnUnknownNameGetTheSameAnswerAndGuessingIsThrottled() async throws {
        let console = try Console()
        let wrong = try await console.post("/console/sign-in", "operator=carol&password=wrong+password")
        let unknown = try await console.post("/console/sign-in", "operator=mallory&password=wrong+password")
        #expect(wrong.status == 401 && unknown.status == 401)
        #expect(wrong.text == unknown.text)
        #expect(wrong.headers["Set-Cookie"] == nil)
        for _ in 0..<4 {
            _ = try await console.post("/console/sign-in", "operator=carol&password=guess")
        }
        // Five failures for carol within 15 minutes: even the right password is refused now, with the same words.
        let throttled = try await console.post("/console/sign-in", "operator=carol&password=correct+horse+battery")
        #expect(throttled.status == 429)
        #expect(throttled.headers["Set-Cookie"] == nil)
        #expect(throttled.text.contains("The operator or the password is wrong"))
        console.world.clock.advance(by: .seconds(16 * 60))
        #expect(try await console.signIn().hasPrefix("iap_console="))
    }

    @Test func aSignInFromAnotherOriginOrWithoutOneIsRefused() async throws {
        let console = try Console()
        for origin in [nil, "https://evil.example", "http://console.internal:9999"] {
            let answer = try await console.post(
                "/console/sign-in",
                "operator=carol&password=correct+horse+battery",
                origin: origin
            )
            #expect(answer.status == 403, "\(origin ?? "no origin")")
            #expect(answer.headers["Set-Cookie"] == nil)
        }
        // A browser sends `Origin: null` under `Referrer-Policy: no-referrer`: accepted only when it also says the form
        // came from this origin (`Sec-Fetch-Site`, which no page can set).
        for (site, status) in [("same-origin", 303), ("cross-site", 403), ("same-site", 403), (nil, 403)] {
            var headers = [
                ("Host", Self.host), ("Origin", "null"), ("Content-Type", "application/x-www-form-urlencoded"),
            ]
            if let site {
                headers.append(("Sec-Fetch-Site", site))
            }
            let answer = try await console.client.send(
                "POST",
                "/console/sign-in",
                headers: headers,
                body: "operator=carol&password=correct+horse+battery"
            )
            #expect(answer.status == status, "Sec-Fetch-Site \(site ?? "absent")")
        }
    }

    @Test func aSessionShowsThePagesAndSignsOutOnlyWithItsCSRFTokenFromTheConsole() async throws {
        let console = try Console()
        let cookie = try await console.signIn()
        let overview = try await console.get("/console/overview", cookie: cookie)
        #expect(overview.status == 200, "\(overview.everything)")
        #expect(overview.text.contains("carol (support)") && overview.text.contains(">Sign out</button>"))
        let renewed = try #require(overview.headers["Set-Cookie"])
        #expect(renewed.contains("HttpOnly") && renewed.contains("SameSite=Strict") && renewed.contains("Secure"))
        let token = try Self.csrf(in: overview.text)

        #expect(try await console.post("/console/sign-out", "", cookie: cookie).status == 403)
        #expect(try await console.post("/console/sign-out", "csrf=forged", cookie: cookie).status == 403)
        #expect(
            try await console.post("/console/sign-out", "csrf=\(token)", cookie: cookie, origin: "https://evil.example")
                .status == 403
        )
        let signedOut = try await console.post("/console/sign-out", "csrf=\(token)", cookie: cookie)
        #expect(signedOut.status == 303)
        #expect(signedOut.headers["Set-Cookie"]?.contains("Max-Age=0") == true)
    }

    @Test func aForgedTamperedOrExpiredCookieIsNoSession() async throws {
        let console = try Console()
        let cookie = try await console.signIn()
        let value = String(cookie.dropFirst("iap_console=".count))
        let parts = value.split(separator: ".")
        // Another role in the payload, the signature kept.
        let payload = String(decoding: try #require(Base64.decodeURL(parts[0])), as: UTF8.self)
            .replacingOccurrences(of: "support", with: "admin")
        let forged = "iap_console=\(Base64.encodeURL(Array(payload.utf8))).\(parts[1])"
        for attempt in [forged, "iap_console=\(parts[0]).AAAA", "iap_console=", "iap_console=x.y.z"] {
            #expect(try await console.get("/console/overview", cookie: attempt).status == 303, "\(attempt)")
        }
        // Signed by another secret.
        let other = ConsoleSessions(authenticator: try HMACSHA256(key: Array("another-secret-of-32-bytes-00000".utf8)))
        let (_, otherCookie) = other.issue(
            for: try #require(console.routes.operators.operators.first),
            at: console.world.clock.now
        )
        #expect(
            try await console.get("/console/overview", cookie: String(otherCookie.split(separator: ";")[0])).status
                == 303
        )
        // Idle for 31 minutes.
        console.world.clock.advance(by: .seconds(31 * 60))
        #expect(try await console.get("/console/overview", cookie: cookie).status == 303)
    }

    @Test func aProductIdOrUserIdHoldingHTMLIsShownAsText() async throws {
        let console = try Console()
        var transaction = TransactionPayload()
        transaction.transactionId = "2000000000000099"
        transaction.originalTransactionId = "2000000000000099"
        transaction.productId = #"<script>alert(1)</script>"><img src=x onerror=alert(2)>"#
        transaction.purchaseDate = console.world.clock.now
        transaction.environment = .production
        transaction.price = 990
        transaction.currency = "USD"
        transaction.type = .consumable
        var entry = LedgerEntry(
            transaction: transaction,
            transactionId: "2000000000000099",
            originalTransactionId: "2000000000000099",
            userId: #"<b onmouseover=alert(3)>eve</b>"#,
            productId: transaction.productId ?? "",
            recordedAt: console.world.clock.now
        )
        entry.deliveryState = .delivered
        _ = try await console.world.ledger.insert(entry)
        let cookie = try await console.signIn()
        let page = try await console.get("/console/analytics", cookie: cookie)
        #expect(page.status == 200, "\(page.everything)")
        #expect(page.text.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"))
        #expect(!page.text.contains("<script") && !page.text.contains("<img"))
    }

    @Test func theAnalyticsPageChartsEachFigureAsSVGAndStaysSmall() async throws {
        let console = try Console()
        _ = try await console.world.buyAndSubmit("coins.100", user: "alice")
        let cookie = try await console.signIn()
        let quarter = try await console.get(
            "/console/analytics?from=2026-01-01&to=2026-04-01&interval=day",
            cookie: cookie
        )
        #expect(quarter.status == 200)
        for title in [
            "Net revenue, USD", "MRR, USD", "Active subscriptions", "New subscriptions", "Churned subscriptions",
            "Trial conversions", "Refunds",
        ] {
            #expect(quarter.text.contains("<figcaption>\(title)</figcaption>"), "\(title)")
        }
        #expect(quarter.text.components(separatedBy: "<svg").count - 1 == 7)
        #expect(quarter.text.contains(#"role="img""#) && quarter.text.contains("<title id="))
        #expect(quarter.body.count < 200_000, "\(quarter.body.count) bytes")
        // A year by day is a table only, with a note.
        let year = try await console.get(
            "/console/analytics?from=2026-01-01&to=2027-01-01&interval=day",
            cookie: cookie
        )
        #expect(!year.text.contains("<svg") && year.text.contains("choose a longer interval"))
        #expect(year.body.count < 200_000, "\(year.body.count) bytes")
        // A bad range is said, not thrown.
        let bad = try await console.get("/console/analytics?from=2026-02-01&to=2026-01-01", cookie: cookie)
        #expect(bad.status == 200 && bad.text.contains("role=\"alert\""))
    }

    @Test func anOrderIsLookedUpAndRedeliveredOnceFromThePageAndTheAuditNamesTheOperatorAndRole() async throws {
        let console = try Console(operators: [
            ("carol", .support, "correct horse battery"), ("vic", .viewer, "viewer password 1"),
        ])
        let lost = try await console.world.buy("coins.100", user: "alice")
        let orderId = try #require(lost.orderId)
        let carol = try await console.signIn()
        let page = try await console.get("/console/order?id=\(orderId)", cookie: carol)
        #expect(page.status == 200, "\(page.everything)")
        #expect(page.text.contains(lost.transactionId) && page.text.contains(">Redeliver</button>"))
        #expect(page.text.contains(#"<label for="search-order">Order ID</label>"#))
        // The purchase has a token nobody claimed: the form asks for the customer.
        #expect(page.text.contains(#"<label for="customer">Customer</label>"#))
        let token = try Self.csrf(in: page.text)

        // A viewer sees no button, and a forged POST from their session is refused.
        let vic = try await console.signIn("vic", "viewer password 1")
        let viewed = try await console.get("/console/order?id=\(orderId)", cookie: vic)
        #expect(viewed.status == 200 && !viewed.text.contains(">Redeliver</button>"))
        let vicToken = try Self.csrf(in: viewed.text)
        let forged = try await console.post(
            "/console/order/redeliver",
            "csrf=\(vicToken)&order=\(orderId)&customer=alice",
            cookie: vic
        )
        #expect(forged.status == 403)
        #expect(console.world.wallet.calls.isEmpty)
        // Without the CSRF token, or from another origin: refused.
        #expect(
            try await console.post("/console/order/redeliver", "order=\(orderId)&customer=alice", cookie: carol).status
                == 403
        )

        let redelivered = try await console.post(
            "/console/order/redeliver",
            "csrf=\(token)&order=\(orderId)&customer=alice",
            cookie: carol
        )
        #expect(redelivered.status == 200, "\(redelivered.everything)")
        #expect(redelivered.text.contains("redelivered"))
        #expect(console.world.wallet.balance("alice") == 100)
        _ = try await console.post("/console/order/redeliver", "csrf=\(token)&order=\(orderId)", cookie: carol)
        #expect(console.world.wallet.calls.count == 1)
        // The order's page has its audit trail, newest first: this lookup, the redeliveries, vic's lookup.
        let again = try await console.get("/console/order?id=\(orderId)", cookie: carol)
        let trail = try #require(again.text.components(separatedBy: "<h2>Audit trail</h2>").last)
        #expect(trail.contains("<td>carol (support, console)</td><td>redeliver.completed</td><td>alice</td>"))
        #expect(trail.contains("<td>vic (viewer, console)</td><td>lookup</td>"))
        #expect(again.text.contains("delivered"))
        let audit = await console.world.auditLog.entries()
        #expect(audit.map(\.actor).allSatisfy { $0 == "carol (support, console)" || $0 == "vic (viewer, console)" })
        #expect(audit.contains { $0.action == "lookup" && $0.actor == "vic (viewer, console)" })
        #expect(audit.contains { $0.action.hasPrefix("redeliver") && $0.actor == "carol (support, console)" })
    }

    @Test func aCustomerIsFoundByUserTransactionOrOriginalIdWithEntitlementsAndAPagedTimelineAndEveryReadIsAudited()
        async throws
    {
        let console = try Console()
        let subscription = try await console.world.buyAndSubmit("plus.monthly", user: "alice")
        var coins: [SimulatedTransaction] = []
        for _ in 0..<26 {
            coins.append(try await console.world.buyAndSubmit("coins.100", user: "alice"))
        }
        _ = try await console.world.buyAndSubmit("pro.lifetime", user: "bob")
        let cookie = try await console.signIn()

        let page = try await console.get("/console/customer?q=alice", cookie: cookie)
        #expect(page.status == 200, "\(page.everything)")
        #expect(page.text.contains("Found by user id <strong>alice</strong>"))
        #expect(page.text.contains(#"<label for="search-customer">Customer</label>"#))
        #expect(page.text.contains(">Search</button>"))
        // Entitlements now: the subscription active and renewing, the balance of 26 purchases of 100 coins.
        #expect(
            page.text.contains("<th scope=\"row\">plus.monthly</th><td>autoRenewable</td><td>active</td><td>yes</td>")
        )
        #expect(page.text.contains("<th scope=\"row\">coins.100</th><td class=\"number\">2600</td>"))
        // The newest 25 entries, then a link to the older ones; nothing of bob.
        #expect(page.text.components(separatedBy: "<td>Purchase</td>").count - 1 == 25)
        #expect(!page.text.contains("pro.lifetime"))
        let older = try #require(page.text.range(of: #"<a href="/console/customer?q=alice&amp;cursor="#))
        let link = String(page.text[older.lowerBound...].dropFirst(9).prefix { $0 != "\"" })
            .replacingOccurrences(of: "&amp;", with: "&")
        let second = try await console.get(link, cookie: cookie)
        #expect(second.status == 200, "\(second.everything)")
        #expect(second.text.components(separatedBy: "<td>Purchase</td>").count - 1 == 2)
        #expect(second.text.contains(subscription.transactionId) && !second.text.contains(">Older</a>"))

        // By a transaction id, and by the subscription's original transaction id.
        let byTransaction = try await console.get("/console/customer?q=\(coins[3].transactionId)", cookie: cookie)
        #expect(byTransaction.text.contains("Found by transaction id"))
        #expect(byTransaction.text.contains("customer <strong>alice</strong>"))
        let byOriginal = try await console.get(
            "/console/customer?q=\(subscription.originalTransactionId)&cursor=",
            cookie: cookie
        )
        #expect(byOriginal.text.contains("customer <strong>alice</strong>"))
        // By the Apple Account's app transaction id (the ledger read whole).
        let appTransactionId = try #require(subscription.payload.appTransactionId)
        let byAccount = try await console.get("/console/customer?q=\(appTransactionId)", cookie: cookie)
        #expect(byAccount.text.contains("Found by app transaction id"), "\(byAccount.text)")
        let bob = try await console.get("/console/customer?q=bob", cookie: cookie)
        #expect(bob.text.contains("pro.lifetime") && !bob.text.contains("coins.100"))
        let nobody = try await console.get("/console/customer?q=%3Cscript%3Ecarl", cookie: cookie)
        #expect(
            nobody.status == 200 && nobody.text.contains("No customer") && nobody.text.contains("&lt;script&gt;carl")
        )

        // Six customers shown, six audit entries naming the operator, the customer and what was shown.
        let audit = await console.world.auditLog.entries().filter { $0.action == "customer.lookup" }
        #expect(audit.map(\.userId) == ["alice", "alice", "alice", "alice", "alice", "bob"])
        #expect(audit.allSatisfy { $0.actor == "carol (support, console)" })
        #expect(audit[0].outcomes.count == 25 && audit[1].outcomes.count == 2)
        #expect(audit[0].outcomes.allSatisfy { $0.outcome == "shown" })
    }

    @Test func aCustomersRefundAndAFailedDeliveryAreOnTheTimelineAsText() async throws {
        let console = try Console()
        let bought = try await console.world.buyAndSubmit("pro.lifetime", user: #"<img src=x onerror=alert(1)>"#)
        try await console.world.appStore.refund(transactionId: bought.transactionId)
        for payload in await console.world.appStore.drainNotifications() {
            _ = try await console.world.notify(payload)
        }
        console.world.wallet.failNext(1)
        let coins = try await console.world.buy("coins.100", user: #"<img src=x onerror=alert(1)>"#)
        #expect(
            try await console.world.submit(coins.signedTransaction, as: #"<img src=x onerror=alert(1)>"#).status == 202
        )
        let cookie = try await console.signIn()
        let page = try await console.get(
            "/console/customer?q=\(ConsoleRoutesTests.formEncoded(#"<img src=x onerror=alert(1)>"#))",
            cookie: cookie
        )
        #expect(page.status == 200, "\(page.everything)")
        #expect(page.text.contains("&lt;img src=x onerror=alert(1)&gt;") && !page.text.contains("<img"))
        #expect(page.text.contains("<td>Refunded</td>"))
        #expect(page.text.contains("retrying, 1 attempt, next "))
        #expect(
            page.text.contains("<th scope=\"row\">pro.lifetime</th><td>nonConsumable</td><td>revoked</td><td>no</td>")
        )
    }

    @Test func theAuditPageListsEveryEntryNewestFirstUnderTheChainsVerification() async throws {
        let console = try Console()
        _ = try await console.world.buyAndSubmit("coins.100", user: "alice")
        let cookie = try await console.signIn()
        for _ in 0..<55 {
            #expect(try await console.get("/console/customer?q=alice", cookie: cookie).status == 200)
        }
        let page = try await console.get("/console/audit", cookie: cookie)
        #expect(page.status == 200, "\(page.everything)")
        #expect(page.text.contains("The chain is intact: 55 entries"))
        #expect(
            page.text.contains("<td class=\"number\">55</td>") && !page.text.contains("<td class=\"number\">5</td>")
        )
        #expect(page.text.contains("<td>carol (support, console)") && page.text.contains("<td>customer.lookup</td>"))
        #expect(page.text.contains(#"<a href="/console/customer?q=alice">alice</a>"#))
        #expect(page.text.contains(#"<a href="/console/audit?before=6">Older</a>"#))
        let older = try await console.get("/console/audit?before=6", cookie: cookie)
        #expect(
            older.text.contains("<td class=\"number\">5</td>") && older.text.contains("<td class=\"number\">1</td>")
        )
        #expect(!older.text.contains(">Older</a>"))
        #expect(try await console.get("/console/audit?before=x", cookie: cookie).text.contains("does not exist"))
    }

    @Test func aBrokenAuditIsSaidOnTheAuditPageAndNoCustomerIsShown() async throws {
        let world = try PurchaseServerWorld()
        _ = try await world.buyAndSubmit("coins.100", user: "alice")
        var operators = ConsoleOperators(derivation: PBKDF2HMACSHA256())
        try operators.set(name: "carol", role: .support, password: "correct horse battery")
        let routes = ConsoleRoutes(
            operators: operators,
            sessions: ConsoleSessions(authenticator: try HMACSHA256(key: Self.secret)),
            pipeline: world.pipeline,
            ledger: world.ledger,
            readiness: world.readiness,
            audit: BrokenAuditLog()
        )
        let client = RouterTester(router: routes.router)
        let signIn = try await client.send(
            "POST",
            "/console/sign-in",
            headers: [("Host", Self.host), ("Origin", Self.origin)],
            body: "operator=carol&password=correct+horse+battery"
        )
        let cookie = String(try #require(signIn.headers["Set-Cookie"]).split(separator: ";")[0])
        let headers = [("Host", Self.host), ("Cookie", cookie)]
        let audit = try await client.send("GET", "/console/audit", headers: headers)
        #expect(audit.text.contains("The chain is broken") && audit.text.contains("entry 2: the hash does not match"))
        let customer = try await client.send("GET", "/console/customer?q=alice", headers: headers)
        #expect(
            customer.text.contains("The support audit cannot be written now") && !customer.text.contains("coins.100")
        )
    }

    /// An audit whose chain is broken at its second entry, and which refuses every append.
    struct BrokenAuditLog: SupportAuditLog {
        func append(_ entry: SupportAuditEntry) async throws -> SupportAuditEntry {
            throw IAPError(.storageCorrupted, "the log does not match its head")
        }
        func entries() async throws -> [SupportAuditEntry] { [] }
        func verify() async throws -> SupportAuditVerification {
            SupportAuditVerification(
                entryCount: 3,
                head: SupportAuditHead(entries: 3, lastHash: "ab"),
                recordedHead: nil,
                problems: [.init(entry: 2, location: "", message: "the hash does not match")]
            )
        }
    }

    /// A dead letter of 100 coins for `user`, recorded as the retry queue leaves one after its last attempt.
    static func deadLetter(_ id: String, user: String, in world: PurchaseServerWorld) async throws {
        try await record(id, user: user, state: .deadLettered, in: world)
    }

    /// Records a consumable in the ledger in `state` (12 attempts, the wallet's last answer a 500), its next attempt
    /// (or the claim's expiry) at `next`.
    static func record(
        _ id: String,
        user: String,
        state: DeliveryState,
        next: Date? = nil,
        in world: PurchaseServerWorld
    ) async throws {
        var transaction = TransactionPayload()
        transaction.transactionId = id
        transaction.originalTransactionId = id
        transaction.productId = "coins.100"
        transaction.purchaseDate = world.clock.now
        transaction.environment = .production
        transaction.type = .consumable
        transaction.quantity = 1
        var entry = LedgerEntry(
            transaction: transaction,
            transactionId: id,
            originalTransactionId: id,
            userId: user,
            productId: "coins.100",
            recordedAt: world.clock.now
        )
        entry.deliveryState = state
        entry.nextAttemptAt = next
        entry.deliveryAttempts = 12
        entry.lastError = "the wallet answered 500"
        _ = try await world.ledger.insert(entry)
    }

    @Test func theOverviewCountsDeliveriesUnderWayAndClaimsWhoseDelivererStopped() async throws {
        let console = try Console()
        let world = console.world
        for (id, expiry) in [
            ("3000000000000011", world.clock.now.addingTimeInterval(-600)),
            ("3000000000000012", world.clock.now.addingTimeInterval(60)),
            ("3000000000000013", world.clock.now.addingTimeInterval(90)),
        ] {
            try await Self.record(id, user: "alice", state: .pending, next: expiry, in: world)
        }
        let overview = try await console.get("/console/overview", cookie: try await console.signIn())
        #expect(overview.status == 200, "\(overview.everything)")
        #expect(overview.text.contains("<th scope=\"row\">Being delivered</th><td class=\"number\">2</td>"))
        #expect(overview.text.contains("<th scope=\"row\">Stale claims</th><td class=\"number\">1</td>"))
        #expect(overview.text.contains("1 purchase(s) were claimed by a deliverer that stopped"))
    }

    @Test func deadLettersAreRetriedBySupportAndGivenUpByAnAdminEachAudited() async throws {
        let console = try Console(operators: [
            ("carol", .support, "correct horse battery"), ("vic", .viewer, "viewer password 1"),
            ("ada", .admin, "admin password 12"),
        ])
        let world = console.world
        try await Self.deadLetter("3000000000000001", user: "alice", in: world)
        try await Self.deadLetter("3000000000000002", user: "bob", in: world)
        world.wallet.failNext(1)
        let retrying = try await world.buy("coins.100", user: "carl")
        #expect(try await world.submit(retrying.signedTransaction, as: "carl").status == 202)

        let carol = try await console.signIn()
        let page = try await console.get("/console/dead-letters", cookie: carol)
        #expect(page.status == 200, "\(page.everything)")
        #expect(page.text.contains("Dead letters (2)") && page.text.contains("Waiting for a retry (1)"))
        #expect(page.text.contains("Given up (0)") && page.text.contains("the wallet answered 500"))
        #expect(page.text.components(separatedBy: ">Retry now</button>").count - 1 == 3)
        #expect(!page.text.contains(">Give up</button>"))
        let token = try Self.csrf(in: page.text)

        // A viewer sees no button, and their forged POSTs are refused; support may not give up.
        let vic = try await console.signIn("vic", "viewer password 1")
        let viewed = try await console.get("/console/dead-letters", cookie: vic)
        #expect(!viewed.text.contains(">Retry now</button>") && !viewed.text.contains(">Give up</button>"))
        let vicToken = try Self.csrf(in: viewed.text)
        for path in ["/console/dead-letters/retry", "/console/dead-letters/give-up"] {
            let forged = try await console.post(path, "csrf=\(vicToken)&transaction=3000000000000001", cookie: vic)
            #expect(forged.status == 403, "\(path)")
        }
        let supportGivesUp = try await console.post(
            "/console/dead-letters/give-up",
            "csrf=\(token)&transaction=3000000000000002",
            cookie: carol
        )
        #expect(supportGivesUp.status == 403)
        #expect(world.wallet.calls.count == 1)  // carl's failed attempt only

        // Retry now: delivered at once, audited before and after.
        let retried = try await console.post(
            "/console/dead-letters/retry",
            "csrf=\(token)&transaction=3000000000000001",
            cookie: carol
        )
        #expect(retried.status == 200, "\(retried.everything)")
        #expect(retried.text.contains("retried: delivered") && retried.text.contains("Dead letters (1)"))
        #expect(world.wallet.balance("alice") == 100)

        // Give up (admin): out of the dead letters' count, into the given-up table, audited.
        let ada = try await console.signIn("ada", "admin password 12")
        let adaPage = try await console.get("/console/dead-letters", cookie: ada)
        #expect(adaPage.text.contains(">Give up</button>"))
        let adaToken = try Self.csrf(in: adaPage.text)
        let givenUp = try await console.post(
            "/console/dead-letters/give-up",
            "csrf=\(adaToken)&transaction=3000000000000002",
            cookie: ada
        )
        #expect(givenUp.text.contains("given up.") && givenUp.text.contains("Dead letters (0)"))
        #expect(givenUp.text.contains("Given up (1)"))
        let statistics = await world.ledger.statistics()
        #expect(statistics.deadLetters == 0 && statistics.givenUp == 1)
        let again = try await console.post(
            "/console/dead-letters/give-up",
            "csrf=\(adaToken)&transaction=3000000000000002",
            cookie: ada
        )
        #expect(again.text.contains("not a dead letter waiting for a person"))
        #expect(world.wallet.balance("bob") == 0)

        let audit = await world.auditLog.entries()
        #expect(audit.map(\.action) == ["retry.requested", "retry.completed", "deadLetter.giveUp"])
        #expect(audit.map(\.actor) == ["carol (support, console)", "carol (support, console)", "ada (admin, console)"])
        #expect(audit[1].outcomes.first?.outcome == "delivered" && audit[2].userId == "bob")
    }

    @Test func theNotificationsPageListsWhatThisInstanceProcessedFilteredAndTheOverviewItsRecentWork() async throws {
        let console = try Console()
        let world = console.world
        let bought = try await world.buyAndSubmit("coins.100", user: "alice")
        try await world.appStore.refund(transactionId: bought.transactionId)
        for payload in await world.appStore.drainNotifications() {
            #expect(try await world.notify(payload).status == 200)
        }
        #expect(try await world.notify("not.a.notification").status == 400)
        console.replayEvents()
        console.activity.record(
            IAPEvent(
                time: world.clock.now,
                event: "notification.processed",
                productId: #"<img src=x onerror=alert(1)>"#,
                environment: "Sandbox",
                outcome: "processed",
                notificationType: "TEST"
            )
        )
        let cookie = try await console.signIn()
        let page = try await console.get("/console/notifications", cookie: cookie)
        #expect(page.status == 200, "\(page.everything)")
        #expect(page.text.contains("<td>REFUND</td>") && page.text.contains("<td>did not verify</td>"))
        #expect(page.text.contains("<td>\(bought.transactionId)</td>") && page.text.contains(">alice</a>"))
        #expect(page.text.contains("&lt;img src=x onerror=alert(1)&gt;") && !page.text.contains("<img"))
        for label in ["Type", "Environment", "Outcome"] {
            #expect(page.text.contains(">\(label)</label>"), "\(label)")
        }
        let rejected = try await console.get("/console/notifications?outcome=rejected", cookie: cookie)
        #expect(rejected.text.contains("did not verify") && !rejected.text.contains("<td>REFUND</td>"))
        let refunds = try await console.get("/console/notifications?type=refund&environment=Production", cookie: cookie)
        #expect(refunds.text.contains("<td>REFUND</td>") && !refunds.text.contains("did not verify"))
        #expect(!refunds.text.contains("<td>TEST</td>"))

        // alice's page lists the notifications about her purchases.
        let alice = try await console.get("/console/customer?q=alice", cookie: cookie)
        let notes = try #require(alice.text.components(separatedBy: "<h2>Notifications</h2>").last)
        #expect(notes.contains("<td>REFUND</td>") && !notes.contains("<td>TEST</td>"))

        // The overview: the grant and the take-back in the last hour; no reconciliation yet, then one.
        let overview = try await console.get("/console/overview", cookie: cookie)
        #expect(overview.text.contains("2 succeeded, 0 failed (100.0 % succeeded)"), "\(overview.text)")
        #expect(overview.text.contains("none since this instance started"))
        console.activity.record(
            IAPEvent(time: world.clock.now, event: "reconciliation.run", outcome: "repaired", message: "1 repaired")
        )
        #expect(try await console.get("/console/overview", cookie: cookie).text.contains(": repaired — 1 repaired"))
        world.clock.advance(by: .seconds(3_600))
        let later = try await console.signIn()
        #expect(
            try await console.get("/console/overview", cookie: later).text.contains("0 succeeded, 0 failed</td>")
        )
    }

    @Test func notFoundAndRefusedPagesOfASignedInOperatorHaveTheHeader() async throws {
        let console = try Console(operators: [("vic", .viewer, "viewer password 1")])
        let vic = try await console.signIn("vic", "viewer password 1")
        let missing = try await console.get("/console/nowhere?<b>", cookie: vic)
        #expect(missing.status == 404)
        for part in [
            ">Sign out</button>", #"<label for="search-customer">Customer</label>"#,
            #"<label for="search-order">Order ID</label>"#, #"<a href="/console/analytics">Analytics</a>"#,
        ] {
            #expect(missing.text.contains(part), "\(part)")
        }
        let signedOut = try await console.get("/console/nowhere")
        #expect(signedOut.status == 404 && !signedOut.text.contains("Sign out"))
        let token = try Self.csrf(in: missing.text)
        let refused = try await console.post("/console/dead-letters/retry", "csrf=\(token)&transaction=1", cookie: vic)
        #expect(refused.status == 403 && refused.text.contains(">Sign out</button>"))
        #expect(refused.text.contains("your role does not allow it"))
    }

    static func formEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) {
                encoded.append(Character(UnicodeScalar(byte)))
            } else {
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded
            }
        }
        return encoded
    }
}

extension String {
    fileprivate var leftPadded: String { count == 1 ? "0" + self : self }
}
