#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension SimulatedAppStoreEngine {
    /// A commitment in progress: when it began and the number of the current billing period.
    struct Commitment: Sendable, Hashable {
        var start: Date
        var period: Int
    }

    /// How many billing periods a commitment of `productId` lasts, or `nil` for a product billed without one.
    func commitmentLength(of productId: String) -> Int? {
        guard let length = configuration.commitmentPlans[productId], length >= 1 else { return nil }
        return length
    }

    /// The commitment a new transaction of `productId` starting at `start` belongs to: the next billing period of
    /// `current`'s commitment when it renews the same product with periods left, else a new commitment.
    ///
    /// - Returns: `nil` for a product billed without a commitment.
    func commitment(
        for productId: String,
        continuing current: SimulatedSubscriptionRecord?,
        start: Date
    ) -> Commitment? {
        guard let length = commitmentLength(of: productId) else { return nil }
        if let current, current.productId == productId, let began = current.commitmentStart,
            current.commitmentPeriod < length
        {
            return Commitment(start: began, period: current.commitmentPeriod + 1)
        }
        return Commitment(start: start, period: 1)
    }

    /// When a commitment of `productId` that began at `start` ends.
    func commitmentEnd(of productId: String, from start: Date) -> Date {
        period(of: productId).repeated(commitmentLength(of: productId) ?? 1).advance(start)
    }

    /// Gives a transaction its `billingPlanType` and `commitmentInfo`.
    func stamp(_ commitment: Commitment, on payload: inout TransactionPayload, productId: String) {
        let length = commitmentLength(of: productId) ?? 1
        payload.billingPlanType = .monthly
        payload.commitmentInfo = TransactionCommitmentInfo(
            billingPeriodNumber: Int32(clamping: commitment.period),
            commitmentExpiresDate: commitmentEnd(of: productId, from: commitment.start),
            commitmentPrice: price(of: productId) * Int64(length),
            totalBillingPeriods: Int32(clamping: length)
        )
    }

    /// Whether the subscription's commitment still owes renewals: it renews then even with auto-renew off.
    func owesRenewals(_ subscription: SimulatedSubscriptionRecord) -> Bool {
        guard subscription.commitmentStart != nil, let length = commitmentLength(of: subscription.productId) else {
            return false
        }
        return subscription.commitmentPeriod < length
    }

    /// The renewal information's `commitmentInfo` of a subscription in a commitment.
    func renewalCommitment(_ subscription: SimulatedSubscriptionRecord) -> RenewalCommitmentInfo? {
        guard let start = subscription.commitmentStart, let length = commitmentLength(of: subscription.productId)
        else { return nil }
        return RenewalCommitmentInfo(
            commitmentAutoRenewProductId: subscription.autoRenewProductId,
            commitmentAutoRenewStatus: subscription.autoRenewEnabled ? .on : .off,
            commitmentRenewalBillingPlanType: .monthly,
            commitmentRenewalDate: commitmentEnd(of: subscription.productId, from: start),
            commitmentRenewalPrice: price(of: subscription.autoRenewProductId) * Int64(length)
        )
    }
}
