import Foundation
import IAPCommandLine
import IAPCore
import IAPStoragePostgres

/// `iap-bench store --database URL`: the PostgreSQL store's durable delivery rate (one process with 1 and W
/// writers, and two processes at once), for a hook (two commits a delivery) and for transactional fulfillment (one
/// commit), read against the limit measured in the same runs (the disk's WAL flush and the server's durable commit
/// rate); then its history page latency at each size.
enum PostgresStoreBenchmark {
    /// How a delivery is written.
    enum Kind: String, CaseIterable {
        /// What the pipeline writes around a hook: the insert of the entry already claimed, then the delivered
        /// mark (a compare-and-set): two commits, shared with the other writers' waiting at the same moment (the
        /// store's group commit, its default).
        case hook
        /// As ``hook``, with the store's group commit off: every insert and mark committed on its own.
        case hookCommitEach
        /// What the pipeline writes with transactional fulfillment: the entry inserted delivered and a wallet
        /// row granted, in one transaction: one commit.
        case transactional
        /// Transactional fulfillment with group commit: the deliveries waiting at the same moment in one transaction,
        /// each under a savepoint: one commit per group.
        case grouped

        var commits: Int { isHook ? 2 : 1 }

        /// Whether deliveries are written around a hook (no wallet).
        var isHook: Bool { self == .hook || self == .hookCommitEach }

        /// The store's configuration for deliveries of this kind.
        func configuration(url: String, schema: String, poolSize: Int) -> PostgresEntitlementStore.Configuration {
            var configuration = PostgresEntitlementStore.Configuration(url: url, schema: schema, poolSize: poolSize)
            if self == .hookCommitEach {
                configuration.groupCommit = nil
            }
            return configuration
        }

        var unit: String {
            switch self {
            case .hook:
                "deliveries per second: insert of the entry claimed (with its signed transaction) + delivered mark "
                    + "(compare-and-set), each committed: 2 commits, shared by the writes waiting at the same moment "
                    + "(the store's group commit)"
            case .hookCommitEach:
                "deliveries per second: as hook, the store's group commit off: 2 commits of its own"
            case .transactional:
                "deliveries per second: one transaction of the entry inserted delivered (with its signed "
                    + "transaction) and a wallet row upserted: 1 commit"
            case .grouped:
                "deliveries per second: as transactional, each delivery under a savepoint in the transaction of the "
                    + "deliveries waiting at the same moment (group commit): 1 commit per group"
            }
        }
    }

    /// What the command line asks for (of PostgreSQL).
    struct Options {
        let url: String
        let deliveries: Int
        let writers: Int
        let runs: Int
        let groupCommit: PostgresGroupCommit

        /// Reads the options; a password from `--database-password-file` is put in `PGPASSWORD`.
        init(_ parsed: Arguments) throws {
            // A password from --database-password-file reaches libpq, here and in the child processes, through
            // PGPASSWORD: never on a command line.
            if let passwordFile = try parsed.value("database-password-file") {
                setenv("PGPASSWORD", try SecretOption.password(passwordFile, option: "--database-password-file"), 1)
            }
            guard let url = try parsed.value("database") else {
                throw Arguments.UsageError(message: "--database URL is required")
            }
            let deliveries = try parsed.value("deliveries").map { Int($0) } ?? 2_000
            let writers = try parsed.value("writers").map { Int($0) } ?? 8
            let runs = try parsed.value("runs").map { Int($0) } ?? 3
            let groups = try parsed.value("groups").map { Int($0) } ?? max(1, (writers ?? 2) / 2)
            guard let deliveries, (2...1_000_000).contains(deliveries), let writers, (2...64).contains(writers),
                let runs, (1...100).contains(runs), let groups, (1...writers / 2).contains(groups)
            else {
                throw Arguments.UsageError(
                    message: "--deliveries 2...1000000, --writers 2...64, --runs 1...100, --groups 1...W/2"
                )
            }
            self.url = url
            self.deliveries = deliveries
            self.writers = writers
            self.runs = runs
            groupCommit = PostgresGroupCommit(concurrentGroups: groups)
        }
    }

    /// The delivery rates of one kind: one writer, W writers, two processes.
    struct Rates {
        var single: [Double] = []
        var parallel: [Double] = []
        var processes: [Double] = []
    }

