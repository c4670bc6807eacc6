import Foundation
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPPurchaseServer
import IAPStorageFile

/// `iap bench serve`: the app's submissions per second through `iap serve`'s routes over loopback HTTP, against the
/// pipeline's own rate on the same kind of store in the same run.
enum ServeBenchmark {
    static let spec = CommandSpec(
        name: "bench serve",
        summary: "submissions per second through the purchase server over loopback HTTP, against bench pipeline's rate",
        synopsis: ["[--seconds S] [--clients C] [--transactions N] [--data DIR]"],
        discussion: """
            Starts the purchase server's routes (PurchaseServerRoutes on HTTPServer, as iap serve composes them)
            on 127.0.0.1 and a free port over a new file ledger, with a hook that grants at once. C clients, each
            on a thread of its own with its own HS256 user token (issued now, iat, and valid for an hour, the
            longest the server admits, as 'iap serve --user-jwt-max-lifetime 1h') and keep-alive connection, POST
            pre-signed transactions (one new consumable purchase per request) to /iap/v1/transactions for S
            seconds or until the N transactions are used up. Then the same transactions go through DeliveryPipeline directly, from C tasks, on another
            new file ledger: bench pipeline's rate on the same store, in the same run. Prints JSON: submissions per
            second, p50 and p99 latency, errors, the pipeline's rate and the ratio of the two (goal at least 0.5).
            The ledgers go in a new temporary directory, removed at the end, or under --data DIR (kept). Build
            with -c release for meaningful figures.
            """,
        options: [
            .value("seconds", "S", "how long the clients send, 1 to 600 (default 10)"),
            .value("clients", "C", "concurrent clients, 1 to 256 (default 8)"),
            .value("transactions", "N", "pre-signed transactions, 100 to 1000000 (default 20000)"),
            .value("data", "DIR", "put the two ledgers under DIR (a new directory) and keep them"),
        ],
        examples: ["swift run -c release iap bench serve --seconds 10 --clients 8"]
    )

    /// A hook that grants at once, so the figures are the server's and the pipeline's own cost.
    final class CountingHook: FulfillmentHook {
        let grants = LockedValue(0)

        func grant(_ delivery: Delivery) async throws {
            grants.withLock { $0 += 1 }
        }

        func revoke(_ delivery: Delivery) async throws {}
    }

    /// What the clients measured.
    struct ClientTotals {
        var latencies: [Duration] = []
        var errors = 0
        var statuses: [Int: Int] = [:]
    }

