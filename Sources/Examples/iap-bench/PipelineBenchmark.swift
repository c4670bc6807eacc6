import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPInMemory

/// `iap-bench pipeline`: deliveries per second through the delivery pipeline.
enum PipelineBenchmark {
    /// A hook that grants instantly, so the figure is the pipeline's (or the server's) own cost.
    final class CountingHook: FulfillmentHook {
        let grants = LockedValue(0)

        func grant(_ delivery: Delivery) async throws {
            grants.withLock { $0 += 1 }
        }

        func revoke(_ delivery: Delivery) async throws {}
    }

    static let spec = CommandSpec(
        program: "iap-bench",
        name: "pipeline",
        summary: "deliveries per second through DeliveryPipeline, one task and C concurrent tasks",
        synopsis: ["[--deliveries N] [--runs N] [--concurrency C]"],
        discussion: """
            Deliveries per second through DeliveryPipeline (verify, catalog, owner, record, grant, mark) with the
            in-memory store and a warm chain cache, from one task and from C concurrent tasks. Prints JSON with
            the median of the runs.
            """,
        options: [
            .value("deliveries", "N", "deliveries per run, 1 to 1000000 (default 5000)"),
            .value("runs", "N", "runs, 1 to 100; the median is reported (default 5)"),
            .value("concurrency", "C", "concurrent tasks, 1 to 256 (default 8)"),
        ],
        examples: ["swift run -c release iap-bench pipeline --deliveries 2000 --concurrency 4"]
    )

    /// What the command line asks for.
    struct Options {
        let deliveries: Int
        let runs: Int
        let concurrency: Int

        init(_ arguments: Arguments) throws(Arguments.UsageError) {
            try arguments.noPositionals()
            deliveries = try arguments.value("deliveries").flatMap { Int($0) } ?? 5_000
            runs = try arguments.value("runs").flatMap { Int($0) } ?? 5
            concurrency = try arguments.value("concurrency").flatMap { Int($0) } ?? 8
            guard (1...1_000_000).contains(deliveries), (1...100).contains(runs), (1...256).contains(concurrency) else {
                throw Arguments.UsageError(message: "--deliveries 1...1000000, --runs 1...100, --concurrency 1...256")
            }
        }
    }

    /// The signed consumables and what a pipeline verifies them with (`iap-bench serve` uses the same).
    struct Setup: Sendable {
        let tokens: [String]
        let verifier: AppStoreSignedDataVerifier
        let catalog: StaticProductCatalog
        let start: Date

        /// `count` consumable purchases of coins.100 signed by a fresh test PKI, a verifier that trusts its root,
        /// and a catalog of coins.100.
        /// The test PKI's root certificate, for a child process to trust.
        let root: X509Certificate

        init(count: Int) throws {
            let start = Date(millisecondsSince1970: 1_767_225_600_000)
            let (tokens, root) = try signedConsumables(count, at: start)
            try self.init(tokens: tokens, root: root, start: start)
        }

        /// The verifier and catalog of a child process, trusting `root`; no transactions of its own.
        init(root: X509Certificate) throws {
            try self.init(tokens: [], root: root, start: Date(millisecondsSince1970: 1_767_225_600_000))
        }

        private init(tokens: [String], root: X509Certificate, start: Date) throws {
            self.start = start
            self.tokens = tokens
            self.root = root
            verifier = try AppStoreSignedDataVerifier(
                configuration: .init(
                    rootCertificates: [root],
                    bundleId: "com.example.app",
                    environment: .production,
                    appAppleId: appAppleId
                )
            )
            catalog = try StaticProductCatalog(products: [
                CatalogProduct(productId: "coins.100", kind: .consumable, unitsPerPurchase: 100)
            ])
        }
    }