    /// The figures of every run.
    struct Samples {
        var fsyncs: [Double] = []
        var commitsOne: [Double] = []
        var commitsMany: [Double] = []
        var rates: [Kind: Rates] = [:]
    }

    static func run(_ parsed: Arguments) async throws {
        let options = try Options(parsed)
        if let child = try parsed.value("child-deliveries") {
            try await runChild(child, parsed, options)
            return
        }
        if let scale = try parsed.value("scale") {
            try await PostgresScaleBenchmark.run(parsed, options, scale: scale)
            return
        }
        let sizes = try (parsed.value("transactions") ?? "100000").split(separator: ",").map {
            guard let size = Int($0), (1...10_000_000).contains(size) else {
                throw Arguments.UsageError(message: "--transactions takes sizes between 1 and 10000000")
            }
            return size
        }
        let server = try await serverSettings(url: options.url)
        let fsyncDirectory = try parsed.value("fsync-dir") ?? WALFlushCeiling.directory(near: server["data_directory"])
        Output.error("WAL flush: timing fdatasync in \(fsyncDirectory)")
        let pgTestFsync = WALFlushCeiling.pgTestFsync(in: fsyncDirectory)
        var samples = Samples()
        for run in 1...options.runs {
            try await measure(run: run, options, fsyncDirectory: fsyncDirectory, into: &samples)
        }
        var histories: [[String: Any]] = []
        for size in sizes {
            histories.append(try await history(size, runs: options.runs, url: options.url))
        }
        var flush: [String: Any] = [
            "fdatasyncPerSecond": Benchmark.figures(samples.fsyncs),
            "directory": fsyncDirectory,
            "method": "8 KiB written at the start of a 16 MiB file, then fdatasync, repeated for 1 s per run "
                + "(the pattern of a WAL flush)",
        ]
        if let pgTestFsync {
            flush["pgTestFsync"] = pgTestFsync
        }
        try Benchmark.emit(report(options, server: server, walFlush: flush, samples, histories: histories))
    }

    /// A child process of ``twoProcessRate(_:_:writers:url:_:)``: delivers `FROM:COUNT` into the parent's schema
    /// and prints when it began and ended.
    static func runChild(_ bounds: String, _ parsed: Arguments, _ options: Options) async throws {
        let bounds = bounds.split(separator: ":").compactMap { Int($0) }
        guard bounds.count == 2, let schema = try parsed.value("schema"),
            let kind = Kind(rawValue: try parsed.value("child-kind") ?? "hook")
        else {
            throw Arguments.UsageError(
                message:
                    "--child-deliveries FROM:COUNT goes with --schema and --child-kind hook|hookCommitEach|transactional|grouped"
            )
        }
        let window = try await deliver(
            kind,
            from: bounds[0],
            count: bounds[1],
            writers: options.writers,
            configuration: kind.configuration(url: options.url, schema: schema, poolSize: options.writers),
            groupCommit: options.groupCommit
        )
        try Benchmark.emit(["start": window.start, "end": window.end])
    }

    /// One run: the WAL flush rate, the durable commit ceiling, then each kind of delivery.
    static func measure(run: Int, _ options: Options, fsyncDirectory: String, into samples: inout Samples) async throws
    {
        let (url, deliveries, writers, groupCommit) = (
            options.url, options.deliveries, options.writers, options.groupCommit
        )
        Output.error("run \(run)/\(options.runs): WAL flush and commit ceiling")
        samples.fsyncs.append(try WALFlushCeiling.fdatasyncRate(in: fsyncDirectory, seconds: 1))
        let ceiling = try await commitRates(url: url, writers: writers)
        samples.commitsOne.append(ceiling.one)
        samples.commitsMany.append(ceiling.many)
        for kind in Kind.allCases {
            Output.error("run \(run)/\(options.runs): \(kind.rawValue) deliveries")
            var figures = samples.rates[kind] ?? Rates()
            if kind != .grouped {
                // One writer never waits for another, so its groups hold one delivery: the transactional figure.
                figures.single.append(try await rate(kind, deliveries, writers: 1, url: url, groupCommit))
            }
            figures.parallel.append(try await rate(kind, deliveries, writers: writers, url: url, groupCommit))
            figures.processes.append(
                try await twoProcessRate(kind, deliveries, writers: writers, url: url, groupCommit)
            )
            samples.rates[kind] = figures
        }
    }

