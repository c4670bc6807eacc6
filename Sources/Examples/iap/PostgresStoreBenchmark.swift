import Foundation
import IAPCore
import IAPStoragePostgres

/// `iap bench store --database URL`: the PostgreSQL store's durable delivery rate (one process with 1 and W
/// writers, and two processes at once) and its history page latency at each size.
enum PostgresStoreBenchmark {
    /// The server: its URL and, kept apart from it, its password's file.
    struct Server {
        let url: String
        let passwordFile: String?
        let password: String?

        func configuration(schema: String, poolSize: Int) -> PostgresEntitlementStore.Configuration {
            .init(url: url, schema: schema, poolSize: poolSize, password: password)
        }

        /// The arguments that name it to a child process (the password's file, never the password).
        var arguments: [String] {
            ["--database", url] + (passwordFile.map { ["--database-password-file", $0] } ?? [])
        }
    }

    static func run(_ parsed: Arguments) async throws {
        guard let url = try parsed.value("database") else {
            throw Arguments.UsageError(message: "--database URL is required")
        }
        let passwordFile = try parsed.value("database-password-file")
        let server = Server(
            url: url,
            passwordFile: passwordFile,
            password: try passwordFile.map(CommandLedger.readPassword)
        )
        let deliveries = try parsed.value("deliveries").map { Int($0) } ?? 2_000
        let writers = try parsed.value("writers").map { Int($0) } ?? 8
        let runs = try parsed.value("runs").map { Int($0) } ?? 3
        guard let deliveries, (2...1_000_000).contains(deliveries), let writers, (2...64).contains(writers),
            let runs, (1...100).contains(runs)
        else {
            throw Arguments.UsageError(message: "--deliveries 2...1000000, --writers 2...64, --runs 1...100")
        }
        if let child = try parsed.value("child-deliveries") {
            let bounds = child.split(separator: ":").compactMap { Int($0) }
            guard bounds.count == 2, let schema = try parsed.value("schema") else {
                throw Arguments.UsageError(message: "--child-deliveries FROM:COUNT goes with --schema")
            }
            let window = try await deliver(
                from: bounds[0],
                count: bounds[1],
                writers: writers,
                configuration: server.configuration(schema: schema, poolSize: writers)
            )
            try StoreBenchmark.emit(["start": window.start, "end": window.end])
            return
        }
        let sizes = try (parsed.value("transactions") ?? "100000").split(separator: ",").map {
            guard let size = Int($0), (1...10_000_000).contains(size) else {
                throw Arguments.UsageError(message: "--transactions takes sizes between 1 and 10000000")
            }
            return size
        }

        var single: [Double] = []
        var parallel: [Double] = []
        var processes: [Double] = []
        for run in 1...runs {
            Output.error("deliveries run \(run)/\(runs)")
            single.append(try await rate(deliveries, writers: 1, server: server))
            parallel.append(try await rate(deliveries, writers: writers, server: server))
            processes.append(try await twoProcessRate(deliveries, writers: writers, server: server))
        }
        var histories: [[String: Any]] = []
        for size in sizes {
            let store = try await build(size, server: server)
            var first: [Double] = []
            var deep: [Double] = []
            var firstP99: [Double] = []
            var deepP99: [Double] = []
            for run in 1...runs {
                Output.error("history \(size) run \(run)/\(runs)")
                let figures = try await historyLatency(store)
                first.append(figures.first["median"] ?? 0)
                firstP99.append(figures.first["p99"] ?? 0)
                deep.append(figures.deep["median"] ?? 0)
                deepP99.append(figures.deep["p99"] ?? 0)
            }
            await store.close()
            histories.append([
                "transactions": size,
                "firstPageMilliseconds": [
                    "median": BenchCommand.median(first), "p99": BenchCommand.median(firstP99), "samples": first,
                ],
                "deepPageMilliseconds": [
                    "median": BenchCommand.median(deep), "p99": BenchCommand.median(deepP99), "samples": deep,
                ],
            ])
        }
        func figures(_ samples: [Double]) -> [String: Any] {
            ["perSecond": BenchCommand.median(samples).rounded(), "samples": samples.map { $0.rounded() }]
        }
        try StoreBenchmark.emit([
            "benchmark": "store",
            "build": BenchCommand.isDebugBuild ? "debug" : "release",
            "store": "PostgresEntitlementStore",
            "cores": ProcessInfo.processInfo.activeProcessorCount,
            "runs": runs,
            "durableDeliveries": [
                "unit": "deliveries per second (insert + claim replace + delivered replace, each committed), median",
                "deliveriesPerRun": deliveries,
                "oneWriter": figures(single),
                "concurrentWriters": figures(parallel).merging(["writers": writers]) { $1 },
                "twoProcesses": figures(processes).merging(["writersPerProcess": writers / 2]) { $1 },
            ],
            "history": histories,
        ])
    }

