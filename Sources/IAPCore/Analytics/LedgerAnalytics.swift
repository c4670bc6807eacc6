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

    /// Reads the ledger a page at a time and computes the report: memory for one page, the figures, and a few
    /// numbers per transaction of a subscription (its periods), whatever the ledger's size.
    ///
    /// - Parameters:
    ///   - store: The ledger; it is only read.
    ///   - from: The start of the range (inclusive).
    ///   - to: The end of the range (exclusive), after `from`.
    ///   - interval: The intervals of the series.
    ///   - environment: The App Store environment to count.
    ///   - productId: Only this product, when given.
    ///   - bundleId: Only this app's purchases (its bundle id), when given: on a ledger of several apps.
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
        bundleId: String? = nil,
        now: Date
    ) async throws -> AnalyticsReport {
        try Self.check(from: from, to: to, interval: interval)
        var fold = Fold(self, from: from, to: to, interval: interval, environment: environment, productId: productId)
        fold.bundleId = bundleId
        try await store.forEachPage { page in
            for entry in page {
                fold.add(entry)
            }
        }
        var renewals: [String: RenewalInfoPayload] = [:]
        for original in fold.subscriptions.keys {
            renewals[original] = try await store.renewalInfo(originalTransactionId: original)
        }
        return compute(fold, renewalInfos: renewals, now: now)
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
    ///   - bundleId: Only this app's purchases, when given.
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
        bundleId: String? = nil,
        now: Date
    ) throws -> AnalyticsReport {
        try Self.check(from: from, to: to, interval: interval)
        var fold = Fold(self, from: from, to: to, interval: interval, environment: environment, productId: productId)
        fold.bundleId = bundleId
        for entry in entries {
            fold.add(entry)
        }
        return compute(fold, renewalInfos: renewalInfos, now: now)
    }

    /// What one pass over the entries keeps, one entry at a time: the figures of each transaction on its own (money,
    /// purchases, refunds, consumable units) by interval and by product, and of each subscription its periods, with
    /// every string hashed once (products, users and currencies as numbers).
    struct Fold {
        let analytics: LedgerAnalytics
        let from: Date
        let to: Date
        let interval: AnalyticsInterval
        let environment: AppStoreEnvironment
        let productId: String?
        var bundleId: String?
        let buckets: [Range<Date>]
        var series: [AnalyticsFigures]
        var totals: AnalyticsFigures
        var products: [String: AnalyticsProductFigures] = [:]
        var productNumbers = Interned()
        var users = Interned()
        var currencies = Interned()
        /// Per product number: whether the catalog says it is a subscription (nil: it does not know it), and the
        /// catalog's product.
        private var catalogSays: [Bool?] = []
        private(set) var catalogProducts: [CatalogProduct?] = []
        /// The periods of each subscription (auto-renewable transactions), by original transaction id.
        var subscriptions: [String: [Subscription.Period]] = [:]

        init(
            _ analytics: LedgerAnalytics,
            from: Date,
            to: Date,
            interval: AnalyticsInterval,
            environment: AppStoreEnvironment,
            productId: String?
        ) {
            self.analytics = analytics
            self.from = from
            self.to = to
            self.interval = interval
            self.environment = environment
            self.productId = productId
            buckets = AnalyticsCalendar.buckets(from: from, to: to, interval: interval)
            series = buckets.map { AnalyticsFigures(start: $0.lowerBound, end: $0.upperBound) }
            totals = AnalyticsFigures(start: from, end: to)
        }

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

        /// Adds to the interval holding `date` and to the totals; nothing outside the range.
        mutating func add(_ date: Date?, _ change: (inout AnalyticsFigures) -> Void) {
            guard let index = bucket(date) else { return }
            change(&series[index])
            change(&totals)
        }

        /// Counts one entry of the ledger.
        mutating func add(_ entry: borrowing LedgerEntry) {
            guard entry.transaction.environment == environment, productId == nil || entry.productId == productId,
                bundleId == nil || entry.transaction.bundleId == bundleId
            else {
                return
            }
            let product = productNumbers.number(entry.productId)
            if product == catalogSays.count {
                let known = analytics.catalog[productId: entry.productId]
                catalogSays.append(known.map { $0.kind == .autoRenewable })
                catalogProducts.append(known)
            }
            addMoney(entry, product: product)
            guard catalogSays[product] ?? (entry.transaction.type == .autoRenewableSubscription) else {
                return
            }
            let period = Subscription.Period(
                entry,
                user: users.number(entry.userId),
                product: product,
                currencies: &currencies
            )
            subscriptions[entry.originalTransactionId, default: []].append(period)
        }

        /// Money, purchases, refunds and consumable units: each transaction on its own.
        private mutating func addMoney(_ entry: borrowing LedgerEntry, product: Int) {
            // Most of a ledger is outside the range: two dates decide, before anything is copied.
            let purchasedInRange = bucket(entry.transaction.purchaseDate) != nil
            let revokedInRange = bucket(entry.transaction.revocationDate) != nil
            guard purchasedInRange || revokedInRange else { return }
            let transaction = entry.transaction
            guard transaction.inAppOwnershipType != .familyShared else { return }
            let productId = entry.productId
            let price = transaction.price ?? 0
            let currency = transaction.currency
            let purchased = bucket(transaction.purchaseDate)
            let refunded = LedgerAnalytics.isRefund(transaction) ? bucket(transaction.revocationDate) : nil
            guard purchased != nil || refunded != nil else { return }
            let units = LedgerAnalytics.consumableUnits(catalogProducts[product], transaction)
            if purchased != nil {
                add(transaction.purchaseDate) { figures in
                    figures.purchases += 1
                    if let currency, price != 0 {
                        figures.revenue[currency, default: AnalyticsRevenue()].grossMilliunits += price
                    }
                    figures.consumableUnits.granted += units ?? 0
                }
                products[productId, default: AnalyticsProductFigures(productId: productId)].record(
                    purchase: price,
                    currency: currency,
                    units: units
                )
            }
            if refunded != nil {
                let refunded = transaction.refundedUnits(of: price)
                let unitsBack = units.map { transaction.refundedUnits(of: $0) }
                add(transaction.revocationDate) { figures in
                    figures.refunds += 1
                    if let currency, refunded != 0 {
                        figures.revenue[currency, default: AnalyticsRevenue()].refundedMilliunits += refunded
                    }
                    figures.consumableUnits.takenBack += unitsBack ?? 0
                }
                products[productId, default: AnalyticsProductFigures(productId: productId)].record(
                    refund: refunded,
                    currency: currency,
                    units: unitsBack
                )
            }
        }
    }

    /// The report from what a ``Fold`` gathered: the subscriptions' figures and the standing at the end of each
    /// interval.
    func compute(_ gathered: consuming Fold, renewalInfos: [String: RenewalInfoPayload], now: Date) -> AnalyticsReport {
        var fold = gathered
        let catalogProducts = fold.catalogProducts
        let to = fold.to

        // Per product: its subscription group (the product, without one) and the catalog's duration.
        var groupNumbers = Interned()
        let groups = zip(fold.productNumbers.names, catalogProducts).map {
            groupNumbers.number($1?.subscriptionGroupId ?? $0)
        }
        let durations = catalogProducts.map { $0?.duration }
        var families = fold.subscriptions.map {
            Subscription(periods: $0.value, renewal: renewalInfos[$0.key], analytics: self, groups: groups)
        }
        // Subscribers (a user in a group) as numbers, and each price as a month's worth, once: the standing at the
        // end of every interval then only counts.
        struct Subscriber: Hashable {
            var user: Int
            var group: Int
        }
        var subscriberNumbers: [Subscriber: Int] = [:]
        for family in families.indices {
            let group = families[family].group
            for index in families[family].periods.indices {
                let period = families[family].periods[index]
                let key = Subscriber(user: period.user, group: group)
                let subscriber = subscriberNumbers[key] ?? subscriberNumbers.count
                subscriberNumbers[key] = subscriber
                families[family].periods[index].subscriber = subscriber
                if period.currencyIndex >= 0 {
                    families[family].periods[index].monthlyScaled = MRRSum.scaled(
                        period.price,
                        per: families[family].period(of: period, catalogDuration: durations[period.product])
                    )
                }
            }
        }
        let standing = Standing(families, subscribers: subscriberNumbers.count, currencies: fold.currencies.names)
        for family in families {
            fold.add(family.firstPurchase) { $0.subscriptions.new += 1 }
            for trial in family.trialStarts {
                fold.add(trial) { $0.subscriptions.trialsStarted += 1 }
            }
            for conversion in family.trialConversions {
                fold.add(conversion) { $0.subscriptions.trialConversions += 1 }
            }
            if let renewal = family.renewal, renewal.autoRenewStatus == .off {
                fold.add(renewal.signedDate) { $0.subscriptions.cancellations += 1 }
            }
            for end in family.accessEnds(now: now) {
                fold.add(end) { $0.subscriptions.churned += 1 }
            }
            for start in family.reactivations {
                fold.add(start) { $0.subscriptions.reactivations += 1 }
            }
        }
        for index in fold.series.indices {
            let end = fold.series[index].end
            (fold.series[index].subscriptions.active, fold.series[index].mrrMilliunits) = standing.at(before: end)
        }
        (fold.totals.subscriptions.active, fold.totals.mrrMilliunits) = standing.at(before: to)
        fold.totals.refundRate = Self.rate(fold.totals.refunds, of: fold.totals.purchases)
        let byProduct = fold.products.values.sorted { $0.productId < $1.productId }.map { figures in
            var figures = figures
            figures.refundRate = Self.rate(figures.refunds, of: figures.purchases)
            return figures
        }
        return AnalyticsReport(
            from: fold.from,
            to: to,
            interval: fold.interval,
            environment: fold.environment.rawValue,
            productId: fold.productId,
            bundleId: fold.bundleId,
            series: fold.series,
            totals: fold.totals,
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

    /// A consumable's units (quantity × units per purchase), or `nil` for another kind: as the catalog's product says,
    /// else (a product it does not know) as the signed type says.
    static func consumableUnits(_ product: CatalogProduct?, _ transaction: TransactionPayload) -> Int64? {
        guard product?.kind ?? (transaction.type == .consumable ? .consumable : nil) == .consumable else { return nil }
        let quantity = Int64(max(1, transaction.quantity ?? 1))
        let per = Int64(product?.unitsPerPurchase ?? 1)
        return quantity.multipliedReportingOverflow(by: per).overflow ? Int64.max : quantity * per
    }
}

/// Who has access at an instant, and what they pay a month: every subscription's periods flattened into arrays of
/// numbers, so that the standing at the end of each interval is a binary search per subscription and no copying.
struct Standing {
    private let subscribers: Int
    private let currencies: [String]
    /// Where each subscription's periods begin in the arrays below; one more than there are subscriptions.
    private var starts: [Int] = [0]
    /// Per period, in each subscription's order: when it was bought, when its access ends, from when a revocation
    /// takes it (seconds since 1970; infinity when never), its subscriber, currency and month's worth.
    private var purchased: [Double] = []
    private var ends: [Double] = []
    private var revokedFrom: [Double] = []
    private var subscriber: [Int] = []
    private var currency: [Int] = []
    private var monthly: [Int64] = []

    init(_ families: [Subscription], subscribers: Int, currencies: [String]) {
        self.subscribers = subscribers
        self.currencies = currencies
        for family in families {
            for index in family.periods.indices {
                let period = family.periods[index]
                purchased.append(period.purchased?.timeIntervalSince1970 ?? .infinity)
                ends.append(family.accessEnd(index)?.timeIntervalSince1970 ?? -.infinity)
                revokedFrom.append(family.revocation(index)?.timeIntervalSince1970 ?? .infinity)
                subscriber.append(period.subscriber)
                currency.append(period.currencyIndex)
                monthly.append(period.monthlyScaled)
            }
            starts.append(purchased.count)
        }
    }

    /// Active subscribers (per user and subscription group) and MRR per currency just before `instant`.
    func at(before instant: Date) -> (Int, [String: Int64]) {
        let moment = instant.timeIntervalSince1970 - 0.001
        var counted = [Bool](repeating: false, count: subscribers)
        var active = 0
        var sums = [MRRSum](repeating: MRRSum(), count: currencies.count)
        for family in 0..<(starts.count - 1) {
            // The last period bought by `moment`.
            var low = starts[family]
            var high = starts[family + 1]
            while low < high {
                let middle = (low + high) / 2
                if purchased[middle] <= moment { low = middle + 1 } else { high = middle }
            }
            let index = low - 1
            guard index >= starts[family], ends[index] > moment, revokedFrom[index] > moment else { continue }
            if !counted[subscriber[index]] {
                counted[subscriber[index]] = true
                active += 1
            }
            if currency[index] >= 0 {
                sums[currency[index]].add(scaled: monthly[index])
            }
        }
        var mrr: [String: Int64] = [:]
        for (index, name) in currencies.enumerated() where sums[index].isCounted {
            mrr[name] = sums[index].rounded
        }
        return (active, mrr)
    }
}

/// A sum of monthly amounts, exact: prices times a month's share of their period, over a common denominator.
struct MRRSum {
    /// The sum × ``scale``.
    private var scaled: Int64 = 0
    /// Whether anything was added.
    private(set) var isCounted = false
    /// 8 760 = 12 × 730: twelfths of a month over months, weeks and days alike.
    static let scale: Int64 = 8_760

    /// A price paid per `period` as a month's worth, × ``scale``: a week ×52/12, n months ÷n, a year ÷12, a day
    /// ×365/12.
    static func scaled(_ price: Int64, per period: SubscriptionPeriod) -> Int64 {
        let value = Int64(max(1, period.value))
        let share: Int64  // the month's worth of one price, × scale
        switch period.unit {
        case .day: share = 365 * scale / 12 / value
        case .week: share = 52 * scale / 12 / value
        case .month: share = scale / value
        case .year: share = scale / 12 / value
        }
        let (product, overflow) = price.multipliedReportingOverflow(by: share)
        return overflow ? Int64.max : product
    }

    /// Adds a month's worth, × ``scale``.
    mutating func add(scaled amount: Int64) {
        scaled = scaled.addingReportingOverflow(amount).partialValue
        isCounted = true
    }

    /// The sum, rounded to the nearest milliunit (halves away from zero).
    var rounded: Int64 {
        let half = Self.scale / 2
        return scaled >= 0 ? (scaled + half) / Self.scale : -((-scaled + half) / Self.scale)
    }
}
