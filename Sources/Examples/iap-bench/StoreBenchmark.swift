import Foundation
import IAPCommandLine
import IAPCore
import IAPStorageFile

/// `iap-bench store`: the file store's durable write rate, open time, memory and history latency.
enum StoreBenchmark {
    static let spec = CommandSpec(
        program: "iap-bench",
        name: "store",
        summary: "the file store (or PostgreSQL): deliveries per second, open time, memory, page latency",
        synopsis: [
            "[--transactions N,N...] [--deliveries N] [--writers W] [--runs N] [--dir PATH]",
            "--open-only DIR",
            "--database URL [--database-password-file FILE] [--transactions N,N...] [--deliveries N] [--writers W]",
            "  [--runs N] [--groups G] [--fsync-dir DIR]",
        ],
        discussion: """
            The file store: durable deliveries per second (as the pipeline writes a new purchase: the entry
            inserted already claimed, with its signed transaction, then marked delivered; fsync on) with one writer and W concurrent writers, on a fresh store; then, for each size N
            (default 100000,1000000), a store of N delivered transactions built once (under --dir, kept for reuse)
            and opened in a child process --runs times: seconds to open, peak resident memory (VmHWM), the latency
            of history pages (1000 random users' first page; a deep page of a large user), and the bytes on disk.
            Each transaction carries a signed transaction of Apple's size (Apple's certificate chain, a
            signature-sized tail; not verifiable).

            With --database, the same on PostgreSQL, each run on fresh schemas: first the limit, the disk's WAL
            flushes per second (8 KiB and fdatasync in --fsync-dir, by default beside the server's data directory
            when it is on this machine; and pg_test_fsync's figures once, when installed) and the durable commits
            per second of a one-row update through the store's pool with one writer and with W; then deliveries as
            the pipeline writes them around a hook (the entry inserted claimed, then marked delivered: two commits)
            and with transactional fulfillment (the entry inserted delivered and a wallet row granted in one
            transaction: one commit), each with one writer, W writers (a pool of W connections) and two processes
            of W/2 writers started together; every entry is inserted with a signed transaction of Apple's size.
            Then transactional fulfillment with group commit (the deliveries waiting at the same moment in one
            transaction, each under a savepoint; G group transactions open at once, G/2 in each of the two
            processes), with W writers and two processes. Then, for each N (default 100000), the history page latency on N
            transactions loaded once into the schema iap_bench_<N>. Prints JSON with the server's settings
            (fsync, synchronous_commit, wal_sync_method, commit_delay, ...) and the load average; build with
            -c release for meaningful figures.
            """,
        options: [
            .value("transactions", "N,N...", "the store sizes to measure, each 1 to 10000000"),
            .value("deliveries", "N", "deliveries per run (default 2000)"),
            .value("writers", "W", "concurrent writers (default 8; 2 to 64 with --database)"),
            .value("runs", "N", "runs, 1 to 100 (default 3)"),
            .value("dir", "PATH", "where the file stores are built and kept (default a temporary directory)"),
            .value("open-only", "DIR", "open DIR in this process and print its figures (what the parent runs)"),
            .value(
                "database",
                "URL",
                "measure PostgreSQL at this postgres:// URL instead of the file store (keep the password out of it: "
                    + "every local user can read a command line)"
            ),
            .value(
                "database-password-file",
                "FILE",
                "read the PostgreSQL password from FILE (its first line; mode 0600), rather than from the URL; "
                    + "PGPASSWORD and ~/.pgpass (PGPASSFILE) work too"
            ),
            .value(
                "fsync-dir",
                "DIR",
                "where --database times the disk's flushes (default: beside the data directory)"
            ),
            .value("schema", "NAME", "the schema a --child-deliveries process writes to (set by the parent)"),
            .value("child-deliveries", "FROM:COUNT", "deliver COUNT from FROM as a child process (set by the parent)"),
            .value(
                "groups",
                "G",
                "with --database, group transactions open at once for the grouped deliveries (1 to W/2, default W/2)"
            ),
            .value(
                "child-kind",
                "KIND",
                "hook, transactional or grouped deliveries in a child process (set by the parent)"
            ),
        ],
        examples: [
            "swift run -c release iap-bench store --transactions 100000 --runs 1",
            "PGPASSWORD=iap swift run -c release iap-bench store --database postgres://iap@127.0.0.1:54329/postgres",
        ]
    )

    /// What the command line asks for (of the file store).
    struct Options {
        let sizes: [Int]
        let deliveries: Int
        let writers: Int
        let runs: Int
        /// Where the stores are built and kept.
        let base: URL

