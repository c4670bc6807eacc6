#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Revenue, subscriptions, refunds and consumables from the ledger, over a range of dates, by day, ISO week or month:
/// what `iap ledger analytics` prints and `GET /iap/v1/analytics` answers. Documentation/Analytics.md defines every
/// figure, with a worked example.
///
/// Everything is computed from the signed transactions the ledger holds (Apple's `price` and `currency`, dates,
/// offers, revocations) and the latest renewal info of each subscription; money stays in Apple's milliunits per
/// currency, never converted and never in floating point. One environment is counted at a time (`Production` unless
/// asked), so that sandbox purchases never reach revenue.
///
/// ```swift
/// let analytics = LedgerAnalytics(catalog: catalog)
/// let report = try await analytics.report(
///     of: ledger,
///     from: AnalyticsCalendar.parse("2026-06-01")!,
///     to: AnalyticsCalendar.parse("2026-07-01")!,
///     interval: .week,
///     now: clock.now
/// )
/// print(report.totals.revenue["USD"]?.netMilliunits ?? 0)
/// ```
public struct LedgerAnalytics: Sendable {
    /// What each product is (its kind, units, subscription group and period); a product it does not name is taken as
    /// its signed transaction's `type` says.
    public let catalog: StaticProductCatalog
    /// What a prorated refund does, for refunds recorded before the ledger kept the decision.
    public let proratedRefunds: ProratedRefundPolicy

    /// The most intervals one report may hold.
    public static let maximumIntervals = 1_000

    /// Creates the analytics.
    ///
    /// - Parameters:
    ///   - catalog: The products.
    ///   - proratedRefunds: The prorated-refund policy for refunds without a recorded decision.
    public init(catalog: StaticProductCatalog, proratedRefunds: ProratedRefundPolicy = .keepAccess) {
        self.catalog = catalog
        self.proratedRefunds = proratedRefunds
    }

    /// Reads the ledger and computes the report.
    ///
    /// - Parameters:
    ///   - store: The ledger; it is only read.
    ///   - from: The start of the range (inclusive).
    ///   - to: The end of the range (exclusive), after `from`.
    ///   - interval: The intervals of the series.
    ///   - environment: The App Store environment to count.
    ///   - productId: Only this product, when given.
    ///   - now: The current instant: access that ends after it has not ended.
    /// - Returns: The report.
    /// - Throws: ``IAPError`` `invalidArgument` for an empty range or more than ``maximumIntervals`` intervals; as the
    ///   store throws.
    public func report(
        of store: some ListableEntitlementStore,
        from: Date,
        to: Date,
        interval: AnalyticsInterval,
        environment: AppStoreEnvironment = .production,
        productId: String? = nil,
        now: Date
    ) async throws -> AnalyticsReport {
        try Self.check(from: from, to: to, interval: interval)
        let entries = try await store.allEntries()
        var renewals: [String: RenewalInfoPayload] = [:]
        for original in Set(entries.lazy.filter { self.isSubscription($0) }.map(\.originalTransactionId)) {
            renewals[original] = try await store.renewalInfo(originalTransactionId: original)
        }
        return try report(
            entries: entries,
            renewalInfos: renewals,
            from: from,
            to: to,
            interval: interval,
            environment: environment,
            productId: productId,
            now: now
        )
    }

    /// Computes the report from entries and the latest renewal info of each subscription.
    ///
    /// - Parameters:
    ///   - entries: The ledger's entries (any order).
    ///   - renewalInfos: The latest renewal info by original transaction id.
    ///   - from: The start of the range (inclusive).
    ///   - to: The end of the range (exclusive).
    ///   - interval: The intervals of the series.
    ///   - environment: The App Store environment to count.
    ///   - productId: Only this product, when given.
    ///   - now: The current instant.
    /// - Returns: The report.
    /// - Throws: ``IAPError`` `invalidArgument` for an empty range or too many intervals.
    public func report(
        entries: [LedgerEntry],
        renewalInfos: [String: RenewalInfoPayload],
        from: Date,
        to: Date,
        interval: AnalyticsInterval,
        environment: AppStoreEnvironment = .production,
        productId: String? = nil,
        now: Date
    ) throws -> AnalyticsReport {
        try Self.check(from: from, to: to, interval: interval)
        let counted = entries.filter {
            $0.transaction.environment == environment && (productId == nil || $0.productId == productId)
        }
        let buckets = AnalyticsCalendar.buckets(from: from, to: to, interval: interval)
        var series = buckets.map { AnalyticsFigures(start: $0.lowerBound, end: $0.upperBound) }
        var totals = AnalyticsFigures(start: from, end: to)
        var products: [String: AnalyticsProductFigures] = [:]
        /// The index of the bucket holding `date`, or `nil` outside the range.
        func bucket(_ date: Date?) -> Int? {
            guard let date, date >= from, date < to else { return nil }
            var low = 0
            var high = buckets.count - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if buckets[middle].lowerBound <= date { low = middle } else { high = middle - 1 }
            }
            return low
        }
        func add(_ date: Date?, _ change: (inout AnalyticsFigures) -> Void) {
            guard let index = bucket(date) else { return }
            change(&series[index])
            change(&totals)
        }

