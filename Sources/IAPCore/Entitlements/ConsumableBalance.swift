/// The units of one consumable product a user holds, and what refunds took back that was no longer there.
public struct ConsumableBalance: Codable, Sendable, Hashable {
    /// The units held: delivered purchases, less refunded purchases and recorded uses. Negative only under
    /// ``ConsumableRefundPolicy/allowNegativeBalance``.
    public var balance: Int64
    /// The units taken back beyond the balance under ``ConsumableRefundPolicy/floorAtZeroRecordingDebt``;
    /// always 0 under ``ConsumableRefundPolicy/allowNegativeBalance``.
    public var debt: Int64

    /// Creates a balance.
    ///
    /// - Parameters:
    ///   - balance: The units held.
    ///   - debt: The units taken back beyond the balance.
    public init(balance: Int64, debt: Int64 = 0) {
        self.balance = balance
        self.debt = debt
    }
}
