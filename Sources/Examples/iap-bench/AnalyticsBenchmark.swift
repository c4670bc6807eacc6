import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPStorageFile

/// `iap-bench analytics`: how long `LedgerAnalytics` takes to answer a month by day on an open file ledger of N
/// transactions (what `GET /iap/v1/analytics` costs a running server).
enum AnalyticsBenchmark {
    static let spec = CommandSpec(
        program: "iap-bench",
        name: "analytics",
        summary: "the analytics of a month by day on a file ledger of N transactions: seconds per report",
        synopsis: ["[--transactions N] [--runs N] [--dir PATH]"],
        discussion: """
            Builds (once, under --dir, kept for reuse) a file ledger of N transactions in Production spread over a
            year: a third consumables, a sixth non-consumables (one in 20 refunded), the rest monthly subscriptions
            of a tenth as many users, renewing each month, with their renewal infos. Opens it, then computes the
            report of one month by day --runs times, as GET /iap/v1/analytics does on a running server, and prints
            JSON: {"benchmark", "build", "cores", "transactions", "openSeconds", "reportSeconds": {"median",
            "samples"}, "activeSubscriptions", "goalSeconds", "met", "consolePagesMs": {"overview", "analytics",
            "customer", "customerByTransaction", "customerNotFound", "deadLetters", "audit", "notifications": {"p50",
            "p99", "requests"}}}; the goal is 2 seconds at 1,000,000 transactions. The console's pages (the overview,
            the analytics of a month by day, a subscriber's customer page found by user id and by transaction id, a
            customer search that finds nobody, the dead letters, the support audit and 1,000 notifications) are then
            served from the same open ledger over loopback HTTP, signed in, 4 × --runs times each.
            Build with -c release.
            """,
        options: [
            .value("transactions", "N", "the ledger's size, 1000 to 10000000 (default 100000)"),
            .value("runs", "N", "reports to time, 1 to 50 (default 5)"),
            .value("dir", "PATH", "where the ledger is built and kept (default a temporary directory, removed)"),
        ],
        examples: ["swift run -c release iap-bench analytics --transactions 1000000 --dir /var/tmp/iap-bench-1m"]
    )

    static let start = Date(millisecondsSince1970: 1_767_225_600_000)  // 2026-01-01
    static let catalog: StaticProductCatalog = {
        do {
            return try StaticProductCatalog(products: [
                CatalogProduct(productId: "coins.100", kind: .consumable, entitlements: [], unitsPerPurchase: 100),
                CatalogProduct(productId: "premium", kind: .nonConsumable, entitlements: ["premium"]),
                CatalogProduct(
                    productId: "pro.monthly",
                    kind: .autoRenewable,
                    subscriptionGroupId: "pro",
                    entitlements: ["pro"],
                    duration: SubscriptionPeriod(value: 1, unit: .month)
                ),
            ])
        } catch {
            preconditionFailure("the benchmark catalog: \(error)")
        }
    }()

    static func run(_ arguments: [String]) async {
        let parsed = spec.parse(arguments)
        do {
            try parsed.noPositionals()
            let size = try number(parsed, "transactions", default: 100_000, in: 1_000...10_000_000)
            let runs = try number(parsed, "runs", default: 5, in: 1...50)
            let given = try parsed.value("dir").map { URL(filePath: $0) }
            let directory =
                given
                ?? FileManager.default.temporaryDirectory.appending(path: "iap-bench-analytics-\(UUID().uuidString)")
            try await build(size, in: directory)
            let opened = ContinuousClock.now
            let store = try FileEntitlementStore(directory: directory)
            let openSeconds = (ContinuousClock.now - opened).timeInterval
            let analytics = LedgerAnalytics(catalog: catalog)
            var samples: [Double] = []
            var report: AnalyticsReport?
            for run in 1...runs {
                let began = ContinuousClock.now
                report = try await analytics.report(
                    of: store,
                    from: start.addingTimeInterval(181 * 86_400),  // July 1
                    to: start.addingTimeInterval(212 * 86_400),  // August 1
                    interval: .day,
                    now: start.addingTimeInterval(400 * 86_400)
                )
                samples.append((ContinuousClock.now - began).timeInterval)
                Output.error("report \(run) of \(runs): \(String(format: "%.3f", samples.last ?? 0)) s")
            }
            let pages = try await consolePages(store, runs: runs * 4)
            await store.close()
            if given == nil {
                try? FileManager.default.removeItem(at: directory)
            }
            let median = Benchmark.median(samples)
            try Benchmark.emit([
                "benchmark": "analytics",
                "cores": ProcessInfo.processInfo.activeProcessorCount,
                // At most 2 s for a month by day on an open ledger of 1,000,000 transactions.
                "goalSeconds": 2,
                "met": median <= 2,
                "build": Benchmark.build,
                "transactions": size,
                "openSeconds": (openSeconds * 1_000).rounded() / 1_000,
                "reportSeconds": [
                    "median": (median * 1_000).rounded() / 1_000,
                    "samples": samples.map { ($0 * 1_000).rounded() / 1_000 },
                ],
                "activeSubscriptions": report?.totals.subscriptions.active ?? 0,
                "consolePagesMs": pages,
            ])
            Output.flush()
            exit(0)
        } catch let error as Arguments.UsageError {
            spec.fail(error)
        } catch {
            Output.error("error: \(error)")
            exit(1)
        }
    }