    /// The server's settings, the limits, every kind of delivery against them, and the history latencies.
    static func report(
        _ options: Options,
        server: [String: String],
        walFlush: [String: Any],
        _ samples: Samples,
        histories: [[String: Any]]
    ) -> [String: Any] {
        [
            "benchmark": "store",
            "build": Benchmark.build,
            "store": "PostgresEntitlementStore",
            "cores": ProcessInfo.processInfo.activeProcessorCount,
            "loadAverage": loadAverage(),
            "runs": options.runs,
            "deliveriesPerRun": options.deliveries,
            "server": server,
            "walFlush": walFlush,
            "durableCommits": [
                "unit": "commits per second of a one-row update through the store's pool, each waiting for its "
                    + "WAL flush: the ceiling of one writer, and what W writers reach with the server's group commit",
                "oneWriter": Benchmark.figures(samples.commitsOne),
                "concurrentWriters": Benchmark.figures(samples.commitsMany).merging(["writers": options.writers]) {
                    $1
                },
            ],
            "durableDeliveries": deliveryFigures(options, samples),
            "target": ["durableDeliveriesPerSecondWith8Writers": 2_000],
            "history": histories,
        ]
    }

    /// Each kind's rates beside the ceiling the commit rate puts on it.
    static func deliveryFigures(_ options: Options, _ samples: Samples) -> [String: Any] {
        let one = Benchmark.median(samples.commitsOne)
        let many = Benchmark.median(samples.commitsMany)
        var deliveryFigures: [String: Any] = [:]
        for kind in Kind.allCases {
            let rates = samples.rates[kind] ?? Rates()
            var figure: [String: Any] = [
                "unit": kind.unit,
                "commitsPerDelivery": kind == .grouped ? "1 per group" : kind.commits,
                "concurrentWriters": Benchmark.figures(rates.parallel).merging([
                    "writers": options.writers, "ceiling": (many / Double(kind.commits)).rounded(),
                ]) { $1 },
                "twoProcesses": Benchmark.figures(rates.processes).merging(["writersPerProcess": options.writers / 2]) {
                    $1
                },
            ]
            if kind == .grouped {
                figure["groupCommit"] = [
                    "maximumDeliveries": options.groupCommit.maximumDeliveries,
                    "concurrentGroups": options.groupCommit.concurrentGroups ?? 0,
                ]
            } else {
                figure["oneWriter"] = Benchmark.figures(rates.single).merging([
                    "ceiling": (one / Double(kind.commits)).rounded()
                ]) { $1 }
            }
            deliveryFigures[kind.rawValue] = figure
        }
        return deliveryFigures
    }

    // MARK: Server and ceiling

    /// The settings that decide what a commit costs, as the server reports them.
    private static func serverSettings(url: String) async throws -> [String: String] {
        let store = try await PostgresEntitlementStore(
            configuration: .init(url: url, schema: freshSchema(), poolSize: 1)
        )
        let settings = try await store.serverSettings([
            "server_version", "fsync", "synchronous_commit", "wal_sync_method", "full_page_writes", "commit_delay",
            "commit_siblings", "wal_level", "wal_buffers", "shared_buffers", "max_wal_size", "data_directory",
        ])
        try await store.dropSchema()
        return settings
    }

    /// Durable commits per second with one writer and with `writers`, on a fresh schema.
    private static func commitRates(url: String, writers: Int) async throws -> (one: Double, many: Double) {
        let store = try await PostgresEntitlementStore(
            configuration: .init(url: url, schema: freshSchema(), poolSize: writers)
        )
        let one = try await store.commitRate(writers: 1, duration: .seconds(1))
        let many = try await store.commitRate(writers: writers, duration: .seconds(2))
        try await store.dropSchema()
        return (one, many)
    }

    private static func loadAverage() -> [Double] {
        var loads = [Double](repeating: 0, count: 3)
        let count = getloadavg(&loads, 3)
        return count == 3 ? loads.map { ($0 * 100).rounded() / 100 } : []
    }

    // MARK: Deliveries