    static func run(_ arguments: [String]) async {
        let seconds: Int
        let clients: Int
        let count: Int
        let kept: URL?
        let parsed = spec.parse(arguments)
        do throws(Arguments.UsageError) {
            try parsed.noPositionals()
            seconds = try parsed.value("seconds").flatMap { Int($0) } ?? 10
            clients = try parsed.value("clients").flatMap { Int($0) } ?? 8
            count = try parsed.value("transactions").flatMap { Int($0) } ?? 20_000
            guard (1...600).contains(seconds), (1...256).contains(clients), (100...1_000_000).contains(count) else {
                throw Arguments.UsageError(
                    message: "--seconds 1...600, --clients 1...256, --transactions 100...1000000"
                )
            }
            kept = try parsed.value("data").map { URL(fileURLWithPath: $0) }
            if let kept, FileManager.default.fileExists(atPath: kept.path) {
                throw Arguments.UsageError(message: "--data \(kept.path) exists; name a new directory")
            }
        } catch {
            spec.fail(error)
        }
        let directory =
            kept
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("iap-bench-serve-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            let report = try await measure(seconds: seconds, clients: clients, count: count, directory: directory)
            if kept == nil {
                try? FileManager.default.removeItem(at: directory)
            }
            Output.write(try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys]))
            Output.write("\n")
            terminate(.success)
        } catch {
            if kept == nil {
                try? FileManager.default.removeItem(at: directory)
            }
            let failure = IAPError.wrapping(error, as: .internalError, "the benchmark failed")
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            terminate(.rejected)
        }
    }

    static func measure(seconds: Int, clients: Int, count: Int, directory: URL) async throws -> [String: Any] {
        let start = Date(millisecondsSince1970: 1_767_225_600_000)
        let (tokens, root) = try PipelineBenchmark.signedConsumables(count, at: start)
        let verifier = try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [root],
                bundleId: "com.example.app",
                environment: .production,
                appAppleId: PipelineBenchmark.appAppleId
            )
        )
        let catalog = try StaticProductCatalog(products: [
            CatalogProduct(productId: "coins.100", kind: .consumable, unitsPerPurchase: 100)
        ])
        var userSecret = [UInt8](repeating: 0, count: 32)
        var serviceToken = [UInt8](repeating: 0, count: 32)
        for index in userSecret.indices {
            userSecret[index] = UInt8.random(in: 0...255)
            serviceToken[index] = UInt8.random(in: 33...126)
        }
        let userKey = try HMACSHA256(key: userSecret)

        // The server, as iap serve composes it.
        let serveStore = try FileEntitlementStore(directory: directory.appendingPathComponent("serve"))
        let serveHook = CountingHook()
        let pipeline = DeliveryPipeline(verifier: verifier, catalog: catalog, store: serveStore, hook: serveHook)
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
        let server = try HTTPServer(configuration: configuration, router: routes.router)
        Output.error("\(clients) clients for \(seconds) s against \(server.origin)")

        let next = LockedValue(0)
        let bearers = try (0..<clients).map { "Bearer " + (try userToken("bench-user-\($0)", key: userKey)) }
        let began = ContinuousClock.now
        let deadline = began + .seconds(seconds)
        // Each client on a thread of its own with a blocking keep-alive connection, so that the clients cost little.
        let results = LockedValue<[ClientTotals]>([])
        let done = DispatchGroup()
        let port = server.port
        for client in 0..<clients {
            let head = Array(
                ("POST /iap/v1/transactions HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: \(bearers[client])\r\n"
                    + "Content-Type: application/json\r\n").utf8
            )
            done.enter()
            Thread.detachNewThread {
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
                results.withLock { $0.append(totals) }
                done.leave()
            }
        }
        await withCheckedContinuation { continuation in
            done.notify(queue: .global()) { continuation.resume() }
        }
        var totals = ClientTotals()
        for part in results.withLock({ $0 }) {
            totals.latencies += part.latencies
            totals.errors += part.errors
            totals.statuses.merge(part.statuses, uniquingKeysWith: +)
        }
        let elapsed = ContinuousClock.now - began
        await server.shutdown()
        await serveStore.close()
        let served = totals.latencies.count
        let granted = serveHook.grants.withLock { $0 }
        guard granted == served else {
            throw IAPError(.internalError, "the server answered \(served) submissions 200 but granted \(granted)")
        }
        let servePerSecond = Double(served) / elapsed.timeInterval

        // The pipeline alone, on a new file ledger, with the same transactions from as many tasks.
        let work = Array(tokens.prefix(max(1, served)))
        Output.error("the pipeline alone: \(work.count) deliveries from \(clients) tasks")
        let pipelineStore = try FileEntitlementStore(directory: directory.appendingPathComponent("pipeline"))
        let pipelineHook = CountingHook()
        let direct = DeliveryPipeline(verifier: verifier, catalog: catalog, store: pipelineStore, hook: pipelineHook)
        let pipelineBegan = ContinuousClock.now
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
        let pipelineElapsed = ContinuousClock.now - pipelineBegan
        await pipelineStore.close()
        let delivered = pipelineHook.grants.withLock { $0 }
        guard delivered == work.count else {
            throw IAPError(.internalError, "the pipeline granted \(delivered) of \(work.count) deliveries")
        }
        let pipelinePerSecond = Double(work.count) / pipelineElapsed.timeInterval
        let sorted = totals.latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
            return (sorted[max(0, index)].timeInterval * 1_000_000).rounded() / 1000
        }
        let ratio = pipelinePerSecond > 0 ? servePerSecond / pipelinePerSecond : 0
        return [
            "benchmark": "serve",
            "build": BenchCommand.isDebugBuild ? "debug" : "release",
            "store": "FileEntitlementStore",
            "clients": clients,
            "seconds": (elapsed.timeInterval * 1000).rounded() / 1000,
            "submissions": served,
            "submissionsPerSecond": servePerSecond.rounded(),
            "latencyMs": ["p50": percentile(0.5), "p99": percentile(0.99)],
            "errors": totals.errors,
            "statuses": Dictionary(uniqueKeysWithValues: totals.statuses.map { (String($0.key), $0.value) }),
            "pipeline": [
                "deliveries": work.count, "tasks": clients, "perSecond": pipelinePerSecond.rounded(),
                "store": "FileEntitlementStore",
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