        init(_ arguments: Arguments) throws {
            sizes = try (arguments.value("transactions") ?? "100000,1000000").split(separator: ",").map {
                guard let size = Int($0), (1...10_000_000).contains(size) else {
                    throw Arguments.UsageError(message: "--transactions takes sizes between 1 and 10000000")
                }
                return size
            }
            let deliveries = try arguments.value("deliveries").map { Int($0) } ?? 2_000
            let writers = try arguments.value("writers").map { Int($0) } ?? 8
            let runs = try arguments.value("runs").map { Int($0) } ?? 3
            guard let deliveries, (1...1_000_000).contains(deliveries), let writers, (1...256).contains(writers),
                let runs, (1...100).contains(runs)
            else {
                throw Arguments.UsageError(message: "--deliveries 1...1000000, --writers 1...256, --runs 1...100")
            }
            self.deliveries = deliveries
            self.writers = writers
            self.runs = runs
            base =
                try arguments.value("dir").map { URL(filePath: $0) }
                ?? FileManager.default.temporaryDirectory.appending(path: "iap-bench-store")
        }
    }

    static func run(_ arguments: [String]) async {
        let parsed = spec.parse(arguments)
        do {
            try parsed.noPositionals()
            if try parsed.value("database") != nil {
                try await PostgresStoreBenchmark.run(parsed)
                terminate(.success)
            }
            if let directory = try parsed.value("open-only") {
                let report = try await openOnly(URL(filePath: directory))
                try Benchmark.emit(report)
                terminate(.success)
            }
            let options = try Options(parsed)
            try FileManager.default.createDirectory(at: options.base, withIntermediateDirectories: true)
            let (single, parallel) = try await measureDeliveries(options)
            var opens: [[String: Any]] = []
            for size in options.sizes {
                opens.append(try await measureOpen(size, options))
            }
            try Benchmark.emit(report(options, single: single, parallel: parallel, opens: opens))
            terminate(.success)
        } catch let error as Arguments.UsageError {
            spec.fail(error)
        } catch {
            Output.error("error: \(error)")
            terminate(.rejected)
        }
    }

    /// The durable delivery rates of every run, with one writer and with W.
    static func measureDeliveries(_ options: Options) async throws -> (single: [Double], parallel: [Double]) {
        var single: [Double] = []
        var parallel: [Double] = []
        for run in 1...options.runs {
            Output.error("deliveries run \(run)/\(options.runs)")
            single.append(try await deliveryRate(options.deliveries, writers: 1, in: options.base))
            parallel.append(try await deliveryRate(options.deliveries, writers: options.writers, in: options.base))
        }
        return (single, parallel)
    }

    /// A store of `size` transactions, built unless it is, opened in a child process every run.
    static func measureOpen(_ size: Int, _ options: Options) async throws -> [String: Any] {
        let directory = options.base.appending(path: "ledger-\(size)")
        try await build(size, in: directory)
        var samples: [[String: Any]] = []
        for run in 1...options.runs {
            Output.error("open \(size) run \(run)/\(options.runs)")
            samples.append(try openInChild(directory))
        }
        return summarize(size: size, samples)
    }

    /// The delivery rates, the figures of each size, and the targets.
    static func report(_ options: Options, single: [Double], parallel: [Double], opens: [[String: Any]])
        -> [String: Any]
    {
        [
            "benchmark": "store",
            "build": Benchmark.build,
            "store": "FileEntitlementStore",
            "cores": ProcessInfo.processInfo.activeProcessorCount,
            "runs": options.runs,
            "durableDeliveries": [
                "unit":
                    "deliveries per second (insert of the entry claimed, with its signed transaction, + delivered replace, each fsynced), median",
                "deliveriesPerRun": options.deliveries,
                "oneWriter": Benchmark.figures(single),
                "concurrentWriters": Benchmark.figures(parallel).merging(["writers": options.writers]) { $1 },
            ],
            "open": opens,
            "targets": [
                "durableDeliveriesPerSecondWith8Writers": 5_000,
                "openSecondsAt1M": 5,
                "peakMemoryMBAt1M": 512,
                "historyPageMilliseconds": 1,
            ],
        ]
    }

    // MARK: Durable deliveries

