#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One auto-renewable subscription (an original transaction) as analytics reads it: when it started, its trials, when
/// its access ended and began again, and who had access at a given instant.
struct Subscription {
    /// Its transactions, by purchase date.
    let purchases: [LedgerEntry]
    /// Those that carry access (an upgraded transaction gave way to another).
    let periods: [LedgerEntry]
    /// The latest renewal info.
    let renewal: RenewalInfoPayload?
    /// The subscription group (or the product, without one).
    let group: String
    private let analytics: LedgerAnalytics

    init(entries: [LedgerEntry], renewal: RenewalInfoPayload?, analytics: LedgerAnalytics) {
        purchases = entries.sorted(by: Self.chronological)
        periods = purchases.filter { $0.transaction.isUpgraded != true }
        self.renewal = renewal
        self.analytics = analytics
        let last = purchases.last
        group = last.map { analytics.catalog[productId: $0.productId]?.subscriptionGroupId ?? $0.productId } ?? ""
    }

    static func chronological(_ lhs: LedgerEntry, _ rhs: LedgerEntry) -> Bool {
        let left = lhs.transaction.purchaseDate ?? .distantPast
        let right = rhs.transaction.purchaseDate ?? .distantPast
        return left != right ? left < right : lhs.sequence < rhs.sequence
    }

    /// When it was first bought.
    var firstPurchase: Date? {
        purchases.first?.transaction.purchaseDate
    }

    static func isFreeTrial(_ entry: LedgerEntry) -> Bool {
        let transaction = entry.transaction
        return transaction.offerDiscountType == .freeTrial
            || (transaction.offerType == .introductoryOffer && (transaction.price ?? 0) == 0
                && transaction.offerDiscountType == nil)
    }

    /// When each free trial started.
    var trialStarts: [Date] {
        periods.filter(Self.isFreeTrial).compactMap(\.transaction.purchaseDate)
    }

    /// When each first paid period after a free trial started.
    var trialConversions: [Date] {
        zip(periods, periods.dropFirst()).compactMap { previous, next in
            Self.isFreeTrial(previous) && !Self.isFreeTrial(next) ? next.transaction.purchaseDate : nil
        }
    }

    /// Whether a refund or revocation took a period's access (a prorated refund that kept it did not).
    private func isRevoked(_ entry: LedgerEntry, at instant: Date) -> Bool {
        guard let revoked = entry.transaction.revocationDate, revoked <= instant else { return false }
        let kept =
            entry.transaction.isPartlyRefunded
            && (entry.refundAccessKept ?? (analytics.proratedRefunds == .keepAccess))
        return !kept
    }

    /// When a period's access ends: its expiry, or the end of the grace period when it is the last period and the
    /// renewal info puts it in billing retry with one.
    private func accessEnd(of entry: LedgerEntry) -> Date? {
        guard let expires = entry.transaction.expiresDate else { return nil }
        if entry.transactionId == periods.last?.transactionId, renewal?.isInBillingRetryPeriod == true,
            let grace = renewal?.gracePeriodExpiresDate, grace > expires
        {
            return grace
        }
        return expires
    }

    /// The period that gives access at `instant`, if any: the latest one bought by then, not revoked by then, whose
    /// access (grace period included) has not ended.
    func access(at instant: Date) -> LedgerEntry? {
        guard let current = periods.last(where: { ($0.transaction.purchaseDate ?? .distantFuture) <= instant }),
            !isRevoked(current, at: instant), let end = accessEnd(of: current), end > instant
        else { return nil }
        return current
    }

    /// Each time its access ended before `now`: a period that expired (after any grace period) before the next was
    /// bought, and the last one's revocation or expiry.
    func accessEnds(now: Date) -> [Date] {
        var ends: [Date] = []
        for (index, period) in periods.enumerated() {
            guard let end = accessEnd(of: period) else { continue }
            let next = index + 1 < periods.count ? periods[index + 1].transaction.purchaseDate : nil
            if let next {
                if next > end {
                    ends.append(end)
                }
                continue
            }
            // The last period.
            if let revoked = period.transaction.revocationDate, revoked < end, revoked <= now,
                isRevoked(period, at: revoked)
            {
                ends.append(revoked)
            } else if end <= now {
                ends.append(end)
            }
        }
        return ends
    }

    /// When it was bought again after its access had ended.
    var reactivations: [Date] {
        zip(periods, periods.dropFirst()).compactMap { previous, next in
            guard let end = accessEnd(of: previous), let start = next.transaction.purchaseDate, start > end else {
                return nil
            }
            return start
        }
    }

    /// The period a price is paid for: the catalog's duration, else the signed dates rounded to the nearest usual
    /// period (a week, 1, 2, 3 or 6 months, a year), else a month.
    func period(of entry: LedgerEntry) -> SubscriptionPeriod {
        if let duration = analytics.catalog[productId: entry.productId]?.duration {
            return duration
        }
        guard let start = entry.transaction.purchaseDate, let end = entry.transaction.expiresDate, end > start else {
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
