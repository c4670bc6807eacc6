import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto

/// `iap-bench verify`: transactions verified per second on one thread, warm and cold, against OpenSSL's own rate.
enum VerifyBenchmark {
    static let spec = CommandSpec(
        program: "iap-bench",
        name: "verify",
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
        examples: ["swift run -c release iap-bench verify --runs 3"]
    )

    /// What the command line asks for.
    struct Options {
        let seconds: Double
        let runs: Int
        /// The one part to measure; `nil` for all.
        let only: String?

        init(_ arguments: Arguments) throws(Arguments.UsageError) {
            try arguments.noPositionals()
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
            only = try arguments.value("only")
            if let only, !["warm", "cold", "openssl", "apple", "breakdown"].contains(only) {
                throw Arguments.UsageError(message: "--only must be warm, cold, openssl, apple or breakdown")
            }
        }

        func wants(_ part: String) -> Bool { only == nil || only == part }
    }

    /// The rates of every run, per second.
    struct Samples {
        var warm: [Double] = []
        var cold: [Double] = []
        var baseline: [Double] = []
        var apple: [Double] = []
        var parse: [Double] = []
        var decode: [Double] = []
        var fastDecode: [Double] = []
    }

    static func run(_ arguments: [String]) {
        let options: Options
        do throws(Arguments.UsageError) {
            options = try Options(spec.parse(arguments))
        } catch {
            spec.fail(error)
        }
        do {
            let fixture = try BenchmarkFixture()
            var samples = Samples()
            for run in 1...options.runs {
                Output.error("run \(run)/\(options.runs)")
                try measure(options, fixture, into: &samples)
            }
            try Benchmark.emit(report(options, samples))
            terminate(.success)
        } catch {
            Output.error("error: \(error)")
            terminate(.rejected)
        }
    }

    /// One run: each part asked for, for the run's seconds (the breakdown and Apple's chain for a part of them).
    static func measure(_ options: Options, _ fixture: BenchmarkFixture, into samples: inout Samples) throws {
        let seconds = options.seconds
        if options.wants("warm") {
            samples.warm.append(
                try Benchmark.rate(seconds: seconds) { _ = try fixture.warm.transaction(fixture.token) }
            )
        }
        if options.wants("cold") {
            samples.cold.append(
                try Benchmark.rate(seconds: seconds) { _ = try fixture.cold.transaction(fixture.token) }
            )
        }
        if options.wants("openssl") {
            samples.baseline.append(
                ECDSABaseline.p256VerificationsPerSecond(minimumDuration: .milliseconds(Int64(seconds * 1000)))
            )
        }
        if options.wants("breakdown") {
            samples.parse.append(
                try Benchmark.rate(seconds: seconds / 4) { _ = try X509Certificate(derEncoded: fixture.leafDER) }
            )
            let decoder = AppStoreJSON.makeDecoder()
            samples.decode.append(
                try Benchmark.rate(seconds: seconds / 4) {
                    _ = try decoder.decode(TransactionPayload.self, from: fixture.payloadJSON)
                }
            )
            let payloadBytes = Array(fixture.payloadJSON)
            samples.fastDecode.append(
                Benchmark.rate(seconds: seconds / 4) {
                    _ = payloadBytes.withUnsafeBytes { FastTransactionDecoder.decode($0) }
                }
            )
        }
        if options.wants("apple") {
            samples.apple.append(
                try Benchmark.rate(seconds: seconds / 2) { _ = try fixture.appleCold.notification(fixture.appleToken) }
            )
        }
    }

    /// The figures, the ratios to OpenSSL and whether the targets are met.
    static func report(_ options: Options, _ samples: Samples) -> [String: Any] {
        let median = Benchmark.median
        let a = median(samples.warm)
        let b = median(samples.cold)
        let c = median(samples.baseline)
        return [
            "benchmark": "verify",
            "build": Benchmark.build,
            "runs": options.runs,
            "secondsPerRun": options.seconds,
            "unit": "transactions per second, one thread, median of runs",
            "warmCache": Benchmark.figures(samples.warm),
            "noCache": Benchmark.figures(samples.cold),
            "opensslP256Verify": Benchmark.figures(samples.baseline),
            "appleChainNoCache": [
                "perSecond": median(samples.apple).rounded(),
                "note": "the real Apple chain, whose intermediate and root are P-384",
            ],
            "breakdown": [
                "certificateParsePerSecond": median(samples.parse).rounded(),
                "payloadJSONDecoderPerSecond": median(samples.decode).rounded(),
                "payloadFastDecodePerSecond": median(samples.fastDecode).rounded(),
                "note":
                    "per second: parsing one DER certificate (d2i_X509); decoding one transaction payload "
                    + "with JSONDecoder, and with the fast path the verifier uses for the common shape",
            ],
            "ratios": [
                "warmCacheToOpenSSL": c > 0 ? (a / c * 1000).rounded() / 1000 : 0,
                "noCacheToOpenSSLThird": c > 0 ? (b / (c / 3) * 1000).rounded() / 1000 : 0,
            ],
            "targets": ["warmCacheToOpenSSL": 0.8, "noCacheToOpenSSLThird": 0.7],
            "met": options.only == nil && a >= 0.8 * c && b >= 0.7 * c / 3,
        ]
    }
}
