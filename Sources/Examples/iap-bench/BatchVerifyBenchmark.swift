import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto

/// `iap-bench verify-batch`: the whole `iap verify --batch` process as a user runs it, against one core of OpenSSL's
/// P-256 verify and against Apple's Python verifier.
enum BatchVerifyBenchmark {
    static let spec = CommandSpec(
        program: "iap-bench",
        name: "verify-batch",
        summary: "the whole iap verify --batch process against OpenSSL's P-256 verify and Apple's Python verifier",
        synopsis: ["[--transactions N] [--runs N] [--python PATH] [--python-transactions N] [--no-openssl-speed]"],
        discussion: """
            Generates N transactions with 'iap testdata transactions' (the project's test PKI) and, in each run,
            measures:
            (a) the whole process: 'iap verify --batch --root ROOT --bundle-id com.example.app --environment
                Sandbox' spawned as a child, timed from spawn to exit, every output line checked (it must be ok),
                twice: the N tokens piped into it from this process and its output read as it comes (a client
                feeding it: this process's writing and reading take CPU beside the child's), and as a batch job,
                '< tokens.txt > answers.jsonl' (a file in, a file out, nothing else running);
            (b) one core of OpenSSL's P-256 verify rate, in this process (EVP_PKEY_verify on a precomputed digest,
                one reused context, for 3 seconds of wall-clock time; IAPCrypto's ECDSABaseline);
            (c) 'openssl speed -elapsed -seconds 3 ecdsap256' when openssl is on the PATH (its verify/s column);
            (d) Apple's Python verifier when --python names an interpreter with app-store-server-library:
                SignedDataVerifier.verify_and_decode_signed_transaction over the same tokens with the same root,
                bundle id and environment, timed inside Python (its start-up not counted).
            Prints JSON with the medians, the samples and the ratios of (a) to (b), (c) and (d) against the targets
            (the batch job at 1.5 times (b); the piped process at 20 times (d)). Scripts/bench-verify-batch.sh builds the release binary, installs Apple's
            library in a throw-away virtual environment and runs this. Build with -c release for meaningful figures,
            and build iap too: the iap beside iap-bench is the one measured (swift build -c release --product iap).
            """,
        options: [
            .value("transactions", "N", "transactions per run, 1 to 1000000 (default 20000)"),
            .value("runs", "N", "runs, 1 to 100; the medians are reported (default 3)"),
            .value("python", "PATH", "a Python interpreter with app-store-server-library, to measure Apple's verifier"),
            .value("python-transactions", "N", "how many of the same transactions Python verifies (default: all)"),
            .flag("no-openssl-speed", "do not run 'openssl speed' (the in-process OpenSSL figure is still measured)"),
        ],
        examples: ["Scripts/bench-verify-batch.sh --runs 3", "iap-bench verify-batch --transactions 5000 --runs 1"]
    )

    struct Options {
        var transactions = 20_000
        var runs = 3
        var python: String?
        var pythonTransactions: Int?
        var opensslSpeed = true
    }

    static func run(_ arguments: [String]) {
        let parsed = spec.parse(arguments)
        var options = Options()
        do throws(Arguments.UsageError) {
            try parsed.noPositionals()
            options.transactions = try parsed.value("transactions").flatMap { Int($0) } ?? options.transactions
            options.runs = try parsed.value("runs").flatMap { Int($0) } ?? options.runs
            options.python = try parsed.value("python")
            options.pythonTransactions = try parsed.value("python-transactions").map { Int($0) ?? 0 }
            options.opensslSpeed = !parsed.has("no-openssl-speed")
            guard (1...1_000_000).contains(options.transactions), (1...100).contains(options.runs) else {
                throw Arguments.UsageError(message: "--transactions must be 1 to 1000000 and --runs 1 to 100")
            }
            if let count = options.pythonTransactions, !(1...options.transactions).contains(count) {
                throw Arguments.UsageError(message: "--python-transactions must be 1 to --transactions")
            }
        } catch {
            spec.fail(error)
        }
        Benchmark.reportInTemporaryDirectory(prefix: "iap-bench-batch") { directory in
            try measure(options, in: directory)
        }
    }

    /// What every run works on: the generated transactions and the command line of `iap verify --batch`.
    struct Setup {
        let iap: URL
        let root: String
        let tokens: URL
        let answers: URL
        /// The tokens, one a line, as the piped run writes them.
        let input: [UInt8]
        let verify: [String]
        let openssl: URL?
    }

