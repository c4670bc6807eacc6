import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPPurchaseServer
import IAPStorageFile
import IAPStoragePostgres

/// `iap-bench serve`: the app's submissions per second through `iap serve`'s routes over loopback HTTP, against the
/// pipeline's own rate on the same kind of store in the same run.
enum ServeBenchmark {
    static let spec = CommandSpec(
        program: "iap-bench",
        name: "serve",
        summary: "submissions per second through the purchase server over loopback HTTP, against the pipeline's rate",
        synopsis: [
            "[--seconds S] [--clients C] [--transactions N] [--data DIR | --database URL [--processes P]]"
        ],
        discussion: """
            Starts the purchase server's routes (PurchaseServerRoutes on HTTPServer, the routes iap serve answers)
            on 127.0.0.1 and a free port over a new file ledger, with a hook that grants at once. C clients, each
            on a thread of its own with its own HS256 user token (issued now, iat, and valid for an hour, the
            longest the server admits, as 'iap serve --user-jwt-max-lifetime 1h') and keep-alive connection, POST
            pre-signed transactions (one new consumable purchase per request) to /iap/v1/transactions for S
            seconds or until the N transactions are used up. Then the same transactions go through DeliveryPipeline directly, from C tasks, on another
            new file ledger: iap-bench pipeline's rate on the same store, in the same run. Prints JSON: submissions per
            second, p50 and p99 latency, errors, the pipeline's rate and the ratio of the two (goal at least 0.5).
            The ledgers go in a new temporary directory, removed at the end, or under --data DIR (kept); with
            --database URL both are PostgreSQL ledgers instead, each in a fresh schema dropped at the end (a pool of
            C connections each). With --database and --processes P (2 to 8), then the same routes in server
            processes of their own (this executable again) on one new schema: first one process answering the C
            clients, then P processes on the same schema, the clients spread over them (C/P connections each):
            processes.one and processes.several in submissions per second, and their ratio. Build with -c release
            for meaningful figures.
            """,
        options: [
            .value("seconds", "S", "how long the clients send, 1 to 600 (default 10)"),
            .value("clients", "C", "concurrent clients, 1 to 256 (default 8)"),
            .value("transactions", "N", "pre-signed transactions, 100 to 1000000 (default 20000)"),
            .value("data", "DIR", "put the two ledgers under DIR (a new directory) and keep them"),
            .value("database", "URL", "measure on PostgreSQL ledgers (fresh schemas, dropped at the end) instead"),
            .value("processes", "P", "with --database, also compare one server process with P on one schema (2 to 8)"),
            .flag("child-server", "serve the routes as a child process of a --processes run (set by the parent)"),
            .value("schema", "NAME", "the schema a --child-server process serves (set by the parent)"),
            .value("root-file", "FILE", "the DER root a --child-server process trusts (set by the parent)"),
        ],
        examples: ["swift run -c release iap-bench serve --seconds 10 --clients 8"]
    )

    /// What the clients measured.
    struct ClientTotals {
        var latencies: [Duration] = []
        var errors = 0
        var statuses: [Int: Int] = [:]

        mutating func add(_ other: ClientTotals) {
            latencies += other.latencies
            errors += other.errors
            statuses.merge(other.statuses, uniquingKeysWith: +)
        }
    }

    /// What the command line asks for.
    struct Options {
        let seconds: Int
        let clients: Int
        let count: Int
        /// Where the ledgers go and stay; `nil` for a temporary directory.
        let kept: URL?
        /// The PostgreSQL server the ledgers go to instead of files.
        let database: String?
        /// Server processes to compare with one, on PostgreSQL; 1 for none.
        let processes: Int

