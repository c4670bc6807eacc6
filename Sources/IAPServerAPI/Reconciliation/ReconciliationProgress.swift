import IAPCore
/// How far a whole-ledger reconciliation got.
public struct ReconciliationProgress: Sendable, Hashable {
    /// Customers (purchase families) done, skipped ones included (those of other apps too).
    public var done: Int
    /// Customers (purchase families) in the ledger when the walk began, counted by a first pass over its pages
    /// (those of other apps than the ones reconciled included).
    public var total: Int
    /// The original transaction id just done.
    public var current: String

    /// Creates a progress report.
    public init(done: Int, total: Int, current: String) {
        self.done = done
        self.total = total
        self.current = current
    }
}
