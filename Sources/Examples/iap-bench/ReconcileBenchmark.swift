import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPServerAPI
import IAPTesting

/// `iap-bench reconcile`: what a whole-ledger reconciliation costs per purchase family as the ledger grows, against
/// the simulated App Store in process (every family an Apple account of its own, so each needs its own requests).
enum ReconcileBenchmark {
    static let spec = CommandSpec(
        program: "iap-bench",
        name: "reconcile",
        summary: "a whole-ledger reconciliation against the simulated App Store: time per family at N families",
        synopsis: ["[--families N,N...] [--runs N]"],
        discussion: """
            For each size N, a simulated App Store in this process (signing like Apple) sells N non-consumables,
            each to an Apple account of its own, and a pipeline delivers each into a new in-memory ledger. Then
            Reconciler.reconcileLedger walks that ledger --runs times, without pacing and without checkpoints, so
            every family costs a transaction-history and a refund-history request, answered, signed, verified and
            settled (already delivered). Prints JSON: {"benchmark", "build", "cores", "runs", "sizes": [{"families",
            "seconds": {"median", "samples"}, "microsecondsPerFamily", "requests", "residentMB"}],
            "perFamilyLargestToSmallest"}. residentMB is the whole process after the walks (the simulated store and
            the ledger included). A flat time per family is the goal. Build with -c release.
            """,
        options: [
            .value("families", "N,N...", "ledger sizes, each 100 to 1000000 (default 2000,20000)"),
            .value("runs", "N", "walks per size, 1 to 20 (default 3)"),
        ],
        examples: ["swift run -c release iap-bench reconcile --families 2000,20000,50000 --runs 3"]
    )

    static func run(_ arguments: [String]) async {
        let parsed = spec.parse(arguments)
        do {
            try parsed.noPositionals()
            let sizes = try (parsed.value("families") ?? "2000,20000").split(separator: ",").map {
                guard let size = Int($0), (100...1_000_000).contains(size) else {
                    throw Arguments.UsageError(message: "--families takes sizes from 100 to 1000000")
                }
                return size
            }
            let runsText = try parsed.value("runs") ?? "3"
            guard let runs = Int(runsText), (1...20).contains(runs) else {
                throw Arguments.UsageError(message: "--runs must be a whole number from 1 to 20")
            }
            var figures: [[String: Any]] = []
            for size in sizes {
                figures.append(try await measure(size, runs: runs))
            }
            var report: [String: Any] = [
                "benchmark": "reconcile",
                "build": Benchmark.build,
                "cores": ProcessInfo.processInfo.activeProcessorCount,
                "runs": runs,
                "sizes": figures,
            ]
            let perFamily = figures.compactMap { $0["microsecondsPerFamily"] as? Double }
            if let first = perFamily.first, let last = perFamily.last, first > 0 {
                report["perFamilyLargestToSmallest"] = (last / first * 100).rounded() / 100
            }
            try Benchmark.emit(report)
            Output.flush()
            exit(0)
        } catch let error as Arguments.UsageError {
            spec.fail(error)
        } catch {
            Output.error("error: \(IAPError.wrapping(error, as: .internalError, "the benchmark failed").message)")
            exit(1)
        }
    }

    /// Builds a ledger of `families` delivered purchases, one per Apple account, and times `runs` walks of it.
    static func measure(_ families: Int, runs: Int) async throws -> [String: Any] {
        let clock = ManualClock(now: Date(millisecondsSince1970: 1_767_225_600_000))
        let catalog = try StaticProductCatalog(products: [
            CatalogProduct(productId: "pro.lifetime", kind: .nonConsumable, entitlements: ["pro"])
        ])
        let appStore = try SimulatedAppStore(
            products: catalog.products,
            configuration: .init(environment: .production),
            clock: clock
        )
        let pipeline = DeliveryPipeline(
            verifier: try AppStoreSignedDataVerifier(configuration: appStore.verifierConfiguration),
            catalog: catalog,
            store: InMemoryEntitlementStore(),
            hook: ClosureFulfillmentHook(grant: { _ in }, revoke: { _ in }),
            clock: clock
        )
        Output.error("reconcile \(families): selling and delivering \(families) purchases")
        for index in 0..<families {
            let result = try await appStore.purchase(productId: "pro.lifetime", account: "customer-\(index)")
            guard let transaction = result.transaction else {
                throw IAPError(.internalError, "the simulated App Store did not sell purchase \(index): \(result)")
            }
            let outcome = await pipeline.submit(
                signedTransaction: transaction.signedTransaction,
                userId: "user-\(index)"
            )
            guard outcome.shouldFinishTransaction else {
                throw IAPError(.internalError, "purchase \(index) was not delivered: \(outcome)")
            }
            if index % 10_000 == 9_999 {
                _ = await appStore.drainNotifications()
            }
        }
        _ = await appStore.drainNotifications()
        let connection = try SimulatedAppStoreTransport.connect(to: appStore)
        let reconciler = Reconciler(
            client: connection.client,
            pipeline: pipeline,
            checkpoints: nil,
            configuration: .init(alarmThreshold: .max, requestsPerSecond: 0)
        )
        var samples: [Double] = []
        var requests = 0
        for run in 1...runs {
            let began = ContinuousClock.now
            let summary = try await reconciler.reconcileLedger()
            samples.append((ContinuousClock.now - began).timeInterval)
            guard summary.reconciled == families, summary.failed == 0, summary.deliveredNow == 0 else {
                throw IAPError(.internalError, "walk \(run) at \(families) families: \(summary)")
            }
            requests = summary.requests
            Output.error("reconcile \(families): walk \(run)/\(runs) \(String(format: "%.2f", samples.last ?? 0)) s")
        }
        let median = Benchmark.median(samples)
        return [
            "families": families,
            "seconds": [
                "median": (median * 1_000).rounded() / 1_000,
                "samples": samples.map { ($0 * 1_000).rounded() / 1_000 },
            ],
            "microsecondsPerFamily": (median / Double(families) * 1e6).rounded(),
            "requests": requests,
            "residentMB": residentMB(),
        ]
    }

    /// VmRSS of this process, in MB.
    private static func residentMB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else {
            return 0
        }
        return (kilobytes / 1024 * 10).rounded() / 10
    }
}
