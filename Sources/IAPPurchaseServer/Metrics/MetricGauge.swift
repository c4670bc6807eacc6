import IAPHTTPServer
/// A gauge of a ``MetricsRegistry``: a value per series that goes up and down.
public struct MetricGauge: Sendable {
    let family: MetricFamily

    /// Sets a series.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - labels: The label values, one per label name of the family, in order.
    public func set(_ value: Double, labels: [String] = []) {
        family.update(labels) { $0.value = value }
    }

    /// Adds to a series (a negative amount subtracts).
    ///
    /// - Parameters:
    ///   - amount: What to add.
    ///   - labels: The label values.
    public func add(_ amount: Double, labels: [String] = []) {
        family.update(labels) { $0.value += amount }
    }

    /// The value of a series; `0` for one never set.
    ///
    /// - Parameter labels: The label values.
    public func value(labels: [String] = []) -> Double {
        family.snapshot(labels)?.value ?? 0
    }
}
