#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension EntitlementEngine {
    /// One entitlement per non-renewing product the purchases touch.
    func nonRenewingEntitlements(_ purchases: [Purchase], at instant: Date) -> [ProductEntitlement] {
        Dictionary(grouping: purchases, by: \.product.productId).values.compactMap { group in
            let sorted = group.sorted(by: Purchase.chronological)
            let counted = sorted.filter { !$0.isRevoked }
            guard !counted.isEmpty else {
                return sorted.last.map { entitlement(for: $0, state: .revoked, expiresDate: nil) }
            }
            // Access periods: each starts at its purchase, or at the end of the one before if that is later.
            var periods: [(start: Date, end: Date, purchase: Purchase)] = []
            for purchase in counted {
                let duration = purchase.product.duration ?? StaticProductCatalog.defaultNonRenewingDuration
                let start = max(purchase.purchaseDate, periods.last?.end ?? purchase.purchaseDate)
                periods.append((start, duration.advance(start), purchase))
            }
            if let index = periods.firstIndex(where: { $0.start <= instant && instant < $0.end }) {
                // Access runs to the end of the unbroken run of periods from the current one.
                var end = periods[index].end
                for period in periods[(index + 1)...] where period.start == end {
                    end = period.end
                }
                return entitlement(for: periods[index].purchase, state: .active, expiresDate: end)
            }
            guard let last = periods.last(where: { $0.start <= instant }) else {
                // Bought "after" now: the server's clock is behind the App Store's. Within the tolerance the access
                // has begun; beyond it, it has not yet begun. Never expired.
                let first = periods[0]
                var end = first.end
                for period in periods.dropFirst() where period.start == end {
                    end = period.end
                }
                let started = first.start.timeIntervalSince(instant) <= clockSkewTolerance
                return entitlement(for: first.purchase, state: started ? .active : .notStarted, expiresDate: end)
            }
            return entitlement(for: last.purchase, state: .expired, expiresDate: last.end)
        }
    }

    /// Whether the purchase's units were ever given: a confirmed grant, or an entry settled as delivered —
    /// except one the App Store revoked before any grant was attempted.
    static func wasGranted(_ entry: LedgerEntry) -> Bool {
        if entry.deliveredAt != nil {
            return true
        }
        return entry.deliveryState == .delivered && !(entry.revocationDelivered && !entry.grantAttempted)
    }

    /// The balance of every consumable product with purchases or uses.
    func balances(_ purchases: [Purchase], usage: [ConsumableUsage]) -> [String: ConsumableBalance] {
        var events: [String: [BalanceEvent]] = [:]
        for purchase in purchases where Self.wasGranted(purchase.entry) {
            let units = Self.units(purchase)
            events[purchase.product.productId, default: []].append(
                BalanceEvent(date: purchase.purchaseDate, order: 0, units: units, id: purchase.entry.transactionId)
            )
            if let revoked = purchase.revocationDate {
                // A prorated refund takes back its share (rounded down); anything else, every unit.
                var refund = purchase.entry.transaction
                refund.revocationDate = refund.revocationDate ?? revoked
                events[purchase.product.productId, default: []].append(
                    BalanceEvent(
                        date: revoked,
                        order: 1,
                        units: -refund.refundedUnits(of: units),
                        id: purchase.entry.transactionId
                    )
                )
            }
        }
        for purchase in purchases where events[purchase.product.productId] == nil {
            // Bought but nothing delivered yet: the product still shows, with nothing in it.
            events[purchase.product.productId] = []
        }
        for (position, use) in usage.enumerated() where use.units > 0 {
            events[use.productId, default: []].append(
                BalanceEvent(date: use.date, order: 2, units: -use.units, id: String(position))
            )
        }
        return events.mapValues { productEvents in
            var balance: Int64 = 0
            var debt: Int64 = 0
            for event in productEvents.sorted(by: BalanceEvent.chronological) {
                balance = Self.adding(balance, event.units)
                if refundPolicy == .floorAtZeroRecordingDebt, balance < 0 {
                    debt = Self.adding(debt, -balance)
                    balance = 0
                }
            }
            return ConsumableBalance(balance: balance, debt: debt)
        }
    }

    /// The units a consumable purchase adds: quantity × units per purchase, capped at `Int64.max`.
    private static func units(_ purchase: Purchase) -> Int64 {
        let (product, overflow) = Int64(purchase.transaction.effectiveQuantity)
            .multipliedReportingOverflow(by: Int64(purchase.product.unitsPerPurchase))
        return overflow ? .max : product
    }

    /// `lhs + rhs`, saturating at the bounds of `Int64`.
    private static func adding(_ lhs: Int64, _ rhs: Int64) -> Int64 {
        let (sum, overflow) = lhs.addingReportingOverflow(rhs)
        guard overflow else { return sum }
        return rhs > 0 ? .max : .min
    }
}

/// A change of a consumable balance.
private struct BalanceEvent {
    var date: Date
    /// At the same instant: purchases (0) before refunds (1) before uses (2).
    var order: Int
    var units: Int64
    var id: String

    static func chronological(_ lhs: BalanceEvent, _ rhs: BalanceEvent) -> Bool {
        if lhs.date != rhs.date {
            return lhs.date < rhs.date
        }
        return (lhs.order, lhs.id.count, lhs.id) < (rhs.order, rhs.id.count, rhs.id)
    }
}
