/// What a prorated refund (`revocationType` `REFUND_PRORATED`: the App Store refunded a share of the price, named by
/// `revocationPercentage`) does to a non-consumable or a subscription.
///
/// A consumable's prorated refund always takes back its share of the units, rounded down (in the customer's favour):
/// `units × revocationPercentage / 100000`. A full refund (`REFUND_FULL`), a family-sharing revocation, or a prorated
/// refund that names no percentage takes back everything, whatever the policy.
public enum ProratedRefundPolicy: String, Codable, Sendable, Hashable, CaseIterable {
    /// The default: the purchase keeps its access; the refund is recorded with its share and passed to the
    /// fulfillment hook as a take-back of nothing (``Delivery/accessKept``), so the business can account for it.
    case keepAccess
    /// The purchase loses its access as with a full refund; the hook takes it back.
    case revokeAccess
}

extension TransactionPayload {
    /// Whether the App Store refunded only a share of the transaction: `REFUND_PRORATED` with a
    /// `revocationPercentage` below 100 % (100000 thousandths of a percent).
    public var isPartlyRefunded: Bool {
        guard revocationDate != nil, revocationType == .refundProrated, let share = revocationPercentage else {
            return false
        }
        return share < 100_000
    }

    /// The units a refund of this transaction takes back of `units` granted: all of them for a full refund, the
    /// refunded share rounded down for a prorated one (`units × revocationPercentage / 100000`, in the customer's
    /// favour), none when it is not revoked.
    ///
    /// - Parameter units: The units the purchase gave.
    /// - Returns: The units to take back, between 0 and `units`.
    public func refundedUnits(of units: Int64) -> Int64 {
        guard revocationDate != nil else { return 0 }
        guard isPartlyRefunded, let share = revocationPercentage, units > 0 else { return units }
        let (high, low) = units.multipliedFullWidth(by: Int64(max(0, share)))
        return high < 0 ? 0 : Int64(100_000).dividingFullWidth((high, low)).quotient
    }
}
