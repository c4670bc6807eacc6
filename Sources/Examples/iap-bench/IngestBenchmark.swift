import Foundation
import IAPCommandLine
import IAPCore

/// `iap-bench ingest`: the whole `iap ledger ingest` process as a user runs it, one line at a time (`--window 1`)
/// against a window of lines in flight, on the file store.
enum IngestBenchmark {
    static let spec = CommandSpec(
        program: "iap-bench",
        name: "ingest",
        summary: "the whole iap ledger ingest process on the file store: one line at a time against a window",
        synopsis: ["[--transactions N] [--runs N] [--window N]"],
        discussion: """
            Generates N transactions with 'iap testdata transactions' (the project's test PKI) and, in each run,
            spawns 'iap ledger ingest --data DIR --catalog catalog.json --root root.der --bundle-id
            com.example.app --environment Sandbox --token-is-user --ledger-only --window W FILE' into a new ledger directory, once
            with --window 1 (one line at a time: one durable write after another) and once with --window N (the
            store commits the writes of the lines in flight together), timed from spawn to exit (opening the
            ledger, verifying, recording and every fsync included). Every line must be answered 'ACK ...
            delivered', in input order. Prints JSON with the medians of lines per second, the samples, the child's
            CPU time per line and the ratio of the two rates (target 4). Build with -c release for meaningful
            figures, and build iap too: the iap beside iap-bench is the one measured (swift build -c release
            --product iap).
            """,
        options: [
            .value("transactions", "N", "transactions per run, 1 to 1000000 (default 5000)"),
            .value("runs", "N", "runs of each, 1 to 100; the medians are reported (default 3)"),
            .value("window", "N", "the window compared with --window 1, 2 to 1024 (default 64, ingest's default)"),
        ],
        examples: ["swift run -c release iap-bench ingest --runs 5", "iap-bench ingest --transactions 2000 --runs 1"]
    )

    struct Options {
        var transactions = 5_000
        var runs = 3
        var window = 64
    }

    static func run(_ arguments: [String]) {
        let parsed = spec.parse(arguments)
        var options = Options()
        do throws(Arguments.UsageError) {
            try parsed.noPositionals()
            options.transactions = try parsed.value("transactions").flatMap { Int($0) } ?? options.transactions
            options.runs = try parsed.value("runs").flatMap { Int($0) } ?? options.runs
            options.window = try parsed.value("window").flatMap { Int($0) } ?? options.window
            guard (1...1_000_000).contains(options.transactions), (1...100).contains(options.runs),
                (2...1_024).contains(options.window)
            else {
                throw Arguments.UsageError(
                    message: "--transactions must be 1 to 1000000, --runs 1 to 100 and --window 2 to 1024"
                )
            }
        } catch {
            spec.fail(error)
        }
        Benchmark.reportInTemporaryDirectory(prefix: "iap-bench-ingest") { directory in
            try measure(options, in: directory)
        }
    }

    /// What every run works on: the generated transactions, their root and catalog, and the answers expected.
    struct Setup {
        let iap: URL
        let directory: URL
        let root: String
        let catalog: String
        let tokens: URL
        let expected: [String]
    }

    /// Lines per second and CPU microseconds per line of every run, one line at a time and with the window.
    struct Samples {
        var single: [Double] = []
        var singleCPU: [Double] = []
        var windowed: [Double] = []
        var windowedCPU: [Double] = []
    }

    static func measure(_ options: Options, in directory: URL) throws -> [String: Any] {
        let setup = try prepare(options, in: directory)
        var samples = Samples()
        for run in 1...options.runs {
            // Alternate which goes first, so that neither always runs on a warmer (or busier) machine.
            let order = run % 2 == 1 ? [1, options.window] : [options.window, 1]
            for window in order {
                let result = try ingest(window: window, run: run, options, setup)
                if window == 1 {
                    samples.single.append(result.rate)
                    samples.singleCPU.append(result.cpuPerLine)
                } else {
                    samples.windowed.append(result.rate)
                    samples.windowedCPU.append(result.cpuPerLine)
                }
            }
        }
        return report(options, samples)
    }