    // MARK: Deliveries

    private static func freshSchema() -> String {
        "iap_bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    /// Deliveries per second into a fresh schema from this process.
    private static func rate(_ count: Int, writers: Int, server: Server) async throws -> Double {
        let configuration = server.configuration(schema: freshSchema(), poolSize: writers)
        let window = try await deliver(from: 0, count: count, writers: writers, configuration: configuration)
        try await check(count, configuration: configuration)
        return Double(count) / (Double(window.end - window.start) / 1_000)
    }

    /// Deliveries per second into a fresh schema from two processes started together.
    private static func twoProcessRate(_ count: Int, writers: Int, server: Server) async throws -> Double {
        let schema = freshSchema()
        let configuration = server.configuration(schema: schema, poolSize: 2)
        // Create the schema first, so the children measure deliveries rather than a migration.
        await (try PostgresEntitlementStore(configuration: configuration)).close()
        let half = count / 2
        let executable = URL(filePath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        let children = try [(0, half), (half, count - half)].map { from, share in
            let child = Process()
            child.executableURL = executable
            child.arguments =
                ["bench", "store"] + server.arguments
                + [
                    "--schema", schema, "--writers", String(max(2, writers / 2)), "--child-deliveries",
                    "\(from):\(share)",
                ]
            let output = Pipe()
            child.standardOutput = output
            try child.run()
            return (child, output)
        }
        var windows: [(start: Int64, end: Int64)] = []
        for (child, output) in children {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            child.waitUntilExit()
            guard child.terminationStatus == 0,
                let figures = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                let start = (figures["start"] as? NSNumber)?.int64Value,
                let end = (figures["end"] as? NSNumber)?.int64Value
            else {
                throw IAPError(.internalError, "a delivering child failed with status \(child.terminationStatus)")
            }
            windows.append((start, end))
        }
        try await check(count, configuration: configuration)
        let span = (windows.map(\.end).max() ?? 0) - (windows.map(\.start).min() ?? 0)
        return Double(count) / (Double(max(span, 1)) / 1_000)
    }

    /// Delivers transactions `from..<from+count` with `writers` tasks; returns when it began and ended (ms).
    private static func deliver(
        from: Int,
        count: Int,
        writers: Int,
        configuration: PostgresEntitlementStore.Configuration
    ) async throws -> (start: Int64, end: Int64) {
        let store = try await PostgresEntitlementStore(configuration: configuration)
        let clock = SystemClock()
        let began = ContinuousClock.now
        let start = clock.now.millisecondsSince1970
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var index = writer
                    while index < count {
                        try await StoreBenchmark.deliver(from + index, to: store)
                        index += writers
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = Int64(((ContinuousClock.now - began).timeInterval * 1_000).rounded())
        await store.close()
        return (start, start + elapsed)
    }

    /// Checks that every delivery landed, then drops the schema.
    private static func check(_ count: Int, configuration: PostgresEntitlementStore.Configuration) async throws {
        let store = try await PostgresEntitlementStore(configuration: configuration)
        let statistics = try await store.statistics()
        try await store.dropSchema()
        guard statistics.delivered == count, statistics.transactions == count else {
            throw IAPError(.internalError, "delivered \(statistics.delivered) of \(count)")
        }
    }

    // MARK: History

    /// The store of schema `iap_bench_<size>`, loaded with `size` delivered transactions unless it holds them.
    private static func build(_ size: Int, server: Server) async throws -> PostgresEntitlementStore {
        let configuration = server.configuration(schema: "iap_bench_\(size)", poolSize: 4)
        var store = try await PostgresEntitlementStore(configuration: configuration)
        if try await store.statistics().transactions == size {
            return store
        }
        try await store.dropSchema()
        store = try await PostgresEntitlementStore(configuration: configuration)
        Output.error("loading \(size) transactions into schema iap_bench_\(size)")
        let users = max(size / 10, 1)
        let batch = 2_000
        let loader = store
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<2 {
                group.addTask {
                    var first = lane * batch
                    while first < size {
                        let entries = (first..<min(size, first + batch)).map { index in
                            var delivered = StoreBenchmark.entry(index, users: users)
                            delivered.deliveryState = .delivered
                            delivered.deliveryAttempts = 1
                            delivered.deliveredAt = StoreBenchmark.epoch
                            return delivered
                        }
                        _ = try await loader.load(entries)
                        first += 2 * batch
                    }
                }
            }
            try await group.waitForAll()
        }
        return store
    }

    /// History page latencies in milliseconds: 1000 random users' first page, 1000 deep pages of large users.
    private static func historyLatency(_ store: PostgresEntitlementStore) async throws
        -> (first: [String: Double], deep: [String: Double])
    {
        let statistics = try await store.statistics()
        return try await StoreBenchmark.historyLatency(store, transactions: statistics.transactions)
    }
}