    /// The console's pages served over loopback HTTP from the open ledger, `count` times each, signed in: their p50
    /// and p99 in milliseconds.
    private static func consolePages(_ store: FileEntitlementStore, runs count: Int) async throws -> [String: Any] {
        let verifier = try AppStoreSignedDataVerifier(
            configuration: .init(bundleId: "com.example.app", environments: [.production], appAppleId: 1)
        )
        let pipeline = DeliveryPipeline(
            verifier: verifier,
            catalog: catalog,
            store: store,
            hook: ClosureFulfillmentHook(grant: { _ in }, revoke: { _ in })
        )
        var operators = ConsoleOperators(derivation: PBKDF2HMACSHA256())
        try operators.set(name: "bench", role: .viewer, password: "benchmark password")
        // As many notifications as a server keeps.
        let activity = ConsoleActivity()
        for index in 0..<ConsoleActivity.keptNotifications {
            activity.record(
                IAPEvent(
                    time: start.addingTimeInterval(Double(index) * 60),
                    event: "notification.processed",
                    userId: "subscriber-\(index)",
                    productId: "pro.monthly",
                    transactionId: String(4_000_000_000_000_000 + index),
                    environment: "Production",
                    outcome: "delivered",
                    notificationType: "DID_RENEW"
                )
            )
        }
        let sessions = ConsoleSessions(
            authenticator: try HMACSHA256(key: Array("console-benchmark-secret-0123456789".utf8)),
            secureCookies: false
        )
        let routes = ConsoleRoutes(
            operators: operators,
            sessions: sessions,
            pipeline: pipeline,
            ledger: store,
            readiness: ServerReadiness(ready: true),
            audit: InMemorySupportAuditLog(),
            activity: activity
        )
        let server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), router: routes.router)
        guard let signedIn = operators.operators.first else {
            throw IAPError(.internalError, "the benchmark's operator is missing")
        }
        let cookie = String(sessions.issue(for: signedIn, at: SystemClock().now).setCookie.split(separator: ";")[0])
        var figures: [String: Any] = [:]
        for (name, path) in [
            ("overview", "/console/overview"),
            ("analytics", "/console/analytics?from=2026-07-01&to=2026-08-01&interval=day"),
            // A subscriber with a renewal a month, found by user id, then by one of their transaction ids.
            ("customer", "/console/customer?q=subscriber-7"),
            ("customerByTransaction", "/console/customer?q=4000000000000003"),
            // A search that names nobody: tried as every key, the unindexed app transaction id last (the ledger
            // read whole).
            ("customerNotFound", "/console/customer?q=nobody"),
            // The ledger read whole for the dead letters and retries (the benchmark's ledger has none).
            ("deadLetters", "/console/dead-letters"),
            // The support audit, by now holding an entry per customer page above.
            ("audit", "/console/audit"),
            // The 1,000 notifications a server keeps, 200 of them shown.
            ("notifications", "/console/notifications"),
        ] {
            let request = Array(
                "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nCookie: \(cookie)\r\n\r\n".utf8
            )
            let client = LoopbackHTTPClient(port: server.port)
            var samples: [Double] = []
            for _ in 0..<count {
                let began = ContinuousClock.now
                // The client blocks one thread; the console answers on the others.
                let status = client.exchange(request)
                guard status == 200 else {
                    throw IAPError(
                        .internalError,
                        "the console answered \(status.map(String.init) ?? "nothing") for \(path)"
                    )
                }
                samples.append((ContinuousClock.now - began).timeInterval * 1_000)
            }
            let sorted = samples.sorted()
            figures[name] = [
                "p50": (Benchmark.median(samples) * 10).rounded() / 10,
                "p99": ((sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]) * 10)
                    .rounded() / 10,
                "requests": count,
            ]
            Output.error("console \(name): p50 \(Benchmark.median(samples)) ms")
        }
        await server.shutdown()
        return figures
    }

    private static func number(
        _ parsed: Arguments,
        _ name: String,
        default value: Int,
        in range: ClosedRange<Int>
    ) throws(Arguments.UsageError) -> Int {
        guard let text = try parsed.value(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw Arguments.UsageError(
                message: "--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)"
            )
        }
        return number
    }

    /// Builds a ledger of `size` transactions in `directory`, unless it holds one (`BUILT`).
    private static func build(_ size: Int, in directory: URL) async throws {
        if FileManager.default.fileExists(atPath: directory.appending(path: "BUILT").path(percentEncoded: false)) {
            return
        }
        try? FileManager.default.removeItem(at: directory)
        Output.error("building a ledger of \(size) transactions in \(directory.path(percentEncoded: false))")
        // Setup only: the measured figures never come from a store without fsync.
        let store = try FileEntitlementStore(
            directory: directory,
            options: .init(compactionThreshold: nil, fsync: false)
        )
        let subscribers = max(size / 20, 1)  // half the transactions are renewals of a 10th as many users
        var renewed: [Int: Int] = [:]  // subscriber → months bought
        var index = 0
        while index < size {
            let kind = index % 6
            let day = Double(index % 365)
            var transaction = TransactionPayload()
            let id = String(4_000_000_000_000_000 + index)
            transaction.transactionId = id
            transaction.originalTransactionId = id
            transaction.environment = .production
            transaction.currency = index % 4 == 0 ? "EUR" : "USD"
            transaction.inAppOwnershipType = .purchased
            transaction.purchaseDate = start.addingTimeInterval(day * 86_400)
            transaction.signedDate = transaction.purchaseDate
            var user = "user-\(index % (size / 3 + 1))"
            switch kind {
            case 0, 1:
                transaction.productId = "coins.100"
                transaction.type = .consumable
                transaction.price = 990
            case 2:
                transaction.productId = "premium"
                transaction.type = .nonConsumable
                transaction.price = 4_990
                if index % 20 == 2 {
                    transaction.revocationDate = transaction.purchaseDate?.addingTimeInterval(3 * 86_400)
                    transaction.revocationType = .refundFull
                }
            default:
                let subscriber = index % subscribers
                let month = renewed[subscriber, default: 0]
                renewed[subscriber] = month + 1
                user = "subscriber-\(subscriber)"
                transaction.productId = "pro.monthly"
                transaction.type = .autoRenewableSubscription
                transaction.price = 9_990
                transaction.originalTransactionId = String(5_000_000_000_000_000 + subscriber)
                let begins = start.addingTimeInterval(Double(subscriber % 28 + month * 30) * 86_400)
                transaction.purchaseDate = begins
                transaction.expiresDate = begins.addingTimeInterval(30 * 86_400)
            }
            var entry = LedgerEntry(
                transaction: transaction,
                transactionId: id,
                originalTransactionId: transaction.originalTransactionId ?? id,
                userId: user,
                productId: transaction.productId ?? "",
                recordedAt: transaction.purchaseDate ?? start
            )
            entry.deliveryState = .delivered
            entry.deliveredAt = entry.recordedAt
            entry.revokedAt = transaction.revocationDate
            entry.revocationDelivered = transaction.revocationDate != nil
            _ = try await store.insert(entry)
            index += 1
            if index % 100_000 == 0 {
                Output.error("  \(index) of \(size)")
            }
        }
        for subscriber in renewed.keys.sorted() where subscriber % 10 == 0 {
            var info = RenewalInfoPayload()
            info.originalTransactionId = String(5_000_000_000_000_000 + subscriber)
            info.autoRenewStatus = .off
            info.signedDate = start.addingTimeInterval(200 * 86_400)
            info.environment = .production
            _ = try await store.storeRenewalInfo(info)
        }
        try await store.compact()
        await store.close()
        try Data().write(to: directory.appending(path: "BUILT"))
    }
}