    private static func freshSchema() -> String {
        "iap_bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    /// Creates a schema's ledger and, for transactional deliveries, its wallet table.
    private static func prepare(_ kind: Kind, configuration: PostgresEntitlementStore.Configuration) async throws {
        let store = try await PostgresEntitlementStore(configuration: configuration)
        if !kind.isHook {
            try await store.executeForBenchmark(BenchmarkWallet.createTable)
        }
        await store.close()
    }

    /// Deliveries per second into a fresh schema from this process.
    private static func rate(
        _ kind: Kind,
        _ count: Int,
        writers: Int,
        url: String,
        _ groupCommit: PostgresGroupCommit
    ) async throws -> Double {
        let configuration = kind.configuration(url: url, schema: freshSchema(), poolSize: writers)
        try await prepare(kind, configuration: configuration)
        let window = try await deliver(
            kind,
            from: 0,
            count: count,
            writers: writers,
            configuration: configuration,
            groupCommit: groupCommit
        )
        try await check(kind, count, configuration: configuration)
        return Double(count) / (Double(max(window.end - window.start, 1)) / 1_000)
    }

    /// Deliveries per second into a fresh schema from two processes started together.
    private static func twoProcessRate(
        _ kind: Kind,
        _ count: Int,
        writers: Int,
        url: String,
        _ groupCommit: PostgresGroupCommit
    ) async throws -> Double {
        let schema = freshSchema()
        let configuration = kind.configuration(url: url, schema: schema, poolSize: 2)
        // Create the schema first, so the children measure deliveries rather than a migration.
        try await prepare(kind, configuration: configuration)
        let half = count / 2
        let executable = try ChildProcess.ownExecutable()
        let children = try [(0, half), (half, count - half)].map { from, share in
            let child = Process()
            child.executableURL = executable
            child.arguments = [
                "store", "--database", url, "--schema", schema, "--writers", String(max(2, writers / 2)),
                "--child-deliveries", "\(from):\(share)", "--child-kind", kind.rawValue,
                "--groups", String(max(1, (groupCommit.concurrentGroups ?? 2) / 2)),
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
        try await check(kind, count, configuration: configuration)
        let span = (windows.map(\.end).max() ?? 0) - (windows.map(\.start).min() ?? 0)
        return Double(count) / (Double(max(span, 1)) / 1_000)
    }

    /// Delivers transactions `from..<from+count` with `writers` tasks; returns when it began and ended (ms).
    static func deliver(
        _ kind: Kind,
        from: Int,
        count: Int,
        writers: Int,
        configuration: PostgresEntitlementStore.Configuration,
        groupCommit: PostgresGroupCommit
    ) async throws -> (start: Int64, end: Int64) {
        let store = try await PostgresEntitlementStore(configuration: configuration)
        let ledger =
            kind == .grouped
            ? try PostgresTransactionalFulfillmentStore(store: store, hook: BenchmarkWallet(), groupCommit: groupCommit)
            : PostgresTransactionalFulfillmentStore(store: store, hook: BenchmarkWallet())
        // A server receives each signed transaction from Apple: they are made before the clock starts (up to
        // 100000 of them, 6 KB each; beyond, each is made when its delivery starts).
        let signed =
            count <= 100_000
            ? try (0..<count).map { try signedTransaction(from + $0) } : nil
        let clock = SystemClock()
        let began = ContinuousClock.now
        let start = clock.now.millisecondsSince1970
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var index = writer
                    while index < count {
                        let jws = try signed?[index] ?? signedTransaction(from + index)
                        switch kind {
                        case .hook, .hookCommitEach: try await deliverClaimed(from + index, jws, to: store)
                        case .transactional, .grouped: try await deliverTransactionally(from + index, jws, to: ledger)
                        }
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

    /// What the pipeline writes around a hook for a new purchase: the entry inserted claimed, then marked delivered.
    /// The signed transaction of delivery `index`, of Apple's size.
    private static func signedTransaction(_ index: Int) throws -> String {
        try StoreBenchmark.signedTransaction(of: StoreBenchmark.entry(index, users: 1_000).transaction)
    }

    private static func deliverClaimed(
        _ index: Int,
        _ signedTransaction: String,
        to store: PostgresEntitlementStore
    ) async throws {
        var claimed = StoreBenchmark.entry(index, users: 1_000)
        claimed.deliveryAttempts = 1
        claimed.nextAttemptAt = StoreBenchmark.epoch.addingTimeInterval(120)
        claimed.grantAttempted = true
        guard case .inserted(let recorded) = try await store.insert(claimed, signedTransaction: signedTransaction)
        else {
            throw IAPError(.internalError, "transaction \(index) was already recorded")
        }
        var delivered = recorded
        delivered.deliveryState = .delivered
        delivered.nextAttemptAt = nil
        delivered.deliveryAttempts = 0
        delivered.deliveredAt = StoreBenchmark.epoch
        delivered.grantedUnits = 100
        guard try await store.replace(delivered, ifRevision: recorded.revision) else {
            throw IAPError(.internalError, "delivery of \(index) lost its revision")
        }
    }

    /// What the pipeline writes with transactional fulfillment: the entry inserted delivered, the wallet granted.
    private static func deliverTransactionally(
        _ index: Int,
        _ signedTransaction: String,
        to ledger: PostgresTransactionalFulfillmentStore
    ) async throws {
        var delivered = StoreBenchmark.entry(index, users: 1_000)
        delivered.deliveryState = .delivered
        delivered.deliveredAt = StoreBenchmark.epoch
        delivered.grantAttempted = true
        delivered.grantedUnits = 100
        let delivery = Delivery(
            action: .grant,
            idempotencyKey: delivered.transactionId,
            transactionId: delivered.transactionId,
            userId: delivered.userId,
            product: BenchmarkWallet.product,
            transaction: delivered.transaction,
            units: 100,
            orderId: delivered.orderId
        )
        guard
            case .inserted = try await ledger.insert(
                delivered,
                signedTransaction: signedTransaction,
                fulfilling: delivery
            )
        else {
            throw IAPError(.internalError, "transaction \(index) was already recorded")
        }
    }

    /// Checks that every delivery landed (and, transactionally, every grant), then drops the schema.
    private static func check(
        _ kind: Kind,
        _ count: Int,
        configuration: PostgresEntitlementStore.Configuration
    ) async throws {
        let store = try await PostgresEntitlementStore(configuration: configuration)
        let statistics = try await store.statistics()
        let granted =
            !kind.isHook ? (try await store.queryForBenchmark(BenchmarkWallet.total).first ?? nil) : nil
        try await store.dropSchema()
        guard statistics.delivered == count, statistics.transactions == count else {
            throw IAPError(.internalError, "delivered \(statistics.delivered) of \(count)")
        }
        if !kind.isHook, granted != String(100 * count) {
            throw IAPError(.internalError, "the wallet holds \(granted ?? "nothing") coins for \(count) deliveries")
        }
    }

    // MARK: History

    /// History page latencies at `size` transactions.
    private static func history(_ size: Int, runs: Int, url: String) async throws -> [String: Any] {
        let store = try await build(size, url: url)
        var first: [Double] = []
        var deep: [Double] = []
        var firstP99: [Double] = []
        var deepP99: [Double] = []
        for run in 1...runs {
            Output.error("history \(size) run \(run)/\(runs)")
            let statistics = try await store.statistics()
            let figures = try await StoreBenchmark.historyLatency(store, transactions: statistics.transactions)
            first.append(figures.first["median"] ?? 0)
            firstP99.append(figures.first["p99"] ?? 0)
            deep.append(figures.deep["median"] ?? 0)
            deepP99.append(figures.deep["p99"] ?? 0)
        }
        await store.close()
        return [
            "transactions": size,
            "firstPageMilliseconds": [
                "median": Benchmark.median(first), "p99": Benchmark.median(firstP99), "samples": first,
            ],
            "deepPageMilliseconds": [
                "median": Benchmark.median(deep), "p99": Benchmark.median(deepP99), "samples": deep,
            ],
        ]
    }

    /// The store of schema `iap_bench_<size>`, loaded with `size` delivered transactions unless it holds them.
    private static func build(_ size: Int, url: String) async throws -> PostgresEntitlementStore {
        let configuration = PostgresEntitlementStore.Configuration(url: url, schema: "iap_bench_\(size)", poolSize: 4)
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
}
