#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPHTTPServer

extension ConsoleRoutes {
    /// The overview: the ledger's state, and this month's figures.
    func overview(_ session: ConsoleSession) async -> (title: String, body: String) {
        var body = "<h1>Overview</h1>"
        let ready = readiness.isReady ? "ready" : "not ready"
        let degraded = readiness.degradedChecks.map {
            "<li class=\"error\">\(ConsoleHTML.escape($0.name)): \(ConsoleHTML.escape($0.reason))</li>"
        }
        body += "<p>The purchase server is <strong>\(ready)</strong>.</p>"
        if !degraded.isEmpty {
            body += "<ul>" + degraded.joined() + "</ul>"
        }
        do {
            let statistics = try await pipeline.store.statistics()
            var rows: [(String, Int)] = [
                ("Transactions", statistics.transactions), ("Delivered", statistics.delivered),
                ("Waiting for a retry", statistics.pendingRetries), ("Dead letters", statistics.deadLetters),
                ("Dead letters given up", statistics.givenUp),
                ("Refunded or revoked", statistics.revoked),
                ("Products the catalog does not know", statistics.unknownProduct),
                ("Users", statistics.users),
            ]
            // Deliveries under way, and those a deliverer left when it stopped (a store that lists its entries).
            let listable = ledger ?? (pipeline.store as? any ListableEntitlementStore)
            let claims = try await listable?.claims(at: pipeline.clock.now)
            if let claims {
                rows.insert(
                    contentsOf: [("Being delivered", claims.claimed), ("Stale claims", claims.staleClaims)],
                    at: 3
                )
            }
            body += "<h2>Ledger</h2><table><tbody>"
            body += rows.map { "<tr><th scope=\"row\">\($0.0)</th><td class=\"number\">\($0.1)</td></tr>" }.joined()
            body += "</tbody></table>"
            if let claims, claims.staleClaims > 0 {
                let since = claims.oldestStaleSince.map { " since " + AnalyticsCalendar.format($0) } ?? ""
                body +=
                    "<p class=\"error\">\(claims.staleClaims) purchase(s) were claimed by a deliverer that stopped "
                    + "(claims expired\(ConsoleHTML.escape(since))): the server's next drain of due deliveries delivers "
                    + "them.</p>"
            }
            if statistics.deadLetters + statistics.pendingRetries > 0 {
                body += "<p><a href=\"/console/dead-letters\">See the dead letters and retries</a></p>"
            }
        } catch {
            body += "<p class=\"error\">The ledger cannot be read now.</p>"
        }
        body += recentWork()
        let now = pipeline.clock.now
        let month = AnalyticsCalendar.start(of: .month, holding: now)
        let tomorrow = AnalyticsCalendar.next(after: AnalyticsCalendar.start(of: .day, holding: now), interval: .day)
        if let report = try? await report(from: month, to: tomorrow, interval: .day) {
            let today = report.series.last
            body += "<h2>Production, this month</h2><table><thead><tr><th scope=\"col\"></th>"
            body += "<th scope=\"col\">Today</th><th scope=\"col\">This month</th></tr></thead><tbody>"
            let currencies = Set(report.totals.revenue.keys).union(today?.revenue.keys ?? [:].keys).sorted()
            for currency in currencies {
                body += "<tr><th scope=\"row\">Net revenue, \(ConsoleHTML.escape(currency))</th>"
                body +=
                    "<td class=\"number\">\(AnalyticsReport.decimal(today?.revenue[currency]?.netMilliunits ?? 0))</td>"
                body +=
                    "<td class=\"number\">\(AnalyticsReport.decimal(report.totals.revenue[currency]?.netMilliunits ?? 0))</td></tr>"
            }
            body += "<tr><th scope=\"row\">Active subscriptions</th>"
            body += "<td class=\"number\">\(today?.subscriptions.active ?? 0)</td>"
            body += "<td class=\"number\">\(report.totals.subscriptions.active)</td></tr></tbody></table>"
        }
        return ("Overview", body)
    }

