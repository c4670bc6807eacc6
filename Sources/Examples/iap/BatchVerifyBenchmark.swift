#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCore
import IAPCrypto

/// `iap bench verify-batch`: the whole `iap verify --batch` process as a user runs it, against one core of OpenSSL's
/// P-256 verify and against Apple's Python verifier.
enum BatchVerifyBenchmark {
    static let spec = CommandSpec(
        name: "bench verify-batch",
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
            library in a throw-away virtual environment and runs this. Build with -c release for meaningful figures.
            """,
        options: [
            .value("transactions", "N", "transactions per run, 1 to 1000000 (default 20000)"),
            .value("runs", "N", "runs, 1 to 100; the medians are reported (default 3)"),
            .value("python", "PATH", "a Python interpreter with app-store-server-library, to measure Apple's verifier"),
            .value("python-transactions", "N", "how many of the same transactions Python verifies (default: all)"),
            .flag("no-openssl-speed", "do not run 'openssl speed' (the in-process OpenSSL figure is still measured)"),
        ],
        examples: ["Scripts/bench-verify-batch.sh --runs 3", "iap bench verify-batch --transactions 5000 --runs 1"]
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
        report(directoryPrefix: "iap-bench-batch") { directory in
            try measure(options, in: directory)
        }
    }

    /// Runs `measure` in a new private temporary directory (removed afterwards), prints the report it returns as
    /// JSON and exits 0; on an error, prints it and exits 1.
    static func report(directoryPrefix: String, _ measure: (URL) throws -> [String: Any]) -> Never {
        let directory = FileManager.default.temporaryDirectory.appending(
            path: "\(directoryPrefix)-\(UUID().uuidString)"
        )
        do {
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: false,
                attributes: [.posixPermissions: 0o700]
            )
            let report = try measure(directory)
            try? FileManager.default.removeItem(at: directory)
            Output.write(
                try JSONSerialization.data(
                    withJSONObject: report,
                    options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                )
            )
            Output.write("\n")
            terminate(.success)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            Output.error("error: \(IAPError.wrapping(error, as: .internalError, "the benchmark failed").message)")
            terminate(.rejected)
        }
    }

    static func measure(_ options: Options, in directory: URL) throws -> [String: Any] {
        let iap = try executable()
        let root = directory.appending(path: "root.der").path
        let tokens = directory.appending(path: "tokens.txt")
        Output.error("generating \(options.transactions) transactions with iap testdata transactions")
        let generated = try spawn(
            iap,
            ["testdata", "transactions", "--count", String(options.transactions), "--root-out", root],
            input: nil
        )
        guard generated.status == 0, generated.lines == options.transactions else {
            throw IAPError(.internalError, "iap testdata transactions failed (exit \(generated.status))")
        }
        try Data(generated.output).write(to: tokens)
        let input = generated.output
        let verify = [
            "verify", "--batch", "--root", root, "--bundle-id", "com.example.app", "--environment", "Sandbox",
        ]
        let openssl = options.opensslSpeed ? findExecutable("openssl") : nil

        var whole: [Double] = []
        var wholePerCPUSecond: [Double] = []
        var coresUsed: [Double] = []
        var batch: [Double] = []
        var batchPerCPUSecond: [Double] = []
        var batchCoresUsed: [Double] = []
        let answers = directory.appending(path: "answers.jsonl")
        var baseline: [Double] = []
        var baselinePerCPUSecond: [Double] = []
        var speed: [Double] = []
        var python: [Double] = []
        var pythonPerCPUSecond: [Double] = []
        var pythonLibrary: String?
        for run in 1...options.runs {
            Output.error("run \(run)/\(options.runs): OpenSSL's P-256 verify on one core, in this process")
            let threadCPU = threadCPUSeconds()
            let baselineStart = ContinuousClock.now
            let perSecond = ECDSABaseline.p256VerificationsPerSecond(minimumDuration: .seconds(3))
            let baselineWall = (ContinuousClock.now - baselineStart).timeInterval
            baseline.append(perSecond)
            baselinePerCPUSecond.append(perSecond * baselineWall / max(threadCPUSeconds() - threadCPU, 1e-9))
            if let openssl {
                Output.error("run \(run)/\(options.runs): openssl speed -elapsed -seconds 3 ecdsap256")
                speed.append(try opensslSpeed(openssl))
            }
            Output.error("run \(run)/\(options.runs): iap \(verify.joined(separator: " ")) < tokens")
            let childrenCPU = childrenCPUSeconds()
            let began = ContinuousClock.now
            let answered = try spawn(iap, verify, input: input, keepOutput: false)
            let elapsed = ContinuousClock.now - began
            guard answered.status == 0, answered.lines == options.transactions, answered.okLines == answered.lines
            else {
                throw IAPError(
                    .internalError,
                    "iap verify --batch exited \(answered.status) with \(answered.okLines) verified lines of "
                        + "\(answered.lines), expected \(options.transactions)"
                )
            }
            let cpu = childrenCPUSeconds() - childrenCPU
            whole.append(Double(options.transactions) / elapsed.timeInterval)
            wholePerCPUSecond.append(Double(options.transactions) / max(cpu, 1e-9))
            coresUsed.append(cpu / elapsed.timeInterval)

            Output.error(
                "run \(run)/\(options.runs): iap \(verify.joined(separator: " ")) < tokens.txt > answers.jsonl"
            )
            let batchCPU = childrenCPUSeconds()
            let batchBegan = ContinuousClock.now
            let status = try spawn(iap, verify, from: tokens, to: answers)
            let batchElapsed = ContinuousClock.now - batchBegan
            var counted = LineCounter()
            counted.count(try Data(contentsOf: answers))
            guard status == 0, counted.lines == options.transactions, counted.okLines == counted.lines else {
                throw IAPError(
                    .internalError,
                    "iap verify --batch < tokens.txt exited \(status) with \(counted.okLines) verified lines of "
                        + "\(counted.lines), expected \(options.transactions)"
                )
            }
            try? FileManager.default.removeItem(at: answers)
            let batchCPUSeconds = childrenCPUSeconds() - batchCPU
            batch.append(Double(options.transactions) / batchElapsed.timeInterval)
            batchPerCPUSecond.append(Double(options.transactions) / max(batchCPUSeconds, 1e-9))
            batchCoresUsed.append(batchCPUSeconds / batchElapsed.timeInterval)
            if let interpreter = options.python {
                Output.error("run \(run)/\(options.runs): Apple's Python SignedDataVerifier")
                let result = try applePython(
                    interpreter,
                    root: root,
                    tokens: tokens.path,
                    count: options.pythonTransactions ?? options.transactions
                )
                python.append(result.perSecond)
                pythonPerCPUSecond.append(result.perCPUSecond)
                pythonLibrary = result.library
            }
        }

        let rate = BenchCommand.median(whole)
        let batchRate = BenchCommand.median(batch)
        let openSSLRate = BenchCommand.median(baseline)
        func ratio(_ over: Double, of rate: Double = rate) -> Double {
            over > 0 ? (rate / over * 100).rounded() / 100 : 0
        }
        func figures(_ samples: [Double]) -> [String: Any] {
            ["perSecond": BenchCommand.median(samples).rounded(), "samples": samples.map { $0.rounded() }]
        }
        /// A whole `iap verify --batch` process: its rate, the command, and what it cost in CPU.
        func process(_ samples: [Double], redirection: String, perCPUSecond: [Double], cores: [Double]) -> [String: Any]
        {
            figures(samples).merging(
                [
                    "command": "iap " + verify.joined(separator: " ").replacingOccurrences(of: root, with: "root.der")
                        + redirection,
                    "perCPUSecond": BenchCommand.median(perCPUSecond).rounded(),
                    "coresUsed": (BenchCommand.median(cores) * 100).rounded() / 100,
                ],
                uniquingKeysWith: { first, _ in first }
            )
        }
        var report: [String: Any] = [
            "benchmark": "verify-batch",
            "build": BenchCommand.isDebugBuild ? "debug" : "release",
            "cores": ProcessInfo.processInfo.activeProcessorCount,
            "transactions": options.transactions,
            "runs": options.runs,
            "unit": "transactions per second, median of runs",
            "wholeProcess": process(
                whole,
                redirection: " < tokens.txt (piped, output read)",
                perCPUSecond: wholePerCPUSecond,
                cores: coresUsed
            ),
            "wholeProcessBatchJob": process(
                batch,
                redirection: " < tokens.txt > answers.jsonl",
                perCPUSecond: batchPerCPUSecond,
                cores: batchCoresUsed
            ),
            "opensslP256VerifyOneCore": figures(baseline).merging(
                [
                    "source": "ECDSABaseline: EVP_PKEY_verify in this process, one thread, 3 s of wall-clock time",
                    "perCPUSecond": BenchCommand.median(baselinePerCPUSecond).rounded(),
                ],
                uniquingKeysWith: { first, _ in first }
            ),
            "note": "coresUsed is the child's CPU time over its wall-clock time: below the number of cores, other "
                + "processes had part of the machine, and the wall-clock ratios understate what the process does "
                + "alone; the perCPUSecond figures and ratios compare the work per transaction whatever the load",
        ]
        var ratios: [String: Any] = [
            "wholeProcessToOpenSSLOneCore": ratio(openSSLRate),
            "batchJobToOpenSSLOneCore": ratio(openSSLRate, of: batchRate),
            "perCPUSecondToOpenSSL": BenchCommand.median(baselinePerCPUSecond) > 0
                ? (BenchCommand.median(wholePerCPUSecond) / BenchCommand.median(baselinePerCPUSecond) * 100)
                    .rounded() / 100 : 0,
        ]
        var met = batchRate >= 1.5 * openSSLRate
        if !speed.isEmpty {
            report["opensslSpeed"] = figures(speed).merging(
                ["command": "openssl speed -elapsed -seconds 3 ecdsap256 (verify/s)"],
                uniquingKeysWith: { first, _ in first }
            )
            ratios["wholeProcessToOpensslSpeed"] = ratio(BenchCommand.median(speed))
            ratios["batchJobToOpensslSpeed"] = ratio(BenchCommand.median(speed), of: batchRate)
        }
        if python.isEmpty {
            report["applePython"] = "not measured: pass --python PATH (Scripts/bench-verify-batch.sh installs it)"
        } else {
            report["applePython"] = figures(python).merging(
                [
                    "library": pythonLibrary ?? "app-store-server-library",
                    "transactions": options.pythonTransactions ?? options.transactions,
                    "call": "SignedDataVerifier.verify_and_decode_signed_transaction, timed inside Python",
                    "perCPUSecond": BenchCommand.median(pythonPerCPUSecond).rounded(),
                ],
                uniquingKeysWith: { first, _ in first }
            )
            ratios["wholeProcessToApplePython"] = ratio(BenchCommand.median(python))
            ratios["perCPUSecondToApplePython"] =
                (BenchCommand.median(wholePerCPUSecond) / BenchCommand.median(pythonPerCPUSecond) * 100).rounded() / 100
            met = met && rate >= 20 * BenchCommand.median(python)
        }
        report["ratios"] = ratios
        report["targets"] = ["batchJobToOpenSSLOneCore": 1.5, "wholeProcessToApplePython": 20]
        report["met"] = met
        return report
    }

    // MARK: - Child processes

    struct Spawned {
        var status: Int32
        /// Output lines.
        var lines = 0
        /// Output lines that start with `{"ok":true`.
        var okLines = 0
        /// The output, when asked to keep it.
        var output: [UInt8] = []
    }

    /// Runs a program with `input` written to its standard input from another thread while its output is read
    /// (and counted line by line), so that neither pipe stalls the other.
    static func spawn(_ program: URL, _ arguments: [String], input: [UInt8]?, keepOutput: Bool = true) throws
        -> Spawned
    {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        let stdout = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try runUnblockingSignals(process)
        if let input {
            let writer = Thread {
                let handle = stdin.fileHandleForWriting
                input.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count, let base = bytes.baseAddress {
                        let written = write(handle.fileDescriptor, base + offset, bytes.count - offset)
                        if written < 0, errno == EINTR { continue }
                        guard written > 0 else { break }
                        offset += written
                    }
                }
                try? handle.close()
            }
            writer.start()
        }
        var result = Spawned(status: 0)
        var counter = LineCounter()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let descriptor = stdout.fileHandleForReading.fileDescriptor
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            if keepOutput {
                result.output.append(contentsOf: chunk[0..<count])
            }
            counter.count(chunk[0..<count])
        }
        process.waitUntilExit()
        result.status = process.terminationStatus
        result.lines = counter.lines
        result.okLines = counter.okLines
        return result
    }

    /// Runs a program as a batch job: its standard input read from `input`, its standard output written to
    /// `output` (created private), nothing piped through this process. Returns its exit status.
    static func spawn(_ program: URL, _ arguments: [String], from input: URL, to output: URL) throws -> Int32 {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        let source = try FileHandle(forReadingFrom: input)
        defer { try? source.close() }
        try SystemFile.replaceContents(of: output.path(percentEncoded: false), with: [], sync: false)
        let sink = try FileHandle(forWritingTo: output)
        defer { try? sink.close() }
        process.standardInput = source
        process.standardOutput = sink
        process.standardError = FileHandle.nullDevice
        try runUnblockingSignals(process)
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Counts output lines, and those that start with `{"ok":true`, across the chunks they arrive in.
    struct LineCounter {
        private(set) var lines = 0
        private(set) var okLines = 0
        /// How much of `{"ok":true` the current line has matched, and whether it already differs.
        private var matched = 0
        private var differs = false
        private static let okPrefix = Array(#"{"ok":true"#.utf8)

        mutating func count(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                if byte == UInt8(ascii: "\n") {
                    lines += 1
                    if !differs, matched == Self.okPrefix.count {
                        okLines += 1
                    }
                    matched = 0
                    differs = false
                } else if !differs, matched < Self.okPrefix.count {
                    if byte == Self.okPrefix[matched] {
                        matched += 1
                    } else {
                        differs = true
                    }
                }
            }
        }
    }

    /// The CPU time of the children waited for so far, in seconds.
    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
            getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        #else
            getrusage(RUSAGE_CHILDREN, &usage)
        #endif
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The CPU time of the calling thread, in seconds.
    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1e6
    }

    /// Starts a process with no signal blocked in it.
    ///
    /// A child inherits the signal mask of the thread that spawns it, and the threads Swift concurrency runs on
    /// block every signal: `openssl speed`, which stops each measurement with `SIGALRM`, would never stop.
    static func runUnblockingSignals(_ process: Process) throws {
        var none = sigset_t()
        var previous = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
    }

    /// This program's own executable, to run `iap verify --batch` exactly as a user would.
    static func executable() throws -> URL {
        #if os(Linux)
            let path = URL(filePath: "/proc/self/exe").resolvingSymlinksInPath()
            if FileManager.default.isExecutableFile(atPath: path.path) {
                return path
            }
        #endif
        if let url = Bundle.main.executableURL, FileManager.default.isExecutableFile(atPath: url.path) {
            return url
        }
        throw IAPError(.internalError, "cannot find the iap executable to run")
    }

    /// The first executable called `name` on the `PATH`.
    static func findExecutable(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(filePath: String(directory)).appending(path: name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
        }
        return nil
    }

    // MARK: - Other verifiers

    /// Runs `openssl speed -elapsed -seconds 3 ecdsap256` and returns its verify/s figure.
    static func opensslSpeed(_ openssl: URL) throws -> Double {
        let result = try spawn(openssl, ["speed", "-elapsed", "-seconds", "3", "ecdsap256"], input: nil)
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
            interpreter.contains("/") ? URL(filePath: interpreter) : findExecutable(interpreter) ?? URL(filePath: "")
        let result = try spawn(program, ["-c", pythonScript, root, tokens, String(count)], input: nil)
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