    /// The figures of every run.
    struct Samples {
        var whole: [Double] = []
        var wholePerCPUSecond: [Double] = []
        var coresUsed: [Double] = []
        var batch: [Double] = []
        var batchPerCPUSecond: [Double] = []
        var batchCoresUsed: [Double] = []
        var baseline: [Double] = []
        var baselinePerCPUSecond: [Double] = []
        var speed: [Double] = []
        var python: [Double] = []
        var pythonPerCPUSecond: [Double] = []
        var pythonLibrary: String?
    }

    static func measure(_ options: Options, in directory: URL) throws -> [String: Any] {
        let setup = try prepare(options, in: directory)
        var samples = Samples()
        for run in 1...options.runs {
            try measure(run: run, options, setup, into: &samples)
        }
        return report(options, setup, samples)
    }

    // MARK: - Setup

    /// Generates the transactions with `iap testdata transactions` into `tokens.txt`, its root into `root.der`.
    static func prepare(_ options: Options, in directory: URL) throws -> Setup {
        let iap = try ChildProcess.iap()
        let root = directory.appending(path: "root.der").path
        let tokens = directory.appending(path: "tokens.txt")
        Output.error("generating \(options.transactions) transactions with iap testdata transactions")
        let generated = try ChildProcess.spawn(
            iap,
            ["testdata", "transactions", "--count", String(options.transactions), "--root-out", root],
            input: nil
        )
        guard generated.status == 0, generated.lines == options.transactions else {
            throw IAPError(.internalError, "iap testdata transactions failed (exit \(generated.status))")
        }
        try Data(generated.output).write(to: tokens)
        return Setup(
            iap: iap,
            root: root,
            tokens: tokens,
            answers: directory.appending(path: "answers.jsonl"),
            input: generated.output,
            verify: [
                "verify", "--batch", "--root", root, "--bundle-id", "com.example.app", "--environment", "Sandbox",
            ],
            openssl: options.opensslSpeed ? ChildProcess.findExecutable("openssl") : nil
        )
    }

    // MARK: - Measure

    /// One run: OpenSSL in this process, `openssl speed`, the piped process, the batch job, Apple's Python verifier.
    static func measure(run: Int, _ options: Options, _ setup: Setup, into samples: inout Samples) throws {
        let label = "run \(run)/\(options.runs)"
        Output.error("\(label): OpenSSL's P-256 verify on one core, in this process")
        let threadCPU = ChildProcess.threadCPUSeconds()
        let baselineStart = ContinuousClock.now
        let perSecond = ECDSABaseline.p256VerificationsPerSecond(minimumDuration: .seconds(3))
        let baselineWall = (ContinuousClock.now - baselineStart).timeInterval
        samples.baseline.append(perSecond)
        samples.baselinePerCPUSecond.append(
            perSecond * baselineWall / max(ChildProcess.threadCPUSeconds() - threadCPU, 1e-9)
        )
        if let openssl = setup.openssl {
            Output.error("\(label): openssl speed -elapsed -seconds 3 ecdsap256")
            samples.speed.append(try opensslSpeed(openssl))
        }
        Output.error("\(label): iap \(setup.verify.joined(separator: " ")) < tokens")
        try measurePiped(options, setup, into: &samples)
        Output.error("\(label): iap \(setup.verify.joined(separator: " ")) < tokens.txt > answers.jsonl")
        try measureBatchJob(options, setup, into: &samples)
        if let interpreter = options.python {
            Output.error("\(label): Apple's Python SignedDataVerifier")
            let result = try applePython(
                interpreter,
                root: setup.root,
                tokens: setup.tokens.path,
                count: options.pythonTransactions ?? options.transactions
            )
            samples.python.append(result.perSecond)
            samples.pythonPerCPUSecond.append(result.perCPUSecond)
            samples.pythonLibrary = result.library
        }
    }

    /// `iap verify --batch` with the tokens piped in from this process and its output read as it comes.
    static func measurePiped(_ options: Options, _ setup: Setup, into samples: inout Samples) throws {
        let childrenCPU = ChildProcess.childrenCPUSeconds()
        let began = ContinuousClock.now
        let answered = try ChildProcess.spawn(setup.iap, setup.verify, input: setup.input, keepOutput: false)
        let elapsed = ContinuousClock.now - began
        guard answered.status == 0, answered.lines == options.transactions, answered.okLines == answered.lines else {
            throw IAPError(
                .internalError,
                "iap verify --batch exited \(answered.status) with \(answered.okLines) verified lines of "
                    + "\(answered.lines), expected \(options.transactions)"
            )
        }
        let cpu = ChildProcess.childrenCPUSeconds() - childrenCPU
        samples.whole.append(Double(options.transactions) / elapsed.timeInterval)
        samples.wholePerCPUSecond.append(Double(options.transactions) / max(cpu, 1e-9))
        samples.coresUsed.append(cpu / elapsed.timeInterval)
    }