    /// The analytics of a range, as tables.
    func analytics(_ session: ConsoleSession, _ request: HTTPServerRequest) async -> (title: String, body: String) {
        let now = pipeline.clock.now
        let defaultFrom = AnalyticsCalendar.format(AnalyticsCalendar.start(of: .month, holding: now)).prefix(10)
        let defaultTo = AnalyticsCalendar.format(
            AnalyticsCalendar.next(after: AnalyticsCalendar.start(of: .day, holding: now), interval: .day)
        ).prefix(10)
        let fromText = request.queryValue("from") ?? String(defaultFrom)
        let toText = request.queryValue("to") ?? String(defaultTo)
        let intervalText = request.queryValue("interval") ?? "day"
        // On a server of several apps, one app at a time, each by its own catalog: the first unless one is chosen.
        let apps = servedApps
        let app = request.queryValue("bundleId").flatMap { apps.contains($0) ? $0 : nil } ?? apps.first
        var body = "<h1>Analytics</h1>"
        var appChoice = ""
        if apps.count > 1 {
            appChoice = "<label for=\"bundleId\">App</label><select id=\"bundleId\" name=\"bundleId\">"
            appChoice += apps.map {
                "<option\($0 == app ? " selected" : "")>\(ConsoleHTML.escape($0))</option>"
            }.joined()
            appChoice += "</select>"
        }
        body += """
            <form method="get" action="/console/analytics">
            <label for="from">From</label><input id="from" name="from" value="\(ConsoleHTML.escape(fromText))">
            <label for="to">To</label><input id="to" name="to" value="\(ConsoleHTML.escape(toText))">
            <label for="interval">Interval</label><select id="interval" name="interval">
            \(["day", "week", "month"].map { "<option\($0 == intervalText ? " selected" : "")>\($0)</option>" }.joined())
            </select>\(appChoice) <button type="submit">Show</button></form>
            """
        let query: AnalyticsQuery
        do {
            query = try AnalyticsQuery(
                from: fromText,
                to: toText,
                interval: intervalText,
                environment: request.queryValue("environment"),
                productId: nil
            )
        } catch {
            return ("Analytics", body + "<p class=\"error\" role=\"alert\">\(ConsoleHTML.escape(error.message))</p>")
        }
        guard
            let report = try? await report(
                from: query.from,
                to: query.to,
                interval: query.interval,
                bundleId: apps.count > 1 ? app : nil
            )
        else {
            return ("Analytics", body + "<p class=\"error\" role=\"alert\">The ledger cannot be read now.</p>")
        }
        let currencies = Set(report.series.flatMap(\.revenue.keys)).union(report.totals.mrrMilliunits.keys).sorted()
        let ofApp = report.bundleId.map { " of " + ConsoleHTML.escape($0) } ?? ""
        body += "<h2>\(ConsoleHTML.escape(report.environment))\(ofApp), by \(report.interval.rawValue)</h2>"
        body += Self.charts(report, currencies: currencies)
        body += "<table><thead><tr><th scope=\"col\">From</th>"
        body += currencies.map {
            "<th scope=\"col\">Net \(ConsoleHTML.escape($0))</th><th scope=\"col\">MRR \(ConsoleHTML.escape($0))</th>"
        }
        .joined()
        body += "<th scope=\"col\">Active</th><th scope=\"col\">New</th><th scope=\"col\">Churned</th>"
        body += "<th scope=\"col\">Trials</th><th scope=\"col\">Converted</th><th scope=\"col\">Purchases</th>"
        body += "<th scope=\"col\">Refunds</th></tr></thead><tbody>"
        for figures in report.series + [report.totals] {
            let label =
                figures.refundRate == nil ? String(AnalyticsCalendar.format(figures.start).prefix(10)) : "Total"
            body += "<tr><th scope=\"row\">\(label)</th>"
            for currency in currencies {
                body +=
                    "<td class=\"number\">\(AnalyticsReport.decimal(figures.revenue[currency]?.netMilliunits ?? 0))</td>"
                body += "<td class=\"number\">\(AnalyticsReport.decimal(figures.mrrMilliunits[currency] ?? 0))</td>"
            }
            let subscriptions = figures.subscriptions
            body += [
                subscriptions.active, subscriptions.new, subscriptions.churned, subscriptions.trialsStarted,
                subscriptions.trialConversions, figures.purchases, figures.refunds,
            ].map { "<td class=\"number\">\($0)</td>" }.joined()
            body += "</tr>"
        }
        body += "</tbody></table>"
        body += "<h2>By product</h2><table><thead><tr><th scope=\"col\">Product</th><th scope=\"col\">Purchases</th>"
        body += "<th scope=\"col\">Refunds</th><th scope=\"col\">Refund rate</th></tr></thead><tbody>"
        for product in report.byProduct {
            body += "<tr><th scope=\"row\">\(ConsoleHTML.escape(product.productId))</th>"
            body += "<td class=\"number\">\(product.purchases)</td><td class=\"number\">\(product.refunds)</td>"
            body += "<td class=\"number\">\(Self.percent(product.refundRate))</td></tr>"
        }
        body += "</tbody></table><p class=\"note\">Amounts in each currency, never converted. "
        body += "The figures are those of GET /iap/v1/analytics.</p>"
        return ("Analytics", body)
    }