    /// Deliveries per second into a fresh store, as the delivery pipeline writes them.
    private static func deliveryRate(_ count: Int, writers: Int, in base: URL) async throws -> Double {
        let directory = base.appending(path: "deliveries-\(writers)-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try FileEntitlementStore(directory: directory)
        let began = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var index = writer
                    while index < count {
                        try await deliver(index, to: store)
                        index += writers
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = (ContinuousClock.now - began).timeInterval
        let statistics = try await store.statistics()
        await store.close()
        guard statistics.delivered == count else {
            throw IAPError(.internalError, "delivered \(statistics.delivered) of \(count)")
        }
        return Double(count) / elapsed
    }

    /// One delivery as the pipeline writes a new purchase: the entry inserted already claimed by its deliverer
    /// (one attempt, the claim's expiry in `nextAttemptAt`) with its signed transaction, then marked delivered by a
    /// compare-and-set: two durable writes.
    static func deliver(_ index: Int, to store: some EntitlementStore) async throws {
        var claimed = entry(index, users: 1_000)
        claimed.deliveryAttempts = 1
        claimed.nextAttemptAt = epoch.addingTimeInterval(60)
        guard
            case .inserted(let recorded) = try await store.insert(
                claimed,
                signedTransaction: signedTransaction(of: claimed.transaction)
            )
        else {
            throw IAPError(.internalError, "transaction \(index) was already recorded")
        }
        var delivered = recorded
        delivered.deliveryState = .delivered
        delivered.nextAttemptAt = nil
        delivered.deliveredAt = epoch
        guard try await store.replace(delivered, ifRevision: recorded.revision) else {
            throw IAPError(.internalError, "delivery of \(index) lost its revision")
        }
    }

    // MARK: Open

    /// Builds a store of `size` delivered transactions, unless `directory` already holds one.
    private static func build(_ size: Int, in directory: URL) async throws {
        if FileManager.default.fileExists(atPath: directory.appending(path: "BUILT").path(percentEncoded: false)) {
            return
        }
        try? FileManager.default.removeItem(at: directory)
        Output.error("building a store of \(size) transactions in \(directory.path(percentEncoded: false))")
        // Setup only: the measured figures never come from a store without fsync.
        let store = try FileEntitlementStore(
            directory: directory,
            options: .init(compactionThreshold: nil, fsync: false)
        )
        let users = max(size / 10, 1)
        for index in 0..<size {
            var delivered = entry(index, users: users)
            delivered.deliveryState = .delivered
            delivered.deliveryAttempts = 1
            delivered.deliveredAt = epoch
            _ = try await store.insert(delivered, signedTransaction: signedTransaction(of: delivered.transaction))
        }
        try await store.compact()
        await store.close()
        try Data().write(to: directory.appending(path: "BUILT"))
    }

    /// Runs `iap-bench store --open-only` on `directory` and returns its figures.
    private static func openInChild(_ directory: URL) throws -> [String: Any] {
        let child = Process()
        child.executableURL = try ChildProcess.ownExecutable()
        child.arguments = ["store", "--open-only", directory.path(percentEncoded: false)]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        guard child.terminationStatus == 0,
            let figures = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else {
            throw IAPError(.internalError, "the open-only child failed with status \(child.terminationStatus)")
        }
        return figures
    }

    /// Opens `directory`, measures, and closes it.
    private static func openOnly(_ directory: URL) async throws -> [String: Any] {
        let before = memory()
        let began = ContinuousClock.now
        let store = try FileEntitlementStore(directory: directory)
        let openSeconds = (ContinuousClock.now - began).timeInterval
        let statistics = try await store.statistics()
        let after = memory()

        let (first, deep) = try await historyLatency(store, transactions: statistics.transactions)
        await store.close()
        return [
            "transactions": statistics.transactions,
            "users": statistics.users,
            "openSeconds": openSeconds,
            "peakResidentMB": after.peak,
            "residentMBBeforeOpen": before.resident,
            "residentMBAfterOpen": after.resident,
            "recovery": store.recovery.description,
            "fileBytes": fileSizes(directory),
            "firstPageMilliseconds": first,
            "deepPageMilliseconds": deep,
        ]
    }

    /// The size of each file of a store directory.
    private static func fileSizes(_ directory: URL) -> [String: Int] {
        let path = directory.path(percentEncoded: false)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        var sizes: [String: Int] = [:]
        for name in names {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
            sizes[name] = (attributes?[.size] as? NSNumber)?.intValue
        }
        return sizes
    }

    /// History page latency in milliseconds (percentiles): 1,000 first pages of random ordinary users, and 1,000
    /// pages from the middle of the ten large users' histories, as the benchmark ledgers lay them out.
    static func historyLatency(_ store: some EntitlementStore, transactions: Int) async throws
        -> (first: [String: Double], deep: [String: Double])
    {
        let users = max(transactions / 10, 1)
        var random = SplitMix(seed: 42)
        var first: [Double] = []
        for _ in 0..<1_000 {
            // Users whose number ends in 99 own nothing: their transactions went to the large users.
            let number = random.next() % UInt64(users)
            let user = "user-\(number % 100 == 99 ? number - 1 : number)"
            let start = ContinuousClock.now
            let page = try await store.history(userId: user, cursor: nil, limit: 20)
            first.append((ContinuousClock.now - start).timeInterval * 1000)
            guard !page.entries.isEmpty else {
                throw IAPError(.internalError, "\(user) has no history")
            }
        }
        // The large users hold every 100th transaction; a deep page starts in the middle of one's history.
        var deep: [Double] = []
        for round in 0..<1_000 {
            let whale = "whale-\(round % 10)"
            let middle = Int64(transactions / 2 + round)
            let start = ContinuousClock.now
            _ = try await store.history(userId: whale, cursor: "v1:\(middle)", limit: 20)
            deep.append((ContinuousClock.now - start).timeInterval * 1000)
        }
        return (percentiles(first), percentiles(deep))
    }

    private static func summarize(size: Int, _ samples: [[String: Any]]) -> [String: Any] {
        let opens = samples.compactMap { $0["openSeconds"] as? Double }
        let peaks = samples.compactMap { $0["peakResidentMB"] as? Double }
        let firstMedians = samples.compactMap { ($0["firstPageMilliseconds"] as? [String: Double])?["median"] }
        let firstP99 = samples.compactMap { ($0["firstPageMilliseconds"] as? [String: Double])?["p99"] }
        let deepMedians = samples.compactMap { ($0["deepPageMilliseconds"] as? [String: Double])?["median"] }
        let deepP99 = samples.compactMap { ($0["deepPageMilliseconds"] as? [String: Double])?["p99"] }
        return [
            "transactions": size,
            "openSeconds": ["median": Benchmark.median(opens), "samples": opens],
            "peakResidentMB": ["max": peaks.max() ?? 0, "samples": peaks],
            "firstPageMilliseconds": [
                "median": Benchmark.median(firstMedians), "p99": Benchmark.median(firstP99),
            ],
            "deepPageMilliseconds": ["median": Benchmark.median(deepMedians), "p99": Benchmark.median(deepP99)],
            "samples": samples,
        ]
    }

    // MARK: Helpers

    static let epoch = Date(millisecondsSince1970: 1_767_225_600_000)

    /// A transaction as the pipeline records it; every 100th belongs to one of ten large users.
    static func entry(_ index: Int, users: Int) -> LedgerEntry {
        let id = String(3_000_000_000_000_000 + index)
        let user = index % 100 == 99 ? "whale-\(index / 100 % 10)" : "user-\(index % users)"
        let payload = TransactionPayload(
            originalTransactionId: id,
            transactionId: id,
            bundleId: "com.example.app",
            productId: "coins.100",
            purchaseDate: epoch,
            originalPurchaseDate: epoch,
            quantity: 1,
            type: .consumable,
            inAppOwnershipType: .purchased,
            signedDate: epoch,
            environment: .production,
            storefront: "USA",
            storefrontId: "143441",
            transactionReason: .purchase,
            currency: "USD",
            price: 990,
            appTransactionId: "704289572311181848"
        )
        return LedgerEntry(
            transaction: payload,
            transactionId: id,
            originalTransactionId: id,
            userId: user,
            productId: "coins.100",
            orderId: "order-\(index)",
            recordedAt: epoch
        )
    }

    /// A compact JWS of the size Apple's are, for `payload`: Apple's own protected header (its certificate chain,
    /// from the sample notification), the payload's JSON in base64url, and a signature-sized tail. It is not
    /// signed (the store keeps what it is given), so the ledgers the benchmark builds do not pass `--reverify`.
    static func signedTransaction(of payload: TransactionPayload) throws -> String {
        let json = try AppStoreJSON.makeEncoder().encode(payload)
        return appleHeader + "." + Base64.encodeURL(json) + "." + signatureTail
    }

    /// A signature's worth of base64url.
    private static let signatureTail = String(repeating: "A", count: 86)

    /// The protected header of Apple's signed data: `{"alg":"ES256","x5c":[leaf, intermediate, root]}`.
    private static let appleHeader = String(
        AppleSample.productionTestNotification.prefix { $0 != "." }
    )

    /// Median and 99th percentile.
    static func percentiles(_ values: [Double]) -> [String: Double] {
        let sorted = values.sorted()
        guard !sorted.isEmpty else {
            return [:]
        }
        let p99 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        return ["median": Benchmark.median(sorted), "p99": p99]
    }

    /// VmRSS and VmHWM of this process, in MB.
    private static func memory() -> (resident: Double, peak: Double) {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
            return (0, 0)
        }
        func field(_ name: String) -> Double {
            let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
            let kilobytes = line?.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
            return (kilobytes / 1024 * 10).rounded() / 10
        }
        return (field("VmRSS"), field("VmHWM"))
    }

    /// A small deterministic random number generator, so runs pick the same users.
    struct SplitMix {
        var state: UInt64

        init(seed: UInt64) { state = seed }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }
    }
}
