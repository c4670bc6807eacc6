import Foundation
import IAPCore
import IAPInMemory
import IAPTestSupport
import Testing

/// Every figure of ``LedgerAnalytics`` against the ledger of `AnalyticsLedger`, computed by hand (the worked example
/// of Documentation/Analytics.md).
@Suite("Ledger analytics")
struct LedgerAnalyticsTests {
    typealias Ledger = AnalyticsLedger

    static func report(_ interval: AnalyticsInterval, product: String? = nil) throws -> AnalyticsReport {
        try LedgerAnalytics(catalog: Ledger.catalog).report(
            entries: Ledger.entries,
            renewalInfos: Ledger.renewalInfos,
            from: Ledger.june,
            to: Ledger.july,
            interval: interval,
            productId: product,
            now: Ledger.now
        )
    }

    @Test func juneByMonthIsTheHandComputedLedger() throws {
        let report = try Self.report(.month)
        #expect(report.series.count == 1)
        let june = report.totals
        #expect(
            report.series[0]
                == {
                    var month = june
                    month.refundRate = nil
                    return month
                }()
        )
        // Revenue: USD 19.90 + 9.99 + 599.90 + 9.99 + 49.90 bought, 40 % of 49.90 refunded; EUR 49.90 refunded whole.
        #expect(june.revenue["USD"]?.grossMilliunits == 689_680)
        #expect(june.revenue["USD"]?.refundedMilliunits == 19_960)
        #expect(june.revenue["USD"]?.netMilliunits == 669_720)
        #expect(june.revenue["EUR"]?.grossMilliunits == 49_900)
        #expect(june.revenue["EUR"]?.netMilliunits == 0)
        #expect(june.revenue.count == 2)
        #expect(june.purchases == 6)
        #expect(june.refunds == 2)
        #expect(june.refundRate == 2.0 / 6.0)
        #expect(june.consumableUnits.granted == 200)
        #expect(june.consumableUnits.takenBack == 0)
        let subscriptions = june.subscriptions
        #expect(subscriptions.active == 3)  // carol, dave, frank
        #expect(subscriptions.new == 1)  // dave
        #expect(subscriptions.trialsStarted == 0)  // carol's began in May
        #expect(subscriptions.trialConversions == 1)  // carol
        #expect(subscriptions.cancellations == 1)  // dave
        #expect(subscriptions.churned == 1)  // erin, when her grace period ended
        #expect(subscriptions.reactivations == 1)  // frank
        // MRR: 9.99 + 9.99 + 599.90 / 12 = 69.971666… → 69.972
        #expect(june.mrrMilliunits == ["USD": 69_972])
    }

    @Test func juneByWeekCutsTheLastWeekAndPlacesEachEventInItsWeek() throws {
        let report = try Self.report(.week)
        let starts = report.series.map { AnalyticsCalendar.format($0.start) }
        #expect(
            starts == [
                "2026-06-01T00:00:00Z", "2026-06-08T00:00:00Z", "2026-06-15T00:00:00Z", "2026-06-22T00:00:00Z",
                "2026-06-29T00:00:00Z",
            ]
        )
        #expect(AnalyticsCalendar.format(report.series[4].end) == "2026-07-01T00:00:00Z")
        let first = report.series[0]
        #expect(first.revenue["USD"]?.grossMilliunits == 679_690)  // 19.90 + 9.99 + 599.90 + 49.90
        #expect(first.revenue["EUR"]?.grossMilliunits == 49_900)
        #expect(first.subscriptions.active == 3)  // carol, dave, erin
        let second = report.series[1]
        #expect(second.refunds == 2)
        #expect(second.revenue["USD"]?.refundedMilliunits == 19_960)
        #expect(second.revenue["EUR"]?.refundedMilliunits == 49_900)
        // On June 15 erin is in her grace period: still a subscriber, her price still in MRR.
        #expect(second.subscriptions.active == 3)
        #expect(second.mrrMilliunits["USD"] == 69_972)
        let third = report.series[2]
        #expect(third.subscriptions.reactivations == 1)
        #expect(third.subscriptions.churned == 1)
        #expect(third.subscriptions.cancellations == 1)
        #expect(third.subscriptions.active == 3)  // carol, dave, frank
        // The weeks add up to the month.
        let month = try Self.report(.month).totals
        #expect(report.totals == month)
        #expect(report.series.map(\.purchases).reduce(0, +) == month.purchases)
    }

    @Test func eachProductHasItsOwnFiguresAndAProductCanBeAskedAlone() throws {
        let report = try Self.report(.month)
        let premium = try #require(report.byProduct.first { $0.productId == "premium" })
        #expect(premium.purchases == 2)
        #expect(premium.refunds == 2)
        #expect(premium.refundRate == 1)
        #expect(premium.revenue["EUR"]?.refundedMilliunits == 49_900)
        #expect(premium.revenue["USD"]?.refundedMilliunits == 19_960)
        #expect(report.byProduct.map(\.productId) == ["coins.100", "premium", "pro.monthly", "pro.yearly"])
        let coins = try Self.report(.month, product: "coins.100")
        #expect(coins.totals.purchases == 1)
        #expect(coins.totals.consumableUnits.granted == 200)
        #expect(
            coins.totals.revenue == [
                "USD": {
                    var usd = AnalyticsRevenue()
                    usd.grossMilliunits = 19_900
                    return usd
                }()
            ]
        )
        #expect(coins.totals.subscriptions == AnalyticsSubscriptions())
    }

    @Test func sandboxIsCountedOnlyWhenAskedAndAlone() throws {
        let sandbox = try LedgerAnalytics(catalog: Ledger.catalog).report(
            entries: Ledger.entries,
            renewalInfos: Ledger.renewalInfos,
            from: Ledger.june,
            to: Ledger.july,
            interval: .month,
            environment: .sandbox,
            now: Ledger.now
        )
        #expect(sandbox.totals.purchases == 1)
        #expect(sandbox.totals.revenue["USD"]?.grossMilliunits == 49_900)
    }

    @Test func theReportIsTheSameReadFromAStore() async throws {
        let store = InMemoryEntitlementStore()
        for entry in Ledger.entries {
            _ = try await store.insert(entry)
        }
        for info in Ledger.renewalInfos.values {
            _ = try await store.storeRenewalInfo(info)
        }
        let read = try await LedgerAnalytics(catalog: Ledger.catalog).report(
            of: store,
            from: Ledger.june,
            to: Ledger.july,
            interval: .week,
            now: Ledger.now
        )
        #expect(read.series.map(\.revenue) == (try Self.report(.week)).series.map(\.revenue))
        #expect(read.totals.subscriptions == (try Self.report(.week)).totals.subscriptions)
    }

    @Test func theJSONHasTheDocumentedShape() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = try #require(
            try JSONSerialization.jsonObject(with: encoder.encode(try Self.report(.month))) as? [String: Any]
        )
        #expect(json["from"] as? String == "2026-06-01T00:00:00Z")
        #expect(json["to"] as? String == "2026-07-01T00:00:00Z")
        #expect(json["interval"] as? String == "month")
        #expect(json["environment"] as? String == "Production")
        let series = try #require(json["series"] as? [[String: Any]])
        #expect(series[0]["start"] as? String == "2026-06-01T00:00:00Z")
        let usd = (series[0]["revenue"] as? [String: Any])?["USD"] as? [String: Any]
        #expect(usd?["netMilliunits"] as? Int == 669_720)
        #expect(((json["totals"] as? [String: Any])?["subscriptions"] as? [String: Any])?["active"] as? Int == 3)
        #expect((json["totals"] as? [String: Any])?["refundRate"] != nil)
        #expect(series[0]["refundRate"] == nil)
    }

    @Test(arguments: [
        ("2026-06-01", "2026-06-01T00:00:00Z"), ("2026-06-01T12:30:15Z", "2026-06-01T12:30:15Z"),
        ("2026-06-01T02:00:00+02:00", "2026-06-01T00:00:00Z"), ("2026-06-01T00:00:00.250Z", "2026-06-01T00:00:00.250Z"),
        ("2024-02-29", "2024-02-29T00:00:00Z"), ("1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z"),
    ])
    func datesAreReadAsRFC3339OrADayAndWrittenInUTC(text: String, written: String) throws {
        let date = try #require(AnalyticsCalendar.parse(text))
        #expect(AnalyticsCalendar.format(date) == written)
    }

    @Test(arguments: ["2026-02-29", "2026-13-01", "2026-6-1", "2026-06-01T25:00:00Z", "2026-06-01T00:00:00", "", "x"])
    func anythingElseIsNotADate(text: String) {
        #expect(AnalyticsCalendar.parse(text) == nil)
    }

    @Test func aQueryIsCheckedBeforeAnythingIsRead() {
        #expect(throws: IAPError.self) {
            try AnalyticsQuery(from: "2026-07-01", to: "2026-06-01", interval: nil, environment: nil, productId: nil)
        }
        #expect(throws: IAPError.self) {
            try AnalyticsQuery(from: "2026-06-01", to: "2026-07-01", interval: "year", environment: nil, productId: nil)
        }
        #expect(throws: IAPError.self) {
            try AnalyticsQuery(from: "2026-06-01", to: "2026-07-01", interval: nil, environment: "Prod", productId: nil)
        }
        #expect(throws: IAPError.self) {
            try LedgerAnalytics(catalog: Ledger.catalog).report(
                entries: [],
                renewalInfos: [:],
                from: Ledger.june,
                to: Ledger.date("2030-01-01"),
                interval: .day,
                now: Ledger.now
            )
        }
    }
}
