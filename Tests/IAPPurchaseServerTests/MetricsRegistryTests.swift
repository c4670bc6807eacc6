import IAPCore
import IAPPurchaseServer
import IAPTestSupport
import Testing

@Suite("Metrics registry")
struct MetricsRegistryTests {
    @Test func writesTheTextFormatExactly() throws {
        let registry = MetricsRegistry()
        let requests = try registry.counter("app_requests_total", help: "Requests answered.", labels: ["status"])
        let depth = try registry.gauge("app_queue_depth", help: "Work waiting.")
        let latency = try registry.histogram(
            "app_request_duration_seconds",
            help: "Time to answer.",
            labels: ["route"],
            buckets: [0.1, 1]
        )
        requests.increment(labels: ["500"])
        requests.increment(by: 2, labels: ["200"])
        depth.set(7)
        depth.add(-2)
        latency.observe(0.05, labels: ["/a"])
        latency.observe(0.5, labels: ["/a"])
        latency.observe(3, labels: ["/a"])

        #expect(
            registry.exposition() == """
                # HELP app_requests_total Requests answered.
                # TYPE app_requests_total counter
                app_requests_total{status="200"} 2
                app_requests_total{status="500"} 1
                # HELP app_queue_depth Work waiting.
                # TYPE app_queue_depth gauge
                app_queue_depth 5
                # HELP app_request_duration_seconds Time to answer.
                # TYPE app_request_duration_seconds histogram
                app_request_duration_seconds_bucket{route="/a",le="0.1"} 1
                app_request_duration_seconds_bucket{route="/a",le="1"} 2
                app_request_duration_seconds_bucket{route="/a",le="+Inf"} 3
                app_request_duration_seconds_sum{route="/a"} 3.55
                app_request_duration_seconds_count{route="/a"} 3

                """
        )
        #expect(MetricsRegistry.contentType == "text/plain; version=0.0.4; charset=utf-8")
    }

    @Test func labelValuesAndHelpAreEscapedAsTheFormatAsks() throws {
        let registry = MetricsRegistry()
        let counter = try registry.counter("odd_total", help: "A \\ backslash\nand a line.", labels: ["value"])
        counter.increment(labels: ["quote \" backslash \\ line\nend"])
        let text = registry.exposition()

        #expect(text.contains(#"# HELP odd_total A \\ backslash\nand a line."#))
        #expect(text.contains(#"odd_total{value="quote \" backslash \\ line\nend"} 1"#))
        let parsed = PrometheusExposition(text)
        #expect(parsed.problems.isEmpty, "\(parsed.problems)")
        #expect(parsed.value("odd_total", ["value": "quote \" backslash \\ line\nend"]) == 1)
    }

    @Test func aBusyRegistryStaysValidAndCountsEveryObservation() async throws {
        let registry = MetricsRegistry()
        let counter = try registry.counter("events_total", help: "Events.", labels: ["kind"])
        let histogram = try registry.histogram("work_seconds", help: "Work.", labels: ["kind"])
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<1_000 {
                        counter.increment(labels: ["k\(task % 3)"])
                        histogram.observe(Double(index) / 100, labels: ["k\(task % 3)"])
                        _ = registry.exposition()
                    }
                }
            }
        }
        let parsed = PrometheusExposition(registry.exposition())
        #expect(parsed.problems.isEmpty, "\(parsed.problems)")
        let total = (0..<3).compactMap { parsed.value("events_total", ["kind": "k\($0)"]) }.reduce(0, +)
        #expect(total == 8_000)
        #expect((0..<3).map { histogram.count(labels: ["k\($0)"]) }.reduce(0, +) == 8_000)
        #expect(parsed.value("work_seconds_bucket", ["kind": "k0", "le": "+Inf"]) == 3_000)
    }

    @Test func valuesAreWrittenAsGoReadsThem() throws {
        let registry = MetricsRegistry()
        let gauge = try registry.gauge("g", help: "G.", labels: ["case"])
        gauge.set(.infinity, labels: ["inf"])
        gauge.set(-.infinity, labels: ["minus"])
        gauge.set(.nan, labels: ["nan"])
        gauge.set(0.000001, labels: ["small"])
        gauge.set(12_345_678_901, labels: ["large"])
        let text = registry.exposition()
        #expect(text.contains(#"g{case="inf"} +Inf"#))
        #expect(text.contains(#"g{case="minus"} -Inf"#))
        #expect(text.contains(#"g{case="nan"} NaN"#))
        #expect(text.contains(#"g{case="large"} 12345678901"#))
        let parsed = PrometheusExposition(text)
        #expect(parsed.problems.isEmpty, "\(parsed.problems)")
        #expect(parsed.value("g", ["case": "small"]) == 0.000001)
    }

    @Test func aCounterNeverGoesDown() throws {
        let counter = try MetricsRegistry().counter("c_total", help: "C.")
        counter.increment(by: 3)
        counter.increment(by: -1)
        counter.increment(by: .nan)
        #expect(counter.value() == 3)
    }

    @Test func badNamesAndBucketsAreRefused() throws {
        let registry = MetricsRegistry()
        _ = try registry.histogram("taken_seconds", help: "Taken.")
        let attempts: [(String, () throws -> Void)] = [
            ("a name starting with a digit", { _ = try registry.counter("1bad", help: "") }),
            ("a dash", { _ = try registry.counter("bad-name", help: "") }),
            ("a label with a dash", { _ = try registry.counter("ok_total", help: "", labels: ["bad-label"]) }),
            ("a reserved label", { _ = try registry.counter("ok2_total", help: "", labels: ["__name"]) }),
            ("a repeated label", { _ = try registry.counter("ok3_total", help: "", labels: ["a", "a"]) }),
            ("le on a histogram", { _ = try registry.histogram("h1", help: "", labels: ["le"]) }),
            ("descending buckets", { _ = try registry.histogram("h2", help: "", buckets: [1, 0.5]) }),
            ("no buckets", { _ = try registry.histogram("h3", help: "", buckets: []) }),
            ("an infinite bucket", { _ = try registry.histogram("h4", help: "", buckets: [1, .infinity]) }),
            ("a name taken", { _ = try registry.gauge("taken_seconds", help: "") }),
            ("a histogram's sample name", { _ = try registry.counter("taken_seconds_count", help: "") }),
        ]
        for (what, attempt) in attempts {
            #expect(throws: IAPError.self, "\(what) was accepted") { try attempt() }
        }
        #expect(PrometheusExposition(registry.exposition()).problems.isEmpty)
    }
}
