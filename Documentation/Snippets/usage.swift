// The integrator's own records of what customers used (RefundsAndConsumables.md).
import IAPCore

/// How much of each purchase a customer used, in thousandths of a percent (0...100_000).
protocol UsageRecords: Sendable {
    func percentageUsed(_ transactionId: String) async throws -> Int32
}

let usageRecords: any UsageRecords = assumed()
/// The coins the customer spent, from the integrator's records.
let spentCoins: [ConsumableUsage] = assumed()
