import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI

/// `iap ledger analytics`: revenue, subscriptions, refunds and consumables over a range, by day, week or month.
enum LedgerAnalyticsCommand {
    static let spec = CommandSpec(
        name: "ledger analytics",
        summary: "revenue, subscriptions, refunds and consumables over a range, by day, week or month",
        synopsis: [
            "\(CommandLedger.synopsis) --from DATE --to DATE",
            "  [--interval day|week|month] [--environment NAME] [--product ID] [--bundle-id ID] [--catalog FILE] [--json]",
        ],
        discussion: """
            Computes, from the signed transactions the ledger holds, for each interval of [--from, --to) (UTC
            calendar days, ISO weeks starting on Monday, or calendar months; the first and last cut to the range):
            revenue per currency in Apple's milliunits (gross: the prices of purchases and renewals; refunded: what
            refunds gave back, a prorated refund its share; net), MRR per currency and active subscribers at the
            interval's end, new subscriptions, free trials started and converted, cancellations (auto-renewal turned
            off), churned and reactivated subscriptions, purchases, refunds, and consumable units granted and taken
            back; then the totals over the range (with the refund rate) and each product's figures. One environment
            is counted (Production unless --environment says otherwise). Documentation/Analytics.md defines each
            figure. Dates are YYYY-MM-DD (midnight UTC) or RFC 3339; --to is exclusive.

            With --json, prints one object {"from", "to", "interval", "environment", "series": [...], "totals":
            {...}, "byProduct": [...]}, the JSON of GET /iap/v1/analytics. Exit status: 0, 1 when the ledger cannot
            be read, 2 usage error.
            """,
        options: CommandLedger.options + [
            .value("from", "DATE", "the start of the range, inclusive: YYYY-MM-DD or RFC 3339 (required)"),
            .value("to", "DATE", "the end of the range, exclusive (required)"),
            .value("interval", "NAME", "day, week (ISO, from Monday) or month (default day)"),
            .value("environment", "NAME", "the App Store environment counted: Production (default), Sandbox, Xcode"),
            .value("product", "ID", "only this product"),
            CommandLedger.appOption,
            CommandLedger.catalogOption,
            .flag("json", "print one JSON object"),
        ],
        examples: [
            "iap ledger analytics --data ./ledger --from 2026-06-01 --to 2026-07-01 --interval week",
            "iap ledger analytics --database postgres://iap@127.0.0.1/shop --from 2026-01-01 --to 2027-01-01 "
                + "--interval month --json",
        ]
    )

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        try parsed.noPositionals()
        _ = try CommandLedger.location(parsed)
        let values = (
            from: try parsed.value("from"), to: try parsed.value("to"), interval: try parsed.value("interval"),
            environment: try parsed.value("environment"), product: try parsed.value("product")
        )
        let query: AnalyticsQuery
        do {
            query = try AnalyticsQuery(
                from: values.from,
                to: values.to,
                interval: values.interval,
                environment: values.environment,
                productId: values.product
            )
        } catch {
            throw Arguments.UsageError(message: "--" + error.message)
        }
        let bundleId = try CommandLedger.bundleId(parsed)
        let ledger = try await CommandLedger.open(parsed)
        let report: AnalyticsReport
        do {
            let catalog = try await ledger.catalog(parsed, save: false)
            if catalog == nil {
                Output.error("note: no catalog: each product is taken as its signed transaction's type says")
            }
            report = try await LedgerAnalytics(catalog: catalog ?? StaticProductCatalog(products: [])).report(
                of: ledger.store,
                from: query.from,
                to: query.to,
                interval: query.interval,
                environment: query.environment,
                productId: query.productId,
                bundleId: bundleId,
                now: SystemClock().now
            )
        } catch let error as IAPError where error.code == .invalidArgument {
            await ledger.close()
            throw Arguments.UsageError(message: error.message)
        } catch {
            await ledger.close()
            throw error
        }
        await ledger.close()
        if parsed.has("json") {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            Output.write(try encoder.encode(report))
            Output.write("\n")
        } else {
            print(report)
        }
        return .success
    }

    /// The report as text: one block per interval, then the totals and the products.
    static func print(_ report: AnalyticsReport) {
        Output.line(
            "\(report.environment) from \(AnalyticsCalendar.format(report.from)) to \(AnalyticsCalendar.format(report.to))"
                + " by \(report.interval.rawValue)" + (report.productId.map { ", product \($0)" } ?? "")
        )
        for figures in report.series {
            Output.line(line(figures, label: AnalyticsCalendar.format(figures.start)))
        }
        Output.line(line(report.totals, label: "total"))
        Output.line(
            "refund rate: \(String(format: "%.4f", report.totals.refundRate ?? 0)) "
                + "(\(report.totals.refunds) refunds of \(report.totals.purchases) purchases)"
        )
        for product in report.byProduct {
            let money = product.revenue.sorted { $0.key < $1.key }
                .map { "\($0.key) \(AnalyticsReport.decimal($0.value.netMilliunits))" }.joined(separator: ", ")
            Output.line(
                "  \(product.productId): \(product.purchases) purchases, \(product.refunds) refunds"
                    + (money.isEmpty ? "" : ", net \(money)")
            )
        }
    }

    private static func line(_ figures: AnalyticsFigures, label: String) -> String {
        let net = figures.revenue.sorted { $0.key < $1.key }.map {
            "\($0.key) \(AnalyticsReport.decimal($0.value.netMilliunits))"
        }
        let mrr = figures.mrrMilliunits.sorted { $0.key < $1.key }.map {
            "\($0.key) \(AnalyticsReport.decimal($0.value))"
        }
        let subscriptions = figures.subscriptions
        return "\(label)  net \(net.isEmpty ? "0" : net.joined(separator: ", "))"
            + "  mrr \(mrr.isEmpty ? "0" : mrr.joined(separator: ", "))"
            + "  active \(subscriptions.active) new \(subscriptions.new) churned \(subscriptions.churned)"
            + "  trials \(subscriptions.trialsStarted) converted \(subscriptions.trialConversions)"
            + "  purchases \(figures.purchases) refunds \(figures.refunds)"
    }
}