        init(_ arguments: Arguments) throws(Arguments.UsageError) {
            try arguments.noPositionals()
            seconds = try arguments.value("seconds").flatMap { Int($0) } ?? 10
            clients = try arguments.value("clients").flatMap { Int($0) } ?? 8
            count = try arguments.value("transactions").flatMap { Int($0) } ?? 20_000
            guard (1...600).contains(seconds), (1...256).contains(clients), (100...1_000_000).contains(count) else {
                throw Arguments.UsageError(
                    message: "--seconds 1...600, --clients 1...256, --transactions 100...1000000"
                )
            }
            kept = try arguments.value("data").map { URL(fileURLWithPath: $0) }
            database = try arguments.value("database")
            processes = try arguments.value("processes").flatMap { Int($0) } ?? 1
            guard (1...8).contains(processes), processes == 1 || database != nil else {
                throw Arguments.UsageError(message: "--processes takes 2 to 8, with --database")
            }
            if kept != nil, database != nil {
                throw Arguments.UsageError(message: "--data and --database name two different ledgers: give one")
            }
            if let kept, FileManager.default.fileExists(atPath: kept.path) {
                throw Arguments.UsageError(message: "--data \(kept.path) exists; name a new directory")
            }
        }
    }

    static func run(_ arguments: [String]) async {
        let parsed = spec.parse(arguments)
        if parsed.has("child-server") {
            await runChildServer(parsed)
        }
        let options: Options
        do throws(Arguments.UsageError) {
            options = try Options(parsed)
        } catch {
            spec.fail(error)
        }
        let directory =
            options.kept
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("iap-bench-serve-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            let report = try await measure(options, directory: directory)
            if options.kept == nil {
                try? FileManager.default.removeItem(at: directory)
            }
            try Benchmark.emit(report)
            terminate(.success)
        } catch {
            if options.kept == nil {
                try? FileManager.default.removeItem(at: directory)
            }
            let failure = IAPError.wrapping(error, as: .internalError, "the benchmark failed")
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            terminate(.rejected)
        }
    }

    /// The server's rate, then the pipeline's on as many of the same transactions as the server answered.
    static func measure(_ options: Options, directory: URL) async throws -> [String: Any] {
        let setup = try PipelineBenchmark.Setup(count: options.count)
        let served = try await measureServer(options, setup, directory: directory)
        let work = Array(setup.tokens.prefix(max(1, served.totals.latencies.count)))
        let pipelinePerSecond = try await measurePipeline(work, setup, options, directory: directory)
        var figures = report(options, served, deliveries: work.count, pipelinePerSecond: pipelinePerSecond)
        if let url = options.database, options.processes > 1 {
            figures["processes"] = try await measureProcesses(options, setup, url: url, directory: directory)
        }
        return figures
    }

    // MARK: - Setup