    /// The charts of a report: net revenue and MRR per currency, active subscriptions, new and churned
    /// subscriptions, trial conversions and refunds.
    static func charts(_ report: AnalyticsReport, currencies: [String]) -> String {
        guard report.series.count <= ConsoleChart.maximumBars else {
            return
                "<p class=\"note\">Charts are drawn for up to \(ConsoleChart.maximumBars) intervals: choose a longer "
                + "interval to see them; the table below has every figure.</p>"
        }
        let labels = report.series.map {
            String(AnalyticsCalendar.format($0.start).prefix(report.interval == .month ? 7 : 10))
        }
        func money(_ value: Double) -> String { AnalyticsReport.decimal(Int64((value * 1_000).rounded())) }
        func count(_ value: Double) -> String { "\(Int(value.rounded()))" }
        var charts: [String] = []
        for currency in currencies {
            charts.append(
                ConsoleChart.bars(
                    title: "Net revenue, \(currency)",
                    unit: currency,
                    labels: labels,
                    values: report.series.map { Double($0.revenue[currency]?.netMilliunits ?? 0) / 1_000 },
                    text: money
                )
            )
            charts.append(
                ConsoleChart.bars(
                    title: "MRR, \(currency)",
                    unit: currency,
                    labels: labels,
                    values: report.series.map { Double($0.mrrMilliunits[currency] ?? 0) / 1_000 },
                    text: money
                )
            )
        }
        let counts: [(String, String, (AnalyticsFigures) -> Int)] = [
            ("Active subscriptions", "subscriptions", { $0.subscriptions.active }),
            ("New subscriptions", "subscriptions", { $0.subscriptions.new }),
            ("Churned subscriptions", "subscriptions", { $0.subscriptions.churned }),
            ("Trial conversions", "conversions", { $0.subscriptions.trialConversions }),
            ("Refunds", "refunds", { $0.refunds }),
        ]
        for (title, unit, figure) in counts {
            charts.append(
                ConsoleChart.bars(
                    title: title,
                    unit: unit,
                    labels: labels,
                    values: report.series.map { Double(figure($0)) },
                    text: count
                )
            )
        }
        return "<div class=\"charts\">" + charts.joined() + "</div>"
    }

    private func report(
        from: Date,
        to: Date,
        interval: AnalyticsInterval,
        bundleId: String? = nil
    ) async throws -> AnalyticsReport {
        guard let ledger else {
            throw IAPError(.unsupportedOperation, "the ledger cannot be read whole")
        }
        // One app by its own catalog; the whole ledger of several apps by what each signed transaction says (two apps
        // may sell one product id as different things).
        let catalog: any ProductCatalog =
            if let bundleId {
                pipeline.catalog.products(ofApp: bundleId)
            } else if servedApps.count > 1 {
                StaticProductCatalog.empty
            } else {
                pipeline.catalog
            }
        return try await LedgerAnalytics(
            catalog: try await catalog.snapshot(),
            proratedRefunds: pipeline.proratedRefunds
        )
        .report(of: ledger, from: from, to: to, interval: interval, bundleId: bundleId, now: pipeline.clock.now)
    }

    /// The bundle ids of the apps served when the server serves several, sorted; empty for one app.
    var servedApps: [String] {
        pipeline.catalog.servedBundleIds
    }

    /// A ratio as a percentage with one decimal: 0.3333 → 33.3 %.
    static func percent(_ ratio: Double) -> String {
        let tenths = Int((ratio * 1_000).rounded())
        return "\(tenths / 10).\(tenths % 10) %"
    }
}
