#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension EntitlementEngine {
    /// One entitlement per subscription group the purchases touch.
    func subscriptionEntitlements(
        _ purchases: [Purchase],
        renewalInfos: [RenewalInfoPayload],
        at instant: Date
    ) -> [ProductEntitlement] {
        let latestRenewal = Self.latestRenewalInfos(renewalInfos)
        let groups = Dictionary(grouping: purchases) { $0.product.subscriptionGroupId ?? $0.product.productId }
        return groups.values.compactMap { group in
            let subscriptions = Dictionary(grouping: group, by: \.entry.originalTransactionId)
            let candidates = subscriptions.compactMap { originalTransactionId, transactions in
                let current =
                    transactions
                    .filter { $0.transaction.isUpgraded != true }
                    .max(by: Purchase.chronological)
                return current.map {
                    subscriptionEntitlement(current: $0, renewal: latestRenewal[originalTransactionId], at: instant)
                }
            }
            return candidates.max(by: Self.isLessPreferred)
        }
    }

    private func subscriptionEntitlement(
        current: Purchase,
        renewal: RenewalInfoPayload?,
        at instant: Date
    ) -> ProductEntitlement {
        let pendingProductId = renewal?.autoRenewProductId.flatMap { $0 == current.product.productId ? nil : $0 }
        func make(_ state: EntitlementState, _ expiresDate: Date?) -> ProductEntitlement {
            var made = entitlement(
                for: current,
                state: state,
                expiresDate: expiresDate,
                autoRenewProductId: pendingProductId
            )
            if let commitment = current.transaction.commitmentInfo, state != .revoked {
                made.commitmentExpiresDate = commitment.commitmentExpiresDate
                if let number = commitment.billingPeriodNumber, let total = commitment.totalBillingPeriods {
                    made.commitmentRenewalsOwed = max(0, Int(total) - Int(number))
                }
            }
            return made
        }
        let expiresDate = current.transaction.expiresDate
        if current.isRevoked {
            return make(.revoked, expiresDate)
        }
        guard let expiresDate else {
            // An auto-renewable transaction without an expiry cannot prove access.
            return make(.expired, nil)
        }
        if expiresDate > instant {
            return make(renewal?.autoRenewStatus == .off ? .willExpire : .active, expiresDate)
        }
        guard renewal?.isInBillingRetryPeriod == true else {
            return make(.expired, expiresDate)
        }
        if let graceEnd = renewal?.gracePeriodExpiresDate, graceEnd > instant {
            return make(.gracePeriod, graceEnd)
        }
        return make(.billingRetry, expiresDate)
    }

    /// The latest signed renewal info per original transaction id.
    private static func latestRenewalInfos(_ renewalInfos: [RenewalInfoPayload]) -> [String: RenewalInfoPayload] {
        var latest: [String: RenewalInfoPayload] = [:]
        for info in renewalInfos {
            guard let id = info.originalTransactionId else { continue }
            let signed = info.signedDate ?? .distantPast
            if let existing = latest[id], (existing.signedDate ?? .distantPast) > signed {
                continue
            }
            latest[id] = info
        }
        return latest
    }

    /// Orders a group's candidate entitlements: access first, then the latest expiry, then product id.
    private static func isLessPreferred(_ lhs: ProductEntitlement, _ rhs: ProductEntitlement) -> Bool {
        if lhs.hasAccess != rhs.hasAccess {
            return !lhs.hasAccess
        }
        let left = lhs.expiresDate ?? .distantPast
        let right = rhs.expiresDate ?? .distantPast
        if left != right {
            return left < right
        }
        return (lhs.originalTransactionId, lhs.transactionId) > (rhs.originalTransactionId, rhs.transactionId)
    }
}