        // Money, purchases, refunds and consumable units: each transaction on its own.
        for entry in counted {
            let transaction = entry.transaction
            guard transaction.inAppOwnershipType != .familyShared else { continue }
            let price = transaction.price ?? 0
            let currency = transaction.currency
            let units = consumableUnits(entry)
            if bucket(transaction.purchaseDate) != nil {
                add(transaction.purchaseDate) { figures in
                    figures.purchases += 1
                    if let currency, price != 0 {
                        figures.revenue[currency, default: AnalyticsRevenue()].grossMilliunits += price
                    }
                    figures.consumableUnits.granted += units ?? 0
                }
                products[entry.productId, default: AnalyticsProductFigures(productId: entry.productId)].record(
                    purchase: price,
                    currency: currency,
                    units: units
                )
            }
            if Self.isRefund(transaction), bucket(transaction.revocationDate) != nil {
                let refunded = transaction.refundedUnits(of: price)
                let unitsBack = units.map { transaction.refundedUnits(of: $0) }
                add(transaction.revocationDate) { figures in
                    figures.refunds += 1
                    if let currency, refunded != 0 {
                        figures.revenue[currency, default: AnalyticsRevenue()].refundedMilliunits += refunded
                    }
                    figures.consumableUnits.takenBack += unitsBack ?? 0
                }
                products[entry.productId, default: AnalyticsProductFigures(productId: entry.productId)].record(
                    refund: refunded,
                    currency: currency,
                    units: unitsBack
                )
            }
        }

