#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPServerAPI

extension SimulatedAppStoreEngine {
    /// Refunds a purchaser's transaction: sets the revocation fields, sends `REFUND`, revokes the subscription when
    /// the transaction is its latest, and takes family-shared copies back with `REVOKE`.
    mutating func refund(
        transactionId: String,
        reason: RevocationReason,
        percentage: Int32?
    ) throws -> SimulatedTransaction {
        guard let record = transactions[transactionId] else {
            throw IAPError(.notFound, "no transaction \(transactionId)")
        }
        guard record.sharedFrom == nil else {
            throw IAPError(
                .invalidArgument,
                "transaction \(transactionId) is family-shared; refund the purchaser's transaction instead"
            )
        }
        guard record.payload.revocationDate == nil else {
            throw IAPError(.invalidArgument, "transaction \(transactionId) is already refunded or revoked")
        }
        if let percentage, !(1...100_000).contains(percentage) {
            throw IAPError(
                .invalidArgument,
                "a prorated refund's percentage is in milliunits of a percent, 1...100000; got \(percentage)"
            )
        }
        let type: RevocationType = percentage == nil || percentage == 100_000 ? .refundFull : .refundProrated
        revoke(transactionId, reason: reason, type: type, percentage: type == .refundProrated ? percentage : nil)
        let subscription = revokeSubscription(ifLatest: transactionId)
        guard let revoked = transactions[transactionId] else {
            throw IAPError(.internalError, "transaction \(transactionId) vanished")
        }
        try notify(.refund, transaction: revoked, subscription: subscription)

        let copies = transactions.values.filter { $0.sharedFrom == transactionId && $0.payload.revocationDate == nil }
        for copy in copies.sorted(by: { Self.numericOrder($0.id, $1.id) }) {
            try revokeFamilyShared(copy.id)
        }
        return try signed(revoked)
    }

    /// Reverses a refund: clears the revocation fields, restores the subscription when the transaction is its
    /// latest, and sends `REFUND_REVERSED`.
    mutating func reverseRefund(transactionId: String) throws -> SimulatedTransaction {
        guard var record = transactions[transactionId] else {
            throw IAPError(.notFound, "no transaction \(transactionId)")
        }
        guard record.payload.revocationDate != nil, record.payload.revocationType != .familyRevoke else {
            throw IAPError(.invalidArgument, "transaction \(transactionId) is not refunded")
        }
        record.payload.revocationDate = nil
        record.payload.revocationReason = nil
        record.payload.revocationType = nil
        record.payload.revocationPercentage = nil
        transactions[transactionId] = record
        touch(transactionId)

        var restored: SimulatedSubscriptionRecord?
        if let originalTransactionId = record.payload.originalTransactionId,
            var subscription = subscriptions[originalTransactionId]
        {
            if subscription.latestTransactionId == transactionId, subscription.phase == .revoked {
                let before = subscription.beforeRevocation ?? (phase: .active, autoRenewEnabled: true)
                subscription.beforeRevocation = nil
                if subscription.expiresDate > now {
                    subscription.phase = before.phase
                    subscription.autoRenewEnabled = before.autoRenewEnabled
                } else {
                    subscription.phase = .expired
                    subscription.expirationIntent = .other
                }
                subscriptions[originalTransactionId] = subscription
            }
            restored = subscription
        }
        try notify(.refundReversed, transaction: transactions[transactionId], subscription: restored)
        return try signedTransaction(id: transactionId)
    }

    /// Sends `REFUND_DECLINED` for a transaction.
    mutating func declineRefund(transactionId: String) throws {
        guard let record = transactions[transactionId] else {
            throw IAPError(.notFound, "no transaction \(transactionId)")
        }
        try notify(.refundDeclined, transaction: record, subscription: subscription(of: record))
    }

    /// Sends `CONSUMPTION_REQUEST` for a transaction: the customer asked for a refund.
    mutating func requestConsumptionInformation(
        transactionId: String,
        reason: ConsumptionRequestReason
    ) throws {
        guard let record = transactions[transactionId] else {
            throw IAPError(.notFound, "no transaction \(transactionId)")
        }
        try notify(
            .consumptionRequest,
            transaction: record,
            subscription: subscription(of: record),
            consumptionRequestReason: reason
        )
    }

    /// Takes the app's answer to a consumption request (Send Consumption Information), checked as Apple checks it.
    mutating func receiveConsumptionInformation(transactionId: String, _ request: ConsumptionRequest) throws {
        guard transactions[transactionId] != nil else {
            throw Self.apiError(status: 404, code: 4_040_010, "Transaction id not found.")
        }
        guard request.customerConsented else {
            throw Self.apiError(
                status: 400,
                code: 4_000_035,
                "An error that indicates the customer consented field is invalid or doesn’t indicate that the customer consented."
            )
        }
        if let percentage = request.consumptionPercentage, !(0...100_000).contains(percentage) {
            throw Self.apiError(status: 400, code: 4_000_000, "Invalid consumptionPercentage.")
        }
        if let status = request.deliveryStatus, !DeliveryStatus.allKnown.contains(status) {
            throw Self.apiError(
                status: 400,
                code: 4_000_036,
                "An error that indicates the value in the delivery status field is invalid."
            )
        }
        consumptionAnswers[transactionId, default: []].append(request)
    }

    /// Takes a family-shared transaction back: `FAMILY_REVOKE`, the member's mirror revoked, and `REVOKE`.
    mutating func revokeFamilyShared(_ transactionId: String) throws {
        revoke(transactionId, reason: nil, type: .familyRevoke, percentage: nil)
        let subscription = revokeSubscription(ifLatest: transactionId)
        try notify(.revoke, transaction: transactions[transactionId], subscription: subscription)
    }

    private mutating func revoke(
        _ transactionId: String,
        reason: RevocationReason?,
        type: RevocationType,
        percentage: Int32?
    ) {
        guard var record = transactions[transactionId] else { return }
        record.payload.revocationDate = now
        record.payload.revocationReason = reason
        record.payload.revocationType = type
        record.payload.revocationPercentage = percentage
        transactions[transactionId] = record
        touch(transactionId)
    }

    /// Revokes the subscription whose latest transaction is `transactionId`, and returns the subscription the
    /// transaction belongs to, if any.
    private mutating func revokeSubscription(ifLatest transactionId: String) -> SimulatedSubscriptionRecord? {
        guard let record = transactions[transactionId],
            let originalTransactionId = record.payload.originalTransactionId,
            var subscription = subscriptions[originalTransactionId]
        else { return nil }
        if subscription.latestTransactionId == transactionId, subscription.phase != .revoked {
            subscription.beforeRevocation = (subscription.phase, subscription.autoRenewEnabled)
            subscription.phase = .revoked
            subscription.autoRenewEnabled = false
            subscriptions[originalTransactionId] = subscription
        }
        return subscription
    }

    /// The subscription a transaction belongs to, if any.
    func subscription(of record: SimulatedTransactionRecord) -> SimulatedSubscriptionRecord? {
        record.payload.originalTransactionId.flatMap { subscriptions[$0] }
    }
}
