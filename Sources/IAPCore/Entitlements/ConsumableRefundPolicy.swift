/// What a consumable balance does when a refund (or a use) takes back more units than it holds.
public enum ConsumableRefundPolicy: String, Codable, Sendable, Hashable, CaseIterable {
    /// The balance goes below zero; later purchases fill the hole first. ``ConsumableBalance/debt`` stays 0.
    case allowNegativeBalance
    /// The balance stops at zero and the shortfall is added to ``ConsumableBalance/debt``.
    ///
    /// The debt is a record for the business (for example to act on refund abuse); later purchases add to
    /// the balance in full and do not pay it off.
    case floorAtZeroRecordingDebt
}