    static func run(_ arguments: [String]) async {
        let options: Options
        do throws(Arguments.UsageError) {
            options = try Options(spec.parse(arguments))
        } catch {
            spec.fail(error)
        }
        do {
            let setup = try Setup(count: options.deliveries)
            var single: [Double] = []
            var parallel: [Double] = []
            for run in 1...options.runs {
                Output.error("run \(run)/\(options.runs)")
                single.append(try await measure(setup, tasks: 1))
                parallel.append(try await measure(setup, tasks: options.concurrency))
            }
            try Benchmark.emit(report(options, single: single, parallel: parallel))
            terminate(.success)
        } catch {
            Output.error("error: \(error)")
            terminate(.rejected)
        }
    }

    /// Deliveries per second of every token through a new pipeline on a new in-memory store, from `tasks` tasks.
    static func measure(_ setup: Setup, tasks: Int) async throws -> Double {
        let hook = CountingHook()
        let pipeline = DeliveryPipeline(
            verifier: setup.verifier,
            catalog: setup.catalog,
            store: InMemoryEntitlementStore(),
            hook: hook,
            clock: ManualClock(now: setup.start)
        )
        let tokens = setup.tokens
        let began = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<tasks {
                group.addTask {
                    var index = worker
                    while index < tokens.count {
                        _ = await pipeline.submit(signedTransaction: tokens[index], userId: "user-\(index % 1000)")
                        index += tasks
                    }
                }
            }
        }
        let elapsed = ContinuousClock.now - began
        let granted = hook.grants.withLock { $0 }
        guard granted == tokens.count else {
            throw IAPError(.internalError, "granted \(granted) of \(tokens.count) deliveries")
        }
        return Double(tokens.count) / elapsed.timeInterval
    }

    /// The medians from one task and from the concurrent tasks.
    static func report(_ options: Options, single: [Double], parallel: [Double]) -> [String: Any] {
        [
            "benchmark": "pipeline",
            "build": Benchmark.build,
            "store": "InMemoryEntitlementStore",
            "deliveriesPerRun": options.deliveries,
            "runs": options.runs,
            "unit": "deliveries per second (verify with a warm chain cache, catalog, record, grant, mark), median",
            "oneTask": Benchmark.figures(single),
            "concurrentTasks": Benchmark.figures(parallel).merging(["tasks": options.concurrency]) { $1 },
            "cores": ProcessInfo.processInfo.activeProcessorCount,
        ]
    }

    /// The App Apple ID the benchmarks' verifiers expect, as Production requires one.
    static let appAppleId: Int64 = 1_234_567_890

    /// `count` consumable purchases of coins.100 (com.example.app, Production, one per transaction id from
    /// 3000000000000000), signed by a fresh test PKI, and the PKI's root.
    static func signedConsumables(_ count: Int, at start: Date) throws -> (tokens: [String], root: X509Certificate) {
        let pki = try TestPKI.generate(
            TestPKI.Options(
                notBefore: Date(millisecondsSince1970: 1_704_067_200_000),
                notAfter: Date(millisecondsSince1970: 1_893_456_000_000)
            )
        )
        let signer = JWSSigner(key: pki.leafKey, certificateChain: pki.x5c)
        Output.error("signing \(count) transactions")
        var signed: [String] = []
        signed.reserveCapacity(count)
        for index in 0..<count {
            let id = String(3_000_000_000_000_000 + index)
            signed.append(
                try signer.sign(
                    TransactionPayload(
                        originalTransactionId: id,
                        transactionId: id,
                        bundleId: "com.example.app",
                        productId: "coins.100",
                        purchaseDate: start,
                        originalPurchaseDate: start,
                        quantity: 1,
                        type: .consumable,
                        appAccountToken: nil,
                        inAppOwnershipType: .purchased,
                        signedDate: start,
                        environment: .production,
                        storefront: "USA",
                        storefrontId: "143441",
                        transactionReason: .purchase,
                        currency: "USD",
                        price: 990
                    )
                )
            )
        }
        return (signed, pki.root)
    }
}
