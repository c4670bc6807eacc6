import IAPHTTPServer
/// A histogram of a ``MetricsRegistry``: observations counted in buckets by upper bound, with their sum and count.
public struct MetricHistogram: Sendable {
    let family: MetricFamily

    /// Prometheus's default bounds, in seconds: 5 ms to 10 s.
    public static let defaultBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// The upper bounds, ascending, without `+Inf`.
    public var buckets: [Double] { family.buckets }

    /// Records one observation in the first bucket whose bound is at least the value (`+Inf` above them all).
    ///
    /// - Parameters:
    ///   - value: The observation; a NaN is ignored.
    ///   - labels: The label values, one per label name of the family, in order.
    public func observe(_ value: Double, labels: [String] = []) {
        guard !value.isNaN else { return }
        let bucket = family.buckets.firstIndex { value <= $0 } ?? family.buckets.count
        family.update(labels) { series in
            series.bucketCounts[bucket] += 1
            series.sum += value
            series.count += 1
        }
    }

    /// Records how long something took, in seconds.
    ///
    /// - Parameters:
    ///   - duration: The time taken.
    ///   - labels: The label values.
    public func observe(_ duration: Duration, labels: [String] = []) {
        let (seconds, attoseconds) = duration.components
        observe(Double(seconds) + Double(attoseconds) / 1e18, labels: labels)
    }

    /// The number of observations of a series.
    ///
    /// - Parameter labels: The label values.
    public func count(labels: [String] = []) -> UInt64 {
        family.snapshot(labels)?.count ?? 0
    }

    /// The sum of the observations of a series.
    ///
    /// - Parameter labels: The label values.
    public func sum(labels: [String] = []) -> Double {
        family.snapshot(labels)?.sum ?? 0
    }
}
