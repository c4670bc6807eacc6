import IAPCore
import IAPHTTPServer

/// One metric family of a ``MetricsRegistry``: its name, help, type and label names, and the value of each series
/// (each combination of label values), guarded by one lock.
final class MetricFamily: Sendable {
    /// The Prometheus type of a family.
    enum Kind: String, Sendable {
        case counter
        case gauge
        case histogram
    }

    /// The state of one series.
    struct Series: Sendable {
        /// The value of a counter or gauge.
        var value: Double = 0
        /// A histogram's observations at or below each bucket's bound, not cumulative (the last is +Inf).
        var bucketCounts: [UInt64] = []
        /// A histogram's sum of observations.
        var sum: Double = 0
        /// A histogram's number of observations.
        var count: UInt64 = 0
    }

    let name: String
    let help: String
    let kind: Kind
    let labelNames: [String]
    /// A histogram's upper bounds, ascending, without +Inf.
    let buckets: [Double]
    private let series = LockedValue<[[String]: Series]>([:])

    init(name: String, help: String, kind: Kind, labelNames: [String], buckets: [Double] = []) {
        self.name = name
        self.help = help
        self.kind = kind
        self.labelNames = labelNames
        self.buckets = buckets
    }

    /// Changes one series, creating it at zero first.
    ///
    /// - Parameters:
    ///   - labels: The label values, one per label name, in order.
    ///   - change: What to do to it.
    func update(_ labels: [String], _ change: (inout Series) -> Void) {
        precondition(
            labels.count == labelNames.count,
            "metric \(name) takes \(labelNames.count) label value(s) (\(labelNames)), not \(labels.count)"
        )
        let empty = Series(bucketCounts: [UInt64](repeating: 0, count: kind == .histogram ? buckets.count + 1 : 0))
        series.withLock { all in
            change(&all[labels, default: empty])
        }
    }

    /// A copy of one series, if it exists.
    func snapshot(_ labels: [String]) -> Series? {
        series.withLock { $0[labels] }
    }

    /// The family in the text exposition format: `# HELP`, `# TYPE`, then one line per sample, series sorted by
    /// their label values.
    func render(into text: inout String) {
        text += "# HELP \(name) \(Self.escapeHelp(help))\n"
        text += "# TYPE \(name) \(kind.rawValue)\n"
        let all = series.withLock { $0 }.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        for (labels, state) in all {
            switch kind {
            case .counter, .gauge:
                text += "\(name)\(labelText(labels)) \(Self.format(state.value))\n"
            case .histogram:
                var cumulative: UInt64 = 0
                for (index, bound) in (buckets + [.infinity]).enumerated() {
                    cumulative += state.bucketCounts[index]
                    let le = labelText(labels, extra: ("le", Self.format(bound)))
                    text += "\(name)_bucket\(le) \(cumulative)\n"
                }
                text += "\(name)_sum\(labelText(labels)) \(Self.format(state.sum))\n"
                text += "\(name)_count\(labelText(labels)) \(state.count)\n"
            }
        }
    }

    private func labelText(_ values: [String], extra: (String, String)? = nil) -> String {
        var pairs = zip(labelNames, values).map { ($0, $1) }
        if let extra {
            pairs.append(extra)
        }
        guard !pairs.isEmpty else { return "" }
        return "{" + pairs.map { "\($0)=\"\(Self.escapeLabel($1))\"" }.joined(separator: ",") + "}"
    }

    /// A sample value as the format writes it: `NaN`, `+Inf`, `-Inf`, an integer without a fraction, or a decimal.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 {
            return String(Int64(value))
        }
        return "\(value)"
    }

    /// A label value escaped: backslash, double quote and line feed.
    static func escapeLabel(_ value: String) -> String {
        escape(value, quote: true)
    }

    /// A help text escaped: backslash and line feed.
    static func escapeHelp(_ value: String) -> String {
        escape(value, quote: false)
    }

    private static func escape(_ value: String, quote: Bool) -> String {
        var escaped = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"" where quote: escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// Whether a text is a metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    static func isMetricName(_ name: String) -> Bool {
        isName(name, allowingColon: true)
    }

    /// Whether a text is a label name: `[a-zA-Z_][a-zA-Z0-9_]*`, not beginning with `__` (reserved).
    static func isLabelName(_ name: String) -> Bool {
        isName(name, allowingColon: false) && !name.hasPrefix("__")
    }

    private static func isName(_ name: String, allowingColon: Bool) -> Bool {
        guard let first = name.utf8.first else { return false }
        func letter(_ byte: UInt8) -> Bool {
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == UInt8(ascii: "_")
                || (allowingColon && byte == UInt8(ascii: ":"))
        }
        guard letter(first) else { return false }
        return name.utf8.allSatisfy { letter($0) || ($0 >= 0x30 && $0 <= 0x39) }
    }
}
