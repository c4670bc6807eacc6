import Foundation
import IAPCore
import IAPCrypto

/// `iap bench`: benchmarks that print machine-readable figures.
enum BenchCommand {
    static let verifySpec = CommandSpec(
        name: "bench verify",
        summary: "transactions verified per second on one thread, warm and cold, against OpenSSL's own rate",
        synopsis: ["[--seconds S] [--runs N] [--only warm|cold|openssl|apple|breakdown]"],
        discussion: """
            Transactions verified per second on one thread: (a) with a warm chain cache, (b) with no cache (three
            signatures per token), (c) OpenSSL's own P-256 verify rate in this process; also Apple's real chain
            and a breakdown of the cost. Prints JSON with the median of N runs of S seconds each (defaults: 5
            runs of 1 second). Build with -c release for meaningful figures.
            """,
        options: [
            .value("seconds", "S", "seconds per run, up to 600 (default 1)"),
            .value("runs", "N", "runs, 1 to 1000; the median is reported (default 5)"),
            .value("only", "PART", "measure one part only: warm, cold, openssl, apple or breakdown"),
        ],
        examples: ["swift run -c release iap bench verify --runs 3"]
    )

    static let spec = CommandSpec(
        name: "bench",
        summary: "run a benchmark: iap bench verify | verify-batch | ingest | pipeline | store | serve",
        discussion: """
            Benchmarks that print machine-readable figures (JSON on standard output, progress on standard
            error). Build with -c release for meaningful figures: swift run -c release iap bench verify
            """,
        subcommands: [
            verifySpec, BatchVerifyBenchmark.spec, IngestBenchmark.spec, PipelineBenchmark.spec, StoreBenchmark.spec,
            ServeBenchmark.spec,
        ],
        examples: ["swift run -c release iap bench pipeline --deliveries 2000"]
    )

    static func run(_ arguments: [String]) async {
        let (command, rest) = spec.subcommand(arguments)
        switch command.word {
        case "verify":
            runVerify(rest)
        case "verify-batch":
            BatchVerifyBenchmark.run(rest)
        case "ingest":
            IngestBenchmark.run(rest)
        case "pipeline":
            await PipelineBenchmark.run(rest)
        case "serve":
            await ServeBenchmark.run(rest)
        default:
            await StoreBenchmark.run(rest)
        }
    }

    struct Timing {
        let seconds: Double
        let runs: Int

        init(_ arguments: Arguments) throws(Arguments.UsageError) {
            let seconds = try arguments.value("seconds").map { Double($0) } ?? 1
            let runs = try arguments.value("runs").map { Int($0) } ?? 5
            guard let seconds, seconds > 0, seconds <= 600 else {
                throw Arguments.UsageError(message: "--seconds must be a number between 0 and 600")
            }
            guard let runs, runs > 0, runs <= 1000 else {
                throw Arguments.UsageError(message: "--runs must be a whole number between 1 and 1000")
            }
            self.seconds = seconds
            self.runs = runs
        }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Runs `body` repeatedly for `seconds` and returns calls per second.
    static func rate(seconds: Double, _ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let budget = Duration.milliseconds(Int64(seconds * 1000))
        let start = clock.now
        var count = 0
        var elapsed = Duration.zero
        repeat {
            for _ in 0..<32 {
                try body()
            }
            count += 32
            elapsed = clock.now - start
        } while elapsed < budget
        return Double(count) / elapsed.timeInterval
    }