    /// `iap verify --batch < tokens.txt > answers.jsonl`: a file in, a file out, nothing else running.
    static func measureBatchJob(_ options: Options, _ setup: Setup, into samples: inout Samples) throws {
        let batchCPU = ChildProcess.childrenCPUSeconds()
        let began = ContinuousClock.now
        let status = try ChildProcess.spawn(setup.iap, setup.verify, from: setup.tokens, to: setup.answers)
        let elapsed = ContinuousClock.now - began
        var counted = ChildProcess.LineCounter()
        counted.count(try Data(contentsOf: setup.answers))
        guard status == 0, counted.lines == options.transactions, counted.okLines == counted.lines else {
            throw IAPError(
                .internalError,
                "iap verify --batch < tokens.txt exited \(status) with \(counted.okLines) verified lines of "
                    + "\(counted.lines), expected \(options.transactions)"
            )
        }
        try? FileManager.default.removeItem(at: setup.answers)
        let cpu = ChildProcess.childrenCPUSeconds() - batchCPU
        samples.batch.append(Double(options.transactions) / elapsed.timeInterval)
        samples.batchPerCPUSecond.append(Double(options.transactions) / max(cpu, 1e-9))
        samples.batchCoresUsed.append(cpu / elapsed.timeInterval)
    }

    // MARK: - Report

    /// The medians, the samples, the ratios of the whole process to the other verifiers, and the targets.
    static func report(_ options: Options, _ setup: Setup, _ samples: Samples) -> [String: Any] {
        let median = Benchmark.median
        let rate = median(samples.whole)
        let batchRate = median(samples.batch)
        let openSSLRate = median(samples.baseline)
        var report: [String: Any] = [
            "benchmark": "verify-batch",
            "build": Benchmark.build,
            "cores": ProcessInfo.processInfo.activeProcessorCount,
            "transactions": options.transactions,
            "runs": options.runs,
            "unit": "transactions per second, median of runs",
            "wholeProcess": process(
                setup,
                samples.whole,
                redirection: " < tokens.txt (piped, output read)",
                perCPUSecond: samples.wholePerCPUSecond,
                cores: samples.coresUsed
            ),
            "wholeProcessBatchJob": process(
                setup,
                samples.batch,
                redirection: " < tokens.txt > answers.jsonl",
                perCPUSecond: samples.batchPerCPUSecond,
                cores: samples.batchCoresUsed
            ),
            "opensslP256VerifyOneCore": Benchmark.figures(samples.baseline).merging(
                [
                    "source": "ECDSABaseline: EVP_PKEY_verify in this process, one thread, 3 s of wall-clock time",
                    "perCPUSecond": median(samples.baselinePerCPUSecond).rounded(),
                ],
                uniquingKeysWith: { first, _ in first }
            ),
            "note": "coresUsed is the child's CPU time over its wall-clock time: below the number of cores, other "
                + "processes had part of the machine, and the wall-clock ratios understate what the process does "
                + "alone; the perCPUSecond figures and ratios compare the work per transaction whatever the load",
        ]
        var ratios: [String: Any] = [
            "wholeProcessToOpenSSLOneCore": ratio(rate, to: openSSLRate),
            "batchJobToOpenSSLOneCore": ratio(batchRate, to: openSSLRate),
            "perCPUSecondToOpenSSL": median(samples.baselinePerCPUSecond) > 0
                ? (median(samples.wholePerCPUSecond) / median(samples.baselinePerCPUSecond) * 100).rounded() / 100
                : 0,
        ]
        var met = batchRate >= 1.5 * openSSLRate
        if !samples.speed.isEmpty {
            report["opensslSpeed"] = Benchmark.figures(samples.speed).merging(
                ["command": "openssl speed -elapsed -seconds 3 ecdsap256 (verify/s)"],
                uniquingKeysWith: { first, _ in first }
            )
            ratios["wholeProcessToOpensslSpeed"] = ratio(rate, to: median(samples.speed))
            ratios["batchJobToOpensslSpeed"] = ratio(batchRate, to: median(samples.speed))
        }
        if samples.python.isEmpty {
            report["applePython"] = "not measured: pass --python PATH (Scripts/bench-verify-batch.sh installs it)"
        } else {
            report["applePython"] = applePythonFigures(options, samples)
            ratios["wholeProcessToApplePython"] = ratio(rate, to: median(samples.python))
            ratios["perCPUSecondToApplePython"] =
                (median(samples.wholePerCPUSecond) / median(samples.pythonPerCPUSecond) * 100).rounded() / 100
            met = met && rate >= 20 * median(samples.python)
        }
        report["ratios"] = ratios
        report["targets"] = ["batchJobToOpenSSLOneCore": 1.5, "wholeProcessToApplePython": 20]
        report["met"] = met
        return report
    }