        // Subscriptions: each original transaction's history.
        let families = Dictionary(grouping: counted.filter { isSubscription($0) }, by: \.originalTransactionId)
            .map { Subscription(entries: $0.value, renewal: renewalInfos[$0.key], analytics: self) }
        for family in families {
            add(family.firstPurchase) { $0.subscriptions.new += 1 }
            for trial in family.trialStarts {
                add(trial) { $0.subscriptions.trialsStarted += 1 }
            }
            for conversion in family.trialConversions {
                add(conversion) { $0.subscriptions.trialConversions += 1 }
            }
            if let renewal = family.renewal, renewal.autoRenewStatus == .off {
                add(renewal.signedDate) { $0.subscriptions.cancellations += 1 }
            }
            for end in family.accessEnds(now: now) {
                add(end) { $0.subscriptions.churned += 1 }
            }
            for start in family.reactivations {
                add(start) { $0.subscriptions.reactivations += 1 }
            }
        }
        for index in series.indices {
            let end = series[index].end
            (series[index].subscriptions.active, series[index].mrrMilliunits) = Self.standing(of: families, before: end)
        }
        (totals.subscriptions.active, totals.mrrMilliunits) = Self.standing(of: families, before: to)
        totals.refundRate = Self.rate(totals.refunds, of: totals.purchases)
        let byProduct = products.values.sorted { $0.productId < $1.productId }.map { figures in
            var figures = figures
            figures.refundRate = Self.rate(figures.refunds, of: figures.purchases)
            return figures
        }
        return AnalyticsReport(
            from: from,
            to: to,
            interval: interval,
            environment: environment.rawValue,
            productId: productId,
            series: series,
            totals: totals,
            byProduct: byProduct
        )
    }

    // MARK: - Rules

    private static func check(from: Date, to: Date, interval: AnalyticsInterval) throws {
        guard from < to else {
            throw IAPError(.invalidArgument, "the range is empty: 'to' must be after 'from'")
        }
        var count = 0
        var start = from
        while start < to {
            count += 1
            guard count <= maximumIntervals else {
                throw IAPError(
                    .invalidArgument,
                    "the range holds more than \(maximumIntervals) intervals of a \(interval.rawValue): choose a "
                        + "longer interval or a shorter range"
                )
            }
            start = AnalyticsCalendar.next(
                after: AnalyticsCalendar.start(of: interval, holding: start),
                interval: interval
            )
        }
    }

    /// Whether a revocation gave money back: a full or prorated refund, or (data without a `revocationType`) any
    /// revocation that is not the end of Family Sharing.
    static func isRefund(_ transaction: TransactionPayload) -> Bool {
        guard transaction.revocationDate != nil else { return false }
        if let type = transaction.revocationType {
            return type == .refundFull || type == .refundProrated
        }
        return transaction.inAppOwnershipType != .familyShared
    }

    static func rate(_ count: Int, of total: Int) -> Double {
        total == 0 ? 0 : Double(count) / Double(total)
    }

    /// The product's kind: the catalog's, else the signed type's.
    func kind(of entry: LedgerEntry) -> ProductKind? {
        if let product = catalog[productId: entry.productId] {
            return product.kind
        }
        switch entry.transaction.type {
        case .consumable?: return .consumable
        case .nonConsumable?: return .nonConsumable
        case .autoRenewableSubscription?: return .autoRenewable
        case .nonRenewingSubscription?: return .nonRenewing
        default: return nil
        }
    }

    func isSubscription(_ entry: LedgerEntry) -> Bool {
        kind(of: entry) == .autoRenewable
    }

    /// A consumable's units (quantity × units per purchase), or `nil` for another kind.
    func consumableUnits(_ entry: LedgerEntry) -> Int64? {
        guard kind(of: entry) == .consumable else { return nil }
        let quantity = Int64(max(1, entry.transaction.quantity ?? 1))
        let per = Int64(catalog[productId: entry.productId]?.unitsPerPurchase ?? 1)
        return quantity.multipliedReportingOverflow(by: per).overflow ? Int64.max : quantity * per
    }

    /// Active subscribers (per user and subscription group) and MRR per currency just before `instant`.
    private static func standing(of families: [Subscription], before instant: Date) -> (Int, [String: Int64]) {
        let moment = instant.addingTimeInterval(-0.001)
        var subscribers: Set<[UInt8]> = []
        var twelfths: [String: MRRSum] = [:]
        for family in families {
            guard let current = family.access(at: moment) else { continue }
            subscribers.insert(Array((current.userId + "\u{0}" + family.group).utf8))
            if let currency = current.transaction.currency, let price = current.transaction.price, price != 0 {
                twelfths[currency, default: MRRSum()].add(price, per: family.period(of: current))
            }
        }
        return (subscribers.count, twelfths.mapValues { $0.rounded })
    }
}

/// A sum of monthly amounts, exact: prices times a month's share of their period, over a common denominator.
struct MRRSum {
    /// The sum × 8 760 (= 12 × 730: twelfths of a month over months, weeks and days alike).
    private var scaled: Int64 = 0
    private static let scale: Int64 = 8_760

    /// Adds a price paid per `period`, as a month's worth: a week ×52/12, n months ÷n, a year ÷12, a day ×365/12.
    mutating func add(_ price: Int64, per period: SubscriptionPeriod) {
        let value = Int64(max(1, period.value))
        let share: Int64  // the month's worth of one price, × scale
        switch period.unit {
        case .day: share = 365 * Self.scale / 12 / value
        case .week: share = 52 * Self.scale / 12 / value
        case .month: share = Self.scale / value
        case .year: share = Self.scale / 12 / value
        }
        let (product, overflow) = price.multipliedReportingOverflow(by: share)
        scaled = overflow ? Int64.max : scaled.addingReportingOverflow(product).partialValue
    }

    /// The sum, rounded to the nearest milliunit (halves away from zero).
    var rounded: Int64 {
        let half = Self.scale / 2
        return scaled >= 0 ? (scaled + half) / Self.scale : -((-scaled + half) / Self.scale)
    }
}
