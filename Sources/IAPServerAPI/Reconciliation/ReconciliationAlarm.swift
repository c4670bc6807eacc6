import IAPCore
/// Raised when Apple's count of a customer's transactions and the count the ledger had delivered differ by more
/// than the ``Reconciler``'s threshold: orders are being lost (or refunds missed) on the way to the server.
public struct ReconciliationAlarm: Sendable, Hashable {
    /// The customer as asked.
    public var customer: String
    /// Apple's transactions with a valid signature in this run.
    public var appleCount: Int
    /// Of those, how many the ledger had settled before the run.
    public var deliveredCount: Int
    /// `appleCount - deliveredCount`.
    public var difference: Int
    /// The configured threshold the difference exceeded.
    public var threshold: Int
    /// The whole report.
    public var report: ReconciliationReport

    /// Creates an alarm.
    public init(
        customer: String,
        appleCount: Int,
        deliveredCount: Int,
        difference: Int,
        threshold: Int,
        report: ReconciliationReport
    ) {
        self.customer = customer
        self.appleCount = appleCount
        self.deliveredCount = deliveredCount
        self.difference = difference
        self.threshold = threshold
        self.report = report
    }
}
