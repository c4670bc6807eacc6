#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One auto-renewable subscription (an original transaction) as analytics reads it: when it started, its trials, when
/// its access ended and began again, and who had access at a given instant.
struct Subscription {
    /// What analytics needs of one transaction of a subscription: a few fields, not the whole entry, and numbers in
    /// place of its strings, so that a period copies without touching a reference count.
    struct Period {
        /// The user, as a number of the report's ``Interned`` users.
        let user: Int
        /// The product, as a number of the report's ``Interned`` products.
        let product: Int
        let sequence: Int64
        let purchased: Date?
        let expires: Date?
        let revoked: Date?
        /// Whether a revocation leaves the access (a prorated refund decided so); `nil` when the ledger kept no
        /// decision.
        let accessKeptDecision: Bool?
        let isPartlyRefunded: Bool
        let isUpgraded: Bool
        let isFreeTrial: Bool
        /// Whether the price is one month's payment of a commitment (`billingPlanType` `MONTHLY`).
        let isBilledMonthly: Bool
        let price: Int64
        /// The currency of a price that is not 0, as a number of the report's ``Interned`` currencies, or -1.
        let currencyIndex: Int
        /// The subscriber (user and subscription group) as a number, for counting them: set by ``LedgerAnalytics``.
        var subscriber = 0
        /// The price as a month's worth, × ``MRRSum/scale``: set by ``LedgerAnalytics``.
        var monthlyScaled: Int64 = 0

        init(_ entry: borrowing LedgerEntry, user: Int, product: Int, currencies: inout Interned) {
            // Field by field: a copy of the whole transaction would retain every string it holds.
            self.user = user
            self.product = product
            sequence = entry.sequence
            purchased = entry.transaction.purchaseDate
            expires = entry.transaction.expiresDate
            revoked = entry.transaction.revocationDate
            accessKeptDecision = entry.refundAccessKept
            isPartlyRefunded = entry.transaction.isPartlyRefunded
            isUpgraded = entry.transaction.isUpgraded == true
            let discount = entry.transaction.offerDiscountType
            isFreeTrial =
                discount == .freeTrial
                || (entry.transaction.offerType == .introductoryOffer && (entry.transaction.price ?? 0) == 0
                    && discount == nil)
            isBilledMonthly = entry.transaction.billingPlanType == .monthly
            price = entry.transaction.price ?? 0
            if let currency = entry.transaction.currency, price != 0 {
                currencyIndex = currencies.number(currency)
            } else {
                currencyIndex = -1
            }
        }
    }

    /// Its transactions, by purchase date.
    let purchases: [Period]
    /// Those that carry access (an upgraded transaction gave way to another).
    var periods: [Period]
    /// The latest renewal info.
    let renewal: RenewalInfoPayload?
    /// The subscription group (or the product, without one), as a number of the report's ``Interned`` groups.
    let group: Int
    private let analytics: LedgerAnalytics
    /// The end of access of each of ``periods``.
    private let ends: [Date?]

    init(periods unsorted: [Period], renewal: RenewalInfoPayload?, analytics: LedgerAnalytics, groups: [Int]) {
        purchases = unsorted.sorted(by: Self.chronological)
        let periods = purchases.filter { !$0.isUpgraded }
        self.periods = periods
        self.renewal = renewal
        self.analytics = analytics
        let last = purchases.last
        group = last.map { groups[$0.product] } ?? -1
        // A period's access ends at its expiry, or at the end of the grace period when it is the last period and the
        // renewal info puts it in billing retry with one.
        ends = periods.indices.map { index in
            guard let expires = periods[index].expires else { return nil }
            if index == periods.count - 1, renewal?.isInBillingRetryPeriod == true,
                let grace = renewal?.gracePeriodExpiresDate, grace > expires
            {
                return grace
            }
            return expires
        }
    }

    static func chronological(_ lhs: Period, _ rhs: Period) -> Bool {
        let left = lhs.purchased ?? .distantPast
        let right = rhs.purchased ?? .distantPast
        return left != right ? left < right : lhs.sequence < rhs.sequence
    }

    /// When it was first bought.
    var firstPurchase: Date? {
        purchases.first?.purchased
    }

    /// When each free trial started.
    var trialStarts: [Date] {
        periods.filter(\.isFreeTrial).compactMap(\.purchased)
    }