    static func runVerify(_ arguments: [String]) {
        let timing: Timing
        let only: String?
        let parsed = verifySpec.parse(arguments)
        do throws(Arguments.UsageError) {
            try parsed.noPositionals()
            timing = try Timing(parsed)
            only = try parsed.value("only")
            if let only, !["warm", "cold", "openssl", "apple", "breakdown"].contains(only) {
                throw Arguments.UsageError(message: "--only must be warm, cold, openssl, apple or breakdown")
            }
        } catch {
            verifySpec.fail(error)
        }
        do {
            let fixture = try BenchmarkFixture()
            var warm: [Double] = []
            var cold: [Double] = []
            var baseline: [Double] = []
            var apple: [Double] = []
            var parse: [Double] = []
            var decode: [Double] = []
            var fastDecode: [Double] = []
            func wanted(_ name: String) -> Bool { only == nil || only == name }
            for run in 1...timing.runs {
                Output.error("run \(run)/\(timing.runs)")
                if wanted("warm") {
                    warm.append(try rate(seconds: timing.seconds) { _ = try fixture.warm.transaction(fixture.token) })
                }
                if wanted("cold") {
                    cold.append(try rate(seconds: timing.seconds) { _ = try fixture.cold.transaction(fixture.token) })
                }
                if wanted("openssl") {
                    baseline.append(
                        ECDSABaseline.p256VerificationsPerSecond(
                            minimumDuration: .milliseconds(Int64(timing.seconds * 1000))
                        )
                    )
                }
                if wanted("breakdown") {
                    parse.append(
                        try rate(seconds: timing.seconds / 4) {
                            _ = try X509Certificate(derEncoded: fixture.leafDER)
                        }
                    )
                    let decoder = AppStoreJSON.makeDecoder()
                    decode.append(
                        try rate(seconds: timing.seconds / 4) {
                            _ = try decoder.decode(TransactionPayload.self, from: fixture.payloadJSON)
                        }
                    )
                    let payloadBytes = Array(fixture.payloadJSON)
                    fastDecode.append(
                        rate(seconds: timing.seconds / 4) {
                            _ = payloadBytes.withUnsafeBytes { FastTransactionDecoder.decode($0) }
                        }
                    )
                }
                if wanted("apple") {
                    apple.append(
                        try rate(seconds: timing.seconds / 2) {
                            _ = try fixture.appleCold.notification(fixture.appleToken)
                        }
                    )
                }
            }
            let a = median(warm)
            let b = median(cold)
            let c = median(baseline)
            let report: [String: Any] = [
                "benchmark": "verify",
                "build": isDebugBuild ? "debug" : "release",
                "runs": timing.runs,
                "secondsPerRun": timing.seconds,
                "unit": "transactions per second, one thread, median of runs",
                "warmCache": ["perSecond": a.rounded(), "samples": warm.map { $0.rounded() }],
                "noCache": ["perSecond": b.rounded(), "samples": cold.map { $0.rounded() }],
                "opensslP256Verify": ["perSecond": c.rounded(), "samples": baseline.map { $0.rounded() }],
                "appleChainNoCache": [
                    "perSecond": median(apple).rounded(),
                    "note": "the real Apple chain, whose intermediate and root are P-384",
                ],
                "breakdown": [
                    "certificateParsePerSecond": median(parse).rounded(),
                    "payloadJSONDecoderPerSecond": median(decode).rounded(),
                    "payloadFastDecodePerSecond": median(fastDecode).rounded(),
                    "note":
                        "per second: parsing one DER certificate (d2i_X509); decoding one transaction payload "
                        + "with JSONDecoder, and with the fast path the verifier uses for the common shape",
                ],
                "ratios": [
                    "warmCacheToOpenSSL": c > 0 ? (a / c * 1000).rounded() / 1000 : 0,
                    "noCacheToOpenSSLThird": c > 0 ? (b / (c / 3) * 1000).rounded() / 1000 : 0,
                ],
                "targets": ["warmCacheToOpenSSL": 0.8, "noCacheToOpenSSLThird": 0.7],
                "met": only == nil && a >= 0.8 * c && b >= 0.7 * c / 3,
            ]
            let data = try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys])
            Output.write(data)
            Output.write("\n")
            terminate(.success)
        } catch {
            Output.error("error: \(error)")
            terminate(.rejected)
        }
    }

    static var isDebugBuild: Bool {
        #if DEBUG
            true
        #else
            false
        #endif
    }
}

/// The signed data the verify benchmark runs on: a realistic transaction signed by a fresh test PKI
/// (all P-256, like the benchmark's three-signature target assumes), and a real Apple notification.
struct BenchmarkFixture {
    let token: String
    let warm: AppStoreSignedDataVerifier
    let cold: AppStoreSignedDataVerifier
    let appleToken: String
    let appleCold: AppStoreSignedDataVerifier
    let leafDER: [UInt8]
    let payloadJSON: Data

    init() throws {
        let signedDate = Date(millisecondsSince1970: 1_767_225_600_000)
        let pki = try TestPKI.generate(
            TestPKI.Options(
                notBefore: Date(millisecondsSince1970: 1_704_067_200_000),
                notAfter: Date(millisecondsSince1970: 1_893_456_000_000)
            )
        )
        let payload = TransactionPayload(
            originalTransactionId: "2000000812345678",
            transactionId: "2000000812345679",
            webOrderLineItemId: "2000000098765432",
            bundleId: "com.example.app",
            productId: "com.example.app.premium.monthly",
            subscriptionGroupIdentifier: "21345678",
            purchaseDate: signedDate,
            originalPurchaseDate: signedDate,
            expiresDate: signedDate.addingTimeInterval(30 * 86_400),
            quantity: 1,
            type: .autoRenewableSubscription,
            appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138",
            inAppOwnershipType: .purchased,
            signedDate: signedDate,
            environment: .production,
            storefront: "USA",
            storefrontId: "143441",
            transactionReason: .purchase,
            currency: "USD",
            price: 9_990,
            appTransactionId: "704289572311181848"
        )
        leafDER = pki.leaf.derBytes
        payloadJSON = try AppStoreJSON.makeEncoder().encode(payload)
        let signer = JWSSigner(key: pki.leafKey, certificateChain: pki.x5c)
        token = try signer.sign(payload)
        let configuration = AppStoreSignedDataVerifier.Configuration(
            rootCertificates: [pki.root],
            bundleId: "com.example.app",
            environment: .production,
            appAppleId: 1_234_567_890
        )
        warm = try AppStoreSignedDataVerifier(configuration: configuration)
        var noCache = configuration
        noCache.cacheCapacity = 0
        cold = try AppStoreSignedDataVerifier(configuration: noCache)

        appleToken = Self.appleSample
        appleCold = try AppStoreSignedDataVerifier(
            configuration: .init(
                bundleId: "com.nineton.taller",
                environment: .production,
                appAppleId: 6_450_284_872,
                cacheCapacity: 0
            )
        )
    }

    /// The real Apple-signed production TEST notification (also in Sources/Examples/Samples).
    static let appleSample = AppleSample.productionTestNotification
}