    /// Generates the transactions with `iap testdata transactions`, with their root and catalog.
    static func prepare(_ options: Options, in directory: URL) throws -> Setup {
        let iap = try ChildProcess.iap()
        let root = directory.appending(path: "root.der").path
        let catalog = directory.appending(path: "catalog.json").path
        let tokens = directory.appending(path: "tokens.txt")
        Output.error("generating \(options.transactions) transactions with iap testdata transactions")
        let generated = try ChildProcess.spawn(
            iap,
            [
                "testdata", "transactions", "--count", String(options.transactions), "--root-out", root,
                "--catalog-out", catalog,
            ],
            input: nil
        )
        guard generated.status == 0, generated.lines == options.transactions else {
            throw IAPError(.internalError, "iap testdata transactions failed (exit \(generated.status))")
        }
        try Data(generated.output).write(to: tokens)
        return Setup(
            iap: iap,
            directory: directory,
            root: root,
            catalog: catalog,
            tokens: tokens,
            expected: try expectedAnswers(generated.output)
        )
    }

    /// One `iap ledger ingest` into a new ledger: lines per second and the child's CPU microseconds per line.
    static func ingest(window: Int, run: Int, _ options: Options, _ setup: Setup) throws
        -> (rate: Double, cpuPerLine: Double)
    {
        let ledger = setup.directory.appending(path: "ledger-\(window)-\(run)").path
        let arguments = command(
            window: window,
            ledger: ledger,
            catalog: setup.catalog,
            root: setup.root,
            tokens: setup.tokens.path
        )
        Output.error("run \(run)/\(options.runs): iap ledger ingest --window \(window)")
        let childrenCPU = ChildProcess.childrenCPUSeconds()
        let began = ContinuousClock.now
        let answered = try ChildProcess.spawn(setup.iap, arguments, input: nil)
        let elapsed = ContinuousClock.now - began
        let cpu = ChildProcess.childrenCPUSeconds() - childrenCPU
        let lines = String(decoding: answered.output, as: UTF8.self).split(separator: "\n").map(String.init)
        guard answered.status == 0, lines == setup.expected else {
            throw IAPError(
                .internalError,
                "iap ledger ingest --window \(window) exited \(answered.status) with \(lines.count) lines, "
                    + "not the \(setup.expected.count) 'ACK <id> delivered' lines in input order"
            )
        }
        try? FileManager.default.removeItem(atPath: ledger)
        let count = Double(options.transactions)
        return (count / elapsed.timeInterval, cpu / count * 1e6)
    }

    /// The medians of both, the command lines, and the ratio against the target.
    static func report(_ options: Options, _ samples: Samples) -> [String: Any] {
        let singleRate = Benchmark.median(samples.single)
        let windowRate = Benchmark.median(samples.windowed)
        let ratio = singleRate > 0 ? (windowRate / singleRate * 100).rounded() / 100 : 0
        func figures(_ window: Int, _ samples: [Double], _ cpu: [Double]) -> [String: Any] {
            [
                "command": "iap "
                    + command(
                        window: window,
                        ledger: "DIR",
                        catalog: "catalog.json",
                        root: "root.der",
                        tokens: "tokens.txt"
                    )
                    .joined(separator: " "),
                "linesPerSecond": Benchmark.median(samples).rounded(),
                "samples": samples.map { $0.rounded() },
                "cpuMicrosecondsPerLine": Benchmark.median(cpu).rounded(),
            ]
        }
        return [
            "benchmark": "ingest",
            "build": Benchmark.build,
            "cores": ProcessInfo.processInfo.activeProcessorCount,
            "transactions": options.transactions,
            "runs": options.runs,
            "unit": "lines per second of the whole process (spawn to exit, a new file ledger each run), median of runs",
            "oneLineAtATime": figures(1, samples.single, samples.singleCPU),
            "window": figures(options.window, samples.windowed, samples.windowedCPU),
            "ratio": ratio,
            "target": 4,
            "met": ratio >= 4,
        ]
    }

    /// The arguments of one ingest.
    static func command(window: Int, ledger: String, catalog: String, root: String, tokens: String) -> [String] {
        [
            "ledger", "ingest", "--data", ledger, "--catalog", catalog, "--root", root, "--bundle-id",
            "com.example.app", "--environment", "Sandbox", "--token-is-user", "--ledger-only", "--window",
            String(window),
            tokens,
        ]
    }

    /// `ACK <transactionId> delivered` for each generated token, in order.
    static func expectedAnswers(_ tokens: [UInt8]) throws -> [String] {
        try String(decoding: tokens, as: UTF8.self).split(separator: "\n").map { token in
            let segments = token.split(separator: ".", omittingEmptySubsequences: false)
            guard segments.count == 3, let payload = Base64.decodeURL(segments[1]),
                let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
                let id = object["transactionId"] as? String
            else {
                throw IAPError(.internalError, "iap testdata transactions wrote a line that is not a transaction")
            }
            return "ACK \(id) delivered"
        }
    }
}
