import IAPCore
/// Raised when a reconciliation finds that the ledger had missed more than the ``Reconciler``'s threshold: orders,
/// refunds or renewal states are being lost on the way to the server (a notification endpoint down, an app that
/// crashed before it told the server).
///
/// The alarm names each thing the ledger had missed (``discrepancies``), so that it can be checked: a purchase the
/// ledger never recorded, a refund it never applied, a renewal state it never heard of. What the ledger knew and
/// had not finished (a grant waiting for its retry, a purchase waiting for its owner) raises no alarm.
public struct ReconciliationAlarm: Sendable, Hashable {
    /// The customer as asked: a transaction id, a user id, or the original transaction id of a family.
    public var customer: String
    /// Apple's transactions with a valid signature in this run (for one customer: every purchase of the Apple
    /// account, in every family).
    public var appleCount: Int
    /// What the ledger had missed, and what the run did about each.
    public var discrepancies: [ReconciliationReport.Discrepancy]
    /// The configured threshold that the number of discrepancies exceeded.
    public var threshold: Int
    /// The whole report.
    public var report: ReconciliationReport

    /// How many things the ledger had missed: `discrepancies.count`.
    public var difference: Int { discrepancies.count }

    /// Creates an alarm.
    ///
    /// - Parameters:
    ///   - customer: The customer as asked.
    ///   - appleCount: Apple's transactions with a valid signature in the run.
    ///   - discrepancies: What the ledger had missed.
    ///   - threshold: The threshold exceeded.
    ///   - report: The whole report.
    public init(
        customer: String,
        appleCount: Int,
        discrepancies: [ReconciliationReport.Discrepancy],
        threshold: Int,
        report: ReconciliationReport
    ) {
        self.customer = customer
        self.appleCount = appleCount
        self.discrepancies = discrepancies
        self.threshold = threshold
        self.report = report
    }
}

extension ReconciliationAlarm: CustomStringConvertible {
    /// One line for logs and pagers, such as `the ledger had missed 1 thing Apple knows of 2000000000000003 (threshold
    /// 0): 2000000000000004 (coins.100 of bob) was not in the ledger: delivered now`.
    public var description: String {
        let count = discrepancies.count
        return "the ledger had missed \(count) thing\(count == 1 ? "" : "s") Apple knows of \(customer) "
            + "(threshold \(threshold)): " + discrepancies.map(\.description).joined(separator: "; ")
    }
}
