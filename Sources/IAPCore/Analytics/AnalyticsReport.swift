#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// What ``LedgerAnalytics`` computes for a range: a series of intervals, the totals over the range, and the figures of
/// each product. Money is in Apple's milliunits of each currency (integers: `9990` is 9.99), never converted.
///
/// Its JSON (`iap ledger analytics --json`, `GET /iap/v1/analytics`):
/// `{"from", "to", "interval", "environment", "series": [FIGURES], "totals": FIGURES, "byProduct": [...]}` (with
/// `productId` and `bundleId` when the report is of one product or one app), dates RFC 3339 in UTC.
public struct AnalyticsReport: Sendable, Hashable, Encodable {
    /// The start of the range (inclusive).
    public var from: Date
    /// The end of the range (exclusive).
    public var to: Date
    /// The intervals of the series.
    public var interval: AnalyticsInterval
    /// The App Store environment counted (`Production` unless asked).
    public var environment: String
    /// The product counted, when the report is of one.
    public var productId: String?
    /// The app counted (its bundle id), when the report is of one app of a ledger of several.
    public var bundleId: String?
    /// One entry per interval, in order; the first and last cut to the range.
    public var series: [AnalyticsFigures]
    /// The same figures over the whole range (``AnalyticsFigures/refundRate`` set; active subscriptions and MRR at
    /// the range's end).
    public var totals: AnalyticsFigures
    /// The figures of each product over the range, by product id.
    public var byProduct: [AnalyticsProductFigures]

    private enum CodingKeys: String, CodingKey {
        case from, to, interval, environment, productId, bundleId, series, totals, byProduct
    }

    /// Milliunits as a decimal amount, for people: `9990` → `9.990`, `-500` → `-0.500`.
    ///
    /// - Parameter milliunits: The amount in milliunits.
    /// - Returns: The amount with three decimals.
    public static func decimal(_ milliunits: Int64) -> String {
        let sign = milliunits < 0 ? "-" : ""
        let magnitude = milliunits.magnitude
        return "\(sign)\(magnitude / 1_000).\(String(magnitude % 1_000 + 1_000).dropFirst())"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(AnalyticsCalendar.format(from), forKey: .from)
        try container.encode(AnalyticsCalendar.format(to), forKey: .to)
        try container.encode(interval, forKey: .interval)
        try container.encode(environment, forKey: .environment)
        try container.encodeIfPresent(productId, forKey: .productId)
        try container.encodeIfPresent(bundleId, forKey: .bundleId)
        try container.encode(series, forKey: .series)
        try container.encode(totals, forKey: .totals)
        try container.encode(byProduct, forKey: .byProduct)
    }
}

/// Revenue in one currency, in its milliunits.
public struct AnalyticsRevenue: Sendable, Hashable, Codable {
    /// The prices of the purchases and renewals made in the interval.
    public var grossMilliunits: Int64 = 0
    /// What refunds in the interval gave back: the price, or a prorated refund's share of it (rounded down).
    public var refundedMilliunits: Int64 = 0
    /// Gross less refunded.
    public var netMilliunits: Int64 { grossMilliunits - refundedMilliunits }

    /// Creates an empty revenue.
    public init() {}

    private enum CodingKeys: String, CodingKey {
        case grossMilliunits, refundedMilliunits, netMilliunits
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        grossMilliunits = try container.decode(Int64.self, forKey: .grossMilliunits)
        refundedMilliunits = try container.decode(Int64.self, forKey: .refundedMilliunits)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(grossMilliunits, forKey: .grossMilliunits)
        try container.encode(refundedMilliunits, forKey: .refundedMilliunits)
        try container.encode(netMilliunits, forKey: .netMilliunits)
    }
}

/// What happened to auto-renewable subscriptions; a subscription is one original transaction.
public struct AnalyticsSubscriptions: Sendable, Hashable, Codable {
    /// Subscribers with access at the interval's end (grace period included), one per user and subscription group.
    public var active = 0
    /// Subscriptions whose first purchase is in the interval.
    public var new = 0
    /// Free trials (introductory offers) that started in the interval.
    public var trialsStarted = 0
    /// First paid periods after a free trial, in the interval.
    public var trialConversions = 0
    /// Subscriptions whose auto-renewal was turned off in the interval (the signed date of the renewal info that says
    /// so).
    public var cancellations = 0
    /// Subscriptions whose access ended in the interval: expired without a renewal (after any grace period), or
    /// revoked.
    public var churned = 0
    /// Subscriptions bought again after their access had ended.
    public var reactivations = 0

    /// Creates empty figures.
    public init() {}
}

/// Consumable units granted and taken back.
public struct AnalyticsConsumableUnits: Sendable, Hashable, Codable {
    /// Units of the consumables bought in the interval (quantity × units per purchase).
    public var granted: Int64 = 0
    /// Units taken back by refunds in the interval (a prorated refund's share, rounded down).
    public var takenBack: Int64 = 0

    /// Creates empty figures.
    public init() {}
}

/// The figures of one interval (or of the whole range).
public struct AnalyticsFigures: Sendable, Hashable, Encodable {
    /// The interval's start (inclusive).
    public var start: Date
    /// The interval's end (exclusive).
    public var end: Date
    /// Revenue by currency code.
    public var revenue: [String: AnalyticsRevenue] = [:]
    /// Monthly recurring revenue by currency at the interval's end: each active subscription's last price as a
    /// month's worth, summed exactly and rounded to the nearest milliunit once per currency.
    public var mrrMilliunits: [String: Int64] = [:]
    /// What happened to subscriptions.
    public var subscriptions = AnalyticsSubscriptions()
    /// Purchases and renewals made (family-shared copies left out).
    public var purchases = 0
    /// Refunds made.
    public var refunds = 0
    /// Consumable units.
    public var consumableUnits = AnalyticsConsumableUnits()
    /// Refunds ÷ purchases, for the totals; `nil` in a series.
    public var refundRate: Double?

    /// Creates empty figures for an interval.
    public init(start: Date, end: Date) {
        self.start = start
        self.end = end
    }

    private enum CodingKeys: String, CodingKey {
        case start, end, revenue, mrrMilliunits, subscriptions, purchases, refunds, consumableUnits, refundRate
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(AnalyticsCalendar.format(start), forKey: .start)
        try container.encode(AnalyticsCalendar.format(end), forKey: .end)
        try container.encode(revenue, forKey: .revenue)
        try container.encode(mrrMilliunits, forKey: .mrrMilliunits)
        try container.encode(subscriptions, forKey: .subscriptions)
        try container.encode(purchases, forKey: .purchases)
        try container.encode(refunds, forKey: .refunds)
        try container.encode(consumableUnits, forKey: .consumableUnits)
        try container.encodeIfPresent(refundRate, forKey: .refundRate)
    }
}

/// One product's figures over the range.
public struct AnalyticsProductFigures: Sendable, Hashable, Codable {
    /// The product.
    public var productId: String
    /// Revenue by currency code.
    public var revenue: [String: AnalyticsRevenue] = [:]
    /// Purchases and renewals made.
    public var purchases = 0
    /// Refunds made.
    public var refunds = 0
    /// Refunds ÷ purchases (0 without purchases).
    public var refundRate: Double = 0
    /// Consumable units (zero for other kinds).
    public var consumableUnits = AnalyticsConsumableUnits()

    /// Creates empty figures for a product.
    public init(productId: String) {
        self.productId = productId
    }
}