    /// When each first paid period after a free trial started.
    var trialConversions: [Date] {
        zip(periods, periods.dropFirst()).compactMap { previous, next in
            previous.isFreeTrial && !next.isFreeTrial ? next.purchased : nil
        }
    }

    /// Whether a refund or revocation took a period's access by `instant` (a prorated refund that kept it did not).
    private func isRevoked(_ period: Period, at instant: Date) -> Bool {
        guard let revoked = period.revoked, revoked <= instant else { return false }
        let kept =
            period.isPartlyRefunded && (period.accessKeptDecision ?? (analytics.proratedRefunds == .keepAccess))
        return !kept
    }

    /// When the access of the period at `index` of ``periods`` ends (its expiry, or its grace period's end).
    func accessEnd(_ index: Int) -> Date? {
        ends[index]
    }

    /// When a revocation took the access of the period at `index` of ``periods``, if one did (a prorated refund that
    /// kept the access did not).
    func revocation(_ index: Int) -> Date? {
        guard let revoked = periods[index].revoked else { return nil }
        return isRevoked(periods[index], at: revoked) ? revoked : nil
    }

    /// Each time its access ended before `now`: a period that expired (after any grace period) before the next was
    /// bought, and the last one's revocation or expiry.
    func accessEnds(now: Date) -> [Date] {
        var found: [Date] = []
        for index in periods.indices {
            guard let end = ends[index] else { continue }
            if index + 1 < periods.count {
                if let next = periods[index + 1].purchased, next > end {
                    found.append(end)
                }
                continue
            }
            // The last period.
            let period = periods[index]
            if let revoked = period.revoked, revoked < end, revoked <= now, isRevoked(period, at: revoked) {
                found.append(revoked)
            } else if end <= now {
                found.append(end)
            }
        }
        return found
    }

    /// When it was bought again after its access had ended.
    var reactivations: [Date] {
        periods.indices.dropFirst().compactMap { index in
            guard let end = ends[index - 1], let start = periods[index].purchased, start > end else { return nil }
            return start
        }
    }

    /// The period a price is paid for: a month for a commitment billed monthly (whatever the product's duration),
    /// the catalog's duration of its product, else the signed dates rounded to the nearest usual period (a week, 1,
    /// 2, 3 or 6 months, a year), else a month.
    func period(of period: Period, catalogDuration: SubscriptionPeriod?) -> SubscriptionPeriod {
        if period.isBilledMonthly {
            return SubscriptionPeriod(value: 1, unit: .month)
        }
        if let duration = catalogDuration {
            return duration
        }
        guard let start = period.purchased, let end = period.expires, end > start else {
            return SubscriptionPeriod(value: 1, unit: .month)
        }
        let days = end.timeIntervalSince(start) / 86_400
        let usual: [(Double, SubscriptionPeriod)] = [
            (7, SubscriptionPeriod(value: 1, unit: .week)), (30.4, SubscriptionPeriod(value: 1, unit: .month)),
            (60.8, SubscriptionPeriod(value: 2, unit: .month)), (91.3, SubscriptionPeriod(value: 3, unit: .month)),
            (182.6, SubscriptionPeriod(value: 6, unit: .month)), (365.2, SubscriptionPeriod(value: 1, unit: .year)),
        ]
        return usual.min { abs($0.0 - days) < abs($1.0 - days) }?.1 ?? SubscriptionPeriod(value: 1, unit: .month)
    }
}

extension AnalyticsProductFigures {
    mutating func record(purchase price: Int64, currency: String?, units: Int64?) {
        purchases += 1
        if let currency, price != 0 {
            revenue[currency, default: AnalyticsRevenue()].grossMilliunits += price
        }
        consumableUnits.granted += units ?? 0
    }

    mutating func record(refund amount: Int64, currency: String?, units: Int64?) {
        refunds += 1
        if let currency, amount != 0 {
            revenue[currency, default: AnalyticsRevenue()].refundedMilliunits += amount
        }
        consumableUnits.takenBack += units ?? 0
    }
}

/// Strings as small numbers, each once: a report's users, products, groups and currencies.
struct Interned {
    /// The strings, by number.
    private(set) var names: [String] = []
    private var numbers: [String: Int] = [:]

    /// The number of a string, given it the first time.
    mutating func number(_ name: String) -> Int {
        if let number = numbers[name] {
            return number
        }
        numbers[name] = names.count
        names.append(name)
        return names.count - 1
    }
}