    /// A new ledger for one half of the run: a file store under `directory`, or a fresh PostgreSQL schema; and how
    /// to close it (dropping the schema).
    static func openLedger(_ name: String, _ options: Options, directory: URL) async throws
        -> (store: any EntitlementStore, close: @Sendable () async -> Void)
    {
        if let url = options.database {
            let schema = "iap_bench_serve_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            let store = try await PostgresEntitlementStore(
                configuration: .init(url: url, schema: schema, poolSize: options.clients)
            )
            return (store, { try? await store.dropSchema() })
        }
        let store = try FileEntitlementStore(directory: directory.appendingPathComponent(name))
        return (store, { await store.close() })
    }

    /// How the report names the kind of ledger.
    static func storeName(_ options: Options) -> String {
        options.database == nil ? "FileEntitlementStore" : "PostgresEntitlementStore"
    }

    /// The purchase server's routes on an HTTP server (the routes `iap serve` answers; no background worker), on a new
    /// file ledger, and the secrets its clients use.
    struct Server {
        let http: HTTPServer
        let close: @Sendable () async -> Void
        let hook: PipelineBenchmark.CountingHook
        let userKey: HMACSHA256
    }

    /// Starts the purchase server's routes on 127.0.0.1 and a free port, over a new file ledger in `directory`.
    static func startServer(_ setup: PipelineBenchmark.Setup, _ options: Options, directory: URL) async throws
        -> Server
    {
        let clients = options.clients
        var userSecret = [UInt8](repeating: 0, count: 32)
        for index in userSecret.indices {
            userSecret[index] = UInt8.random(in: 0...255)
        }
        let userKey = try HMACSHA256(key: userSecret)
        let (store, close) = try await openLedger("serve", options, directory: directory)
        let hook = PipelineBenchmark.CountingHook()
        let http = try serve(setup, store: store, hook: hook, userKey: userKey, clients: clients)
        return Server(http: http, close: close, hook: hook, userKey: userKey)
    }

    /// The purchase server's routes over `store` on 127.0.0.1 and a free port.
    static func serve(
        _ setup: PipelineBenchmark.Setup,
        store: any EntitlementStore,
        hook: PipelineBenchmark.CountingHook,
        userKey: HMACSHA256,
        clients: Int
    ) throws -> HTTPServer {
        var serviceToken = [UInt8](repeating: 0, count: 32)
        for index in serviceToken.indices {
            serviceToken[index] = UInt8.random(in: 33...126)
        }
        let pipeline = DeliveryPipeline(verifier: setup.verifier, catalog: setup.catalog, store: store, hook: hook)
        let routes = PurchaseServerRoutes(
            pipeline: pipeline,
            users: HS256UserAuthenticator(secret: userKey, maximumLifetime: .seconds(tokenLifetime)),
            service: try ServiceTokenAuthenticator(token: serviceToken),
            support: nil,
            metrics: try PurchaseServerMetrics()
        )
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0)
        configuration.maximumBodySize = PurchaseServerRoutes.maximumBodySize
        configuration.maximumConnections = max(64, clients * 2)
        return try HTTPServer(configuration: configuration, router: routes.router)
    }

    // MARK: - Measure

    /// What the server did while the clients sent.
    struct Served {
        let totals: ClientTotals
        let elapsed: Duration
    }

    /// C clients send the pre-signed transactions to the server for S seconds or until they are used up; every
    /// submission answered 200 must have been granted once.
    static func measureServer(
        _ options: Options,
        _ setup: PipelineBenchmark.Setup,
        directory: URL
    ) async throws -> Served {
        let server = try await startServer(setup, options, directory: directory)
        Output.error("\(options.clients) clients for \(options.seconds) s against \(server.http.origin)")
        let bearers = try (0..<options.clients).map {
            "Bearer " + (try userToken("bench-user-\($0)", key: server.userKey))
        }
        let began = ContinuousClock.now
        let totals = await send(
            setup.tokens,
            to: bearers.map { (server.http.port, $0) },
            until: began + .seconds(options.seconds)
        )
        let elapsed = ContinuousClock.now - began
        await server.http.shutdown()
        await server.close()
        let served = totals.latencies.count
        let granted = server.hook.grants.withLock { $0 }
        guard granted == served else {
            throw IAPError(.internalError, "the server answered \(served) submissions 200 but granted \(granted)")
        }
        return Served(totals: totals, elapsed: elapsed)
    }

    /// Runs one client per port and bearer, each on a thread of its own with a blocking keep-alive connection (so
    /// that the clients cost little), each taking the next token until `deadline`; returns what they measured
    /// together.
    static func send(
        _ tokens: [String],
        to clients: [(port: UInt16, bearer: String)],
        until deadline: ContinuousClock.Instant
    ) async -> ClientTotals {
        let next = LockedValue(0)
        let results = LockedValue<[ClientTotals]>([])
        let done = DispatchGroup()
        for (port, bearer) in clients {
            let head = Array(
                ("POST /iap/v1/transactions HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: \(bearer)\r\n"
                    + "Content-Type: application/json\r\n").utf8
            )
            done.enter()
            Thread.detachNewThread {
                let totals = client(head: head, port: port, tokens: tokens, next: next, until: deadline)
                results.withLock { $0.append(totals) }
                done.leave()
            }
        }
        await withCheckedContinuation { continuation in
            done.notify(queue: .global()) { continuation.resume() }
        }
        var totals = ClientTotals()
        for part in results.withLock({ $0 }) {
            totals.add(part)
        }
        return totals
    }

    /// One client: POSTs the next unused token until `deadline` or until none is left.
    static func client(
        head: [UInt8],
        port: UInt16,
        tokens: [String],
        next: LockedValue<Int>,
        until deadline: ContinuousClock.Instant
    ) -> ClientTotals {
        let connection = LoopbackHTTPClient(port: port)
        var totals = ClientTotals()
        while ContinuousClock.now < deadline {
            let index = next.withLock { value -> Int in
                defer { value += 1 }
                return value
            }
            guard index < tokens.count else { break }
            let body = Array(#"{"signedTransaction":"\#(tokens[index])"}"#.utf8)
            let request = head + Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body
            let sent = ContinuousClock.now
            if let status = connection.exchange(request) {
                totals.statuses[status, default: 0] += 1
                if status == 200 {
                    totals.latencies.append(ContinuousClock.now - sent)
                } else {
                    totals.errors += 1
                }
            } else {
                totals.errors += 1
            }
        }
        return totals
    }

    /// The pipeline alone, on a new file ledger, with the same transactions from as many tasks as clients.
    static func measurePipeline(
        _ work: [String],
        _ setup: PipelineBenchmark.Setup,
        _ options: Options,
        directory: URL
    ) async throws -> Double {
        let clients = options.clients
        Output.error("the pipeline alone: \(work.count) deliveries from \(clients) tasks")
        let (store, close) = try await openLedger("pipeline", options, directory: directory)
        let hook = PipelineBenchmark.CountingHook()
        let direct = DeliveryPipeline(verifier: setup.verifier, catalog: setup.catalog, store: store, hook: hook)
        let began = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<clients {
                group.addTask {
                    var index = worker
                    while index < work.count {
                        _ = await direct.submit(signedTransaction: work[index], userId: "bench-user-\(worker)")
                        index += clients
                    }
                }
            }
        }
        let elapsed = ContinuousClock.now - began
        await close()
        let delivered = hook.grants.withLock { $0 }
        guard delivered == work.count else {
            throw IAPError(.internalError, "the pipeline granted \(delivered) of \(work.count) deliveries")
        }
        return Double(work.count) / elapsed.timeInterval
    }

    // MARK: - Report

    /// Submissions per second, latency percentiles, errors and statuses, the pipeline's rate and the ratio.
    static func report(_ options: Options, _ served: Served, deliveries: Int, pipelinePerSecond: Double)
        -> [String: Any]
    {
        let totals = served.totals
        let servePerSecond = Double(totals.latencies.count) / served.elapsed.timeInterval
        let sorted = totals.latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
            return (sorted[max(0, index)].timeInterval * 1_000_000).rounded() / 1000
        }
        let ratio = pipelinePerSecond > 0 ? servePerSecond / pipelinePerSecond : 0
        return [
            "benchmark": "serve",
            "build": Benchmark.build,
            "store": storeName(options),
            "clients": options.clients,
            "seconds": (served.elapsed.timeInterval * 1000).rounded() / 1000,
            "submissions": totals.latencies.count,
            "submissionsPerSecond": servePerSecond.rounded(),
            "latencyMs": ["p50": percentile(0.5), "p99": percentile(0.99)],
            "errors": totals.errors,
            "statuses": Dictionary(uniqueKeysWithValues: totals.statuses.map { (String($0.key), $0.value) }),
            "pipeline": [
                "deliveries": deliveries, "tasks": options.clients, "perSecond": pipelinePerSecond.rounded(),
                "store": storeName(options),
            ],
            "ratio": (ratio * 1000).rounded() / 1000,
            "goal": 0.5,
            "met": ratio >= 0.5 && totals.errors == 0,
            "cores": ProcessInfo.processInfo.activeProcessorCount,
            "unit": "app submissions answered 200 per second over loopback HTTP; the pipeline's deliveries per second",
        ]
    }

    /// How long the clients' user tokens live, as a backend mints them for an app: an hour. The server admits no
    /// longer, so a token that lived longer would be refused and the run would count the refusals as errors.
    static let tokenLifetime = 3_600

    /// An HS256 user token for the benchmark's clients, issued now (`iat`) and valid for ``tokenLifetime``.
    static func userToken(_ userId: String, key: HMACSHA256) throws -> String {
        let iat = Int(SystemClock().now.timeIntervalSince1970)
        let exp = iat + tokenLifetime
        let header = base64URL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = base64URL(Array(#"{"sub":"\#(userId)","iat":\#(iat),"exp":\#(exp)}"#.utf8))
        let code = key.authenticationCode(for: Array("\(header).\(payload)".utf8))
        return "\(header).\(payload).\(base64URL(code))"
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
