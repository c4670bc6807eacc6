import IAPCore
import IAPHTTPServer

/// A small metrics registry that writes the Prometheus text exposition format, version 0.0.4: counters, gauges and
/// histograms with buckets, each family with label names fixed when it is registered.
///
/// ```swift
/// let registry = MetricsRegistry()
/// let requests = try registry.counter("app_requests_total", help: "Requests answered.", labels: ["status"])
/// let latency = try registry.histogram("app_request_duration_seconds", help: "Request durations.")
/// requests.increment(labels: ["200"])
/// latency.observe(0.012)
/// let text = registry.exposition()  // serve it with MetricsRegistry.contentType
/// ```
///
/// Families are written in the order they were registered, each with `# HELP` and `# TYPE` lines and then one line
/// per series (one combination of label values), series sorted by their label values; a histogram writes a
/// cumulative `_bucket` line per upper bound (`le`, ending with `+Inf`), `_sum` and `_count`. Label values are escaped
/// as the format asks (backslash, double quote, line feed). Every operation is safe from many tasks at once.
///
/// Keep label values to small fixed sets (outcomes, route patterns, error codes): every distinct value is a series
/// kept for the life of the process. Never put a user id or a transaction id in a label.
public final class MetricsRegistry: Sendable {
    /// The content type of ``exposition()``: `text/plain; version=0.0.4; charset=utf-8`.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let families = LockedValue<[MetricFamily]>([])

    /// Creates an empty registry.
    public init() {}

    /// Registers a counter family: a value that only goes up.
    ///
    /// - Parameters:
    ///   - name: The metric name, `[a-zA-Z_:][a-zA-Z0-9_:]*`; by convention it ends in `_total`.
    ///   - help: One line saying what it counts.
    ///   - labels: The label names, `[a-zA-Z_][a-zA-Z0-9_]*`, none beginning with `__`.
    /// - Returns: The counter.
    /// - Throws: ``IAPError`` `invalidArgument` for an invalid or repeated name, or a repeated label name.
    public func counter(_ name: String, help: String, labels: [String] = []) throws -> MetricCounter {
        MetricCounter(family: try register(name, help: help, kind: .counter, labels: labels))
    }

    /// Registers a gauge family: a value that goes up and down.
    ///
    /// - Parameters:
    ///   - name: The metric name.
    ///   - help: One line saying what it measures.
    ///   - labels: The label names.
    /// - Returns: The gauge.
    /// - Throws: ``IAPError`` `invalidArgument` for an invalid or repeated name, or a repeated label name.
    public func gauge(_ name: String, help: String, labels: [String] = []) throws -> MetricGauge {
        MetricGauge(family: try register(name, help: help, kind: .gauge, labels: labels))
    }

    /// Registers a histogram family: observations counted in buckets, with their sum and count.
    ///
    /// - Parameters:
    ///   - name: The metric name; by convention it ends in the unit (`_seconds`, `_bytes`).
    ///   - help: One line saying what it observes.
    ///   - labels: The label names; `le` is the format's own and cannot be one.
    ///   - buckets: The upper bounds, finite and strictly ascending; `+Inf` is added.
    ///     ``MetricHistogram/defaultBuckets`` by default (5 ms to 10 s).
    /// - Returns: The histogram.
    /// - Throws: ``IAPError`` `invalidArgument` for an invalid or repeated name, a label named `le`, or bounds that are
    ///   empty, not finite or not strictly ascending.
    public func histogram(
        _ name: String,
        help: String,
        labels: [String] = [],
        buckets: [Double] = MetricHistogram.defaultBuckets
    ) throws -> MetricHistogram {
        guard !labels.contains("le") else {
            throw IAPError(.invalidArgument, "histogram \(name): 'le' is the format's bucket label")
        }
        guard !buckets.isEmpty, buckets.allSatisfy(\.isFinite), zip(buckets, buckets.dropFirst()).allSatisfy(<) else {
            throw IAPError(.invalidArgument, "histogram \(name): the buckets must be finite and strictly ascending")
        }
        return MetricHistogram(
            family: try register(name, help: help, kind: .histogram, labels: labels, buckets: buckets)
        )
    }

    /// Every family in the text exposition format 0.0.4, ending with a line feed.
    ///
    /// - Returns: The text to serve as ``contentType``.
    public func exposition() -> String {
        var text = ""
        for family in families.withLock({ $0 }) {
            family.render(into: &text)
        }
        return text
    }

    private func register(
        _ name: String,
        help: String,
        kind: MetricFamily.Kind,
        labels: [String],
        buckets: [Double] = []
    ) throws -> MetricFamily {
        guard MetricFamily.isMetricName(name) else {
            throw IAPError(.invalidArgument, "'\(name)' is not a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)")
        }
        for label in labels where !MetricFamily.isLabelName(label) {
            throw IAPError(.invalidArgument, "metric \(name): '\(label)' is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)")
        }
        guard Set(labels).count == labels.count else {
            throw IAPError(.invalidArgument, "metric \(name) names a label twice")
        }
        let family = MetricFamily(name: name, help: help, kind: kind, labelNames: labels, buckets: buckets)
        let suffixes = kind == .histogram ? ["_bucket", "_sum", "_count", ""] : [""]
        let taken = families.withLock { families -> Bool in
            let names = Set(
                families.flatMap { existing in
                    (existing.kind == .histogram ? ["_bucket", "_sum", "_count", ""] : [""]).map { existing.name + $0 }
                }
            )
            if suffixes.contains(where: { names.contains(name + $0) }) {
                return true
            }
            families.append(family)
            return false
        }
        guard !taken else {
            throw IAPError(.invalidArgument, "metric \(name) is registered already (or one of its sample names is)")
        }
        return family
    }
}