    /// `rate` over `over`, to two decimals; 0 when `over` is 0.
    static func ratio(_ rate: Double, to over: Double) -> Double {
        over > 0 ? (rate / over * 100).rounded() / 100 : 0
    }

    /// A whole `iap verify --batch` process: its rate, the command, and what it cost in CPU.
    static func process(
        _ setup: Setup,
        _ samples: [Double],
        redirection: String,
        perCPUSecond: [Double],
        cores: [Double]
    ) -> [String: Any] {
        Benchmark.figures(samples).merging(
            [
                "command": "iap "
                    + setup.verify.joined(separator: " ").replacingOccurrences(of: setup.root, with: "root.der")
                    + redirection,
                "perCPUSecond": Benchmark.median(perCPUSecond).rounded(),
                "coresUsed": (Benchmark.median(cores) * 100).rounded() / 100,
            ],
            uniquingKeysWith: { first, _ in first }
        )
    }

    /// Apple's Python verifier: its rate, the library's version, the call timed.
    static func applePythonFigures(_ options: Options, _ samples: Samples) -> [String: Any] {
        Benchmark.figures(samples.python).merging(
            [
                "library": samples.pythonLibrary ?? "app-store-server-library",
                "transactions": options.pythonTransactions ?? options.transactions,
                "call": "SignedDataVerifier.verify_and_decode_signed_transaction, timed inside Python",
                "perCPUSecond": Benchmark.median(samples.pythonPerCPUSecond).rounded(),
            ],
            uniquingKeysWith: { first, _ in first }
        )
    }

    // MARK: - Other verifiers

    /// Runs `openssl speed -elapsed -seconds 3 ecdsap256` and returns its verify/s figure.
    static func opensslSpeed(_ openssl: URL) throws -> Double {
        let result = try ChildProcess.spawn(openssl, ["speed", "-elapsed", "-seconds", "3", "ecdsap256"], input: nil)
        // "256 bits ecdsa (nistp256)   0.0000s   0.0001s  36354.8   9707.3": the last column is verify/s.
        let text = String(decoding: result.output, as: UTF8.self)
        guard result.status == 0,
            let line = text.split(separator: "\n").last(where: { $0.contains("ecdsa (nistp256)") }),
            let figure = line.split(separator: " ").last.flatMap({ Double($0) })
        else {
            throw IAPError(.internalError, "could not read the verify/s figure of openssl speed")
        }
        return figure
    }

    /// Apple's `SignedDataVerifier` over the first `count` tokens, timed inside Python.
    static let pythonScript = """
        import importlib.metadata, json, sys, time
        from appstoreserverlibrary.models.Environment import Environment
        from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
        root, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
        with open(root, "rb") as f:
            certificate = f.read()
        with open(path) as f:
            tokens = [line.strip() for line in f if line.strip()][:count]
        verifier = SignedDataVerifier([certificate], False, Environment.SANDBOX, "com.example.app")
        start, cpu = time.perf_counter(), time.process_time()
        for token in tokens:
            transaction = verifier.verify_and_decode_signed_transaction(token)
            assert transaction.transactionId
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        version = importlib.metadata.version("app-store-server-library")
        print(json.dumps({"verified": len(tokens), "seconds": elapsed, "cpuSeconds": cpu, "library": version}))
        """

    static func applePython(_ interpreter: String, root: String, tokens: String, count: Int) throws
        -> (perSecond: Double, perCPUSecond: Double, library: String)
    {
        let program =
            interpreter.contains("/")
            ? URL(filePath: interpreter) : ChildProcess.findExecutable(interpreter) ?? URL(filePath: "")
        let result = try ChildProcess.spawn(program, ["-c", pythonScript, root, tokens, String(count)], input: nil)
        let object = try? JSONSerialization.jsonObject(with: Data(result.output)) as? [String: Any]
        guard result.status == 0, let object, let verified = object["verified"] as? Int, verified == count,
            let seconds = object["seconds"] as? Double, seconds > 0,
            let cpuSeconds = object["cpuSeconds"] as? Double, cpuSeconds > 0
        else {
            throw IAPError(
                .internalError,
                "Apple's Python verifier did not verify the \(count) transactions (exit \(result.status)); "
                    + "is app-store-server-library installed for \(interpreter)?"
            )
        }
        return (
            Double(verified) / seconds, Double(verified) / cpuSeconds,
            "app-store-server-library \(object["library"] as? String ?? "?")"
        )
    }
}
