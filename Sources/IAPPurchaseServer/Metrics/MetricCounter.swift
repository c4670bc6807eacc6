import IAPHTTPServer
/// A counter of a ``MetricsRegistry``: a value per series that only goes up, from zero.
public struct MetricCounter: Sendable {
    let family: MetricFamily

    /// Adds to a series, creating it at zero first.
    ///
    /// - Parameters:
    ///   - amount: What to add; a negative or non-finite amount is ignored (a counter never goes down).
    ///   - labels: The label values, one per label name of the family, in order.
    public func increment(by amount: Double = 1, labels: [String] = []) {
        guard amount >= 0, amount.isFinite else { return }
        family.update(labels) { $0.value += amount }
    }

    /// Creates a series at zero, if it does not exist, so that it is exposed before anything happens.
    ///
    /// - Parameter labels: The label values.
    public func initialize(labels: [String] = []) {
        family.update(labels) { _ in }
    }

    /// The value of a series; `0` for one never touched.
    ///
    /// - Parameter labels: The label values.
    public func value(labels: [String] = []) -> Double {
        family.snapshot(labels)?.value ?? 0
    }
}
