/// A strict reader of the Prometheus text exposition format, version 0.0.4, for tests: it parses what `GET /metrics`
/// answers and lists every way the text breaks the format.
///
/// It checks: `# HELP` and `# TYPE` lines (one `TYPE` per family, before its samples, a known type); sample lines of
/// `name{label="value",...} value [timestamp]` with valid metric and label names, escapes limited to `\\`, `\"` and
/// `\n`, and values Go's `ParseFloat` reads (`NaN`, `+Inf`, `-Inf` included); each family's samples together, no
/// series twice; a histogram's `_bucket` lines with `le`, cumulative, ending with `le="+Inf"` equal to `_count`, and
/// its `_sum` and `_count`; a final line feed.
package struct PrometheusExposition {
    package struct Sample: Sendable, Hashable {
        package var name: String
        package var labels: [String: String]
        package var value: Double
    }

    package struct Family: Sendable {
        package var name: String
        package var type: String?
        package var help: String?
        package var samples: [Sample] = []
    }

    /// The families, by name, in the order they appeared.
    package private(set) var families: [Family] = []
    /// Everything wrong with the text; empty when it is valid.
    package private(set) var problems: [String] = []

    /// The family of a name.
    package func family(_ name: String) -> Family? {
        families.first { $0.name == name }
    }

    /// The value of one sample, by name and exact labels.
    package func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        families.lazy.flatMap(\.samples).first { $0.name == name && $0.labels == labels }?.value
    }

    /// Parses a text.
    package init(_ text: String) {
        if !text.isEmpty, !text.hasSuffix("\n") {
            problems.append("the text does not end with a line feed")
        }
        var closed = Set<String>()
        var current: String?
        var seenSeries = Set<String>()
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(line)
            if line.isEmpty { continue }
            func problem(_ text: String) { problems.append("line \(number + 1): \(text): \(line)") }
            if line.hasPrefix("#") {
                let words = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                guard words.count >= 3, words[0] == "#", words[1] == "HELP" || words[1] == "TYPE" else { continue }
                let name = words[2]
                guard Self.isMetricName(name) else {
                    problem("not a metric name")
                    continue
                }
                let index = familyIndex(name)
                if words[1] == "TYPE" {
                    let type = words.count > 3 ? words[3] : ""
                    if !["counter", "gauge", "histogram", "summary", "untyped"].contains(type) {
                        problem("unknown type")
                    }
                    if families[index].type != nil { problem("a second TYPE") }
                    if !families[index].samples.isEmpty { problem("TYPE after samples") }
                    families[index].type = type
                } else {
                    if families[index].help != nil { problem("a second HELP") }
                    let help = words.count > 3 ? words[3] : ""
                    if Self.unescape(help, quotes: false) == nil { problem("a bad escape in HELP") }
                    families[index].help = help
                }
                continue
            }
            guard let sample = Self.parseSample(line) else {
                problem("not a sample line")
                continue
            }
            let family = familyName(of: sample.name)
            if current != family {
                if let current {
                    closed.insert(current)
                }
                if closed.contains(family) { problem("the samples of \(family) are not together") }
                current = family
            }
            let series = sample.name + "|" + sample.labels.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined()
            if !seenSeries.insert(series).inserted { problem("a series twice") }
            families[familyIndex(family)].samples.append(sample)
        }
        for family in families where family.type == "histogram" {
            checkHistogram(family)
        }
    }

    private mutating func familyIndex(_ name: String) -> Int {
        if let index = families.firstIndex(where: { $0.name == name }) {
            return index
        }
        families.append(Family(name: name))
        return families.count - 1
    }

    /// The family a sample belongs to: a histogram's `_bucket`, `_sum` and `_count` belong to the histogram.
    private func familyName(of sample: String) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where sample.hasSuffix(suffix) {
            let base = String(sample.dropLast(suffix.count))
            if families.contains(where: { $0.name == base && ($0.type == "histogram" || $0.type == "summary") }) {
                return base
            }
        }
        return sample
    }

    private mutating func checkHistogram(_ family: Family) {
        var bySeries: [[String: String]: [Sample]] = [:]
        for sample in family.samples {
            var labels = sample.labels
            labels["le"] = nil
            bySeries[labels, default: []].append(sample)
        }
        for (labels, samples) in bySeries {
            let buckets = samples.filter { $0.name == family.name + "_bucket" }
            guard !buckets.isEmpty, buckets.allSatisfy({ $0.labels["le"] != nil }) else {
                problems.append("histogram \(family.name)\(labels): no _bucket lines with le")
                continue
            }
            let bounds = buckets.map { Self.parseValue($0.labels["le"] ?? "") ?? .nan }
            if bounds.last != .infinity { problems.append("histogram \(family.name)\(labels): no le=\"+Inf\" last") }
            if !zip(bounds, bounds.dropFirst()).allSatisfy(<) {
                problems.append("histogram \(family.name)\(labels): bounds not ascending")
            }
            if !zip(buckets, buckets.dropFirst()).allSatisfy({ $0.value <= $1.value }) {
                problems.append("histogram \(family.name)\(labels): buckets not cumulative")
            }
            let count = samples.first { $0.name == family.name + "_count" }
            if count == nil || samples.first(where: { $0.name == family.name + "_sum" }) == nil {
                problems.append("histogram \(family.name)\(labels): no _sum or _count")
            }
            if let count, count.value != buckets.last?.value {
                problems.append("histogram \(family.name)\(labels): _count differs from the +Inf bucket")
            }
        }
    }

    private static func parseSample(_ line: String) -> Sample? {
        var rest = Substring(line)
        let name = String(rest.prefix { $0 != "{" && $0 != " " })
        guard isMetricName(name) else { return nil }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let label = String(rest.prefix { $0 != "=" })
                guard isLabelName(label), labels[label] == nil else { return nil }
                rest = rest.dropFirst(label.count)
                guard rest.hasPrefix("=\"") else { return nil }
                rest = rest.dropFirst(2)
                var raw = ""
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        raw.append(character)
                        escaped = false
                    } else if character == "\\" {
                        raw.append(character)
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        raw.append(character)
                    }
                }
                guard let value = unescape(raw, quotes: true) else { return nil }
                labels[label] = value
                if rest.first == "," {
                    rest = rest.dropFirst()
                } else if rest.first != "}" {
                    return nil
                }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { return nil }
        let parts = rest.dropFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let value = parseValue(String(parts[0])) else { return nil }
        if parts.count == 2, Int64(parts[1]) == nil { return nil }
        return Sample(name: name, labels: labels, value: value)
    }

    /// A value as Go's `ParseFloat` reads it.
    static func parseValue(_ text: String) -> Double? {
        switch text {
        case "NaN": return .nan
        case "+Inf": return .infinity
        case "-Inf": return -.infinity
        default:
            guard !text.isEmpty, text.allSatisfy({ $0.isNumber || "+-.eE".contains($0) }) else { return nil }
            return Double(text)
        }
    }

    private static func unescape(_ text: String, quotes: Bool) -> String? {
        var result = ""
        var escaped = false
        for character in text {
            if escaped {
                switch character {
                case "\\": result.append("\\")
                case "n": result.append("\n")
                case "\"" where quotes: result.append("\"")
                default: return nil
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return escaped ? nil : result
    }

    static func isMetricName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII,
            first.properties.isAlphabetic || first == "_" || first == ":"
        else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == ":")
        }
    }

    static func isLabelName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic || first == "_"
        else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_")
        }
    }
}
