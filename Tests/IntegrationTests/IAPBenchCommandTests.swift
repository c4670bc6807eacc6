import Foundation
import IAPCore
import IAPTestSupport
import Testing

/// `iap-bench`, the benchmarks' own executable: its help and usage errors, a short run of each benchmark with the
/// JSON fields it prints, the `iap` it runs (beside it, and what to build when it is not), and `iap bench`, which
/// points to it. Serialized: the benchmarks time themselves, and would crowd each other.
@Suite("iap-bench", .serialized)
struct IAPBenchCommandTests {
    typealias CLI = CommandLineContractTests

    /// Every benchmark, with every option its usage must explain.
    static let commands: [(word: String, options: [String])] = [
        ("verify", ["seconds", "runs", "only"]),
        ("verify-batch", ["transactions", "runs", "python", "python-transactions", "no-openssl-speed"]),
        ("ingest", ["transactions", "runs", "window"]),
        ("pipeline", ["deliveries", "runs", "concurrency"]),
        (
            "store",
            [
                "transactions", "deliveries", "writers", "runs", "dir", "open-only", "database",
                "database-password-file", "fsync-dir", "scale", "schema", "child-deliveries", "groups", "child-kind",
            ]
        ),
        (
            "serve",
            [
                "seconds", "clients", "transactions", "data", "database", "processes", "child-server", "schema",
                "root-file",
            ]
        ),
        ("analytics", ["transactions", "runs", "dir"]),
        ("reconcile", ["families", "runs"]),
    ]

    /// `iap-bench`, beside the `iap` the other tests run (or `IAP_BENCH_BINARY`).
    static func binary() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["IAP_BENCH_BINARY"] {
            return URL(filePath: path)
        }
        let bench = try EmulatorProcess.binary().deletingLastPathComponent().appending(path: "iap-bench")
        guard FileManager.default.isExecutableFile(atPath: bench.path) else {
            throw IAPError(.invalidConfiguration, "no iap-bench beside iap (\(bench.path)); build it")
        }
        return bench
    }

    /// Runs `iap-bench` (or `executable`), waiting for it without holding a thread of the concurrency pool.
    static func bench(_ arguments: [String], executable: URL? = nil) async throws -> CLI.Run {
        CLI.Run(try await ChildProcess.run(try executable ?? binary(), arguments, timeout: .seconds(600)))
    }

    /// A benchmark's report: exit 0, one JSON object on standard output with exactly the fields `keys`.
    static func report(_ arguments: [String], keys: Set<String>) async throws -> [String: Any] {
        let run = try await bench(arguments)
        #expect(run.status == 0, "iap-bench \(arguments.joined(separator: " ")): \(run.stderr)")
        let report = try CLI.json(run.stdout)
        #expect(Set(report.keys) == keys, "iap-bench \(arguments.joined(separator: " "))")
        #expect(report["build"] as? String == "debug" || report["build"] as? String == "release")
        return report
    }

    @Test func theBenchmarksExplainThemselves() async throws {
        let top = try await Self.bench(["--help"])
        #expect(top.status == 0)
        #expect(top.stdout.hasPrefix("usage: iap-bench <command>"))
        for (word, options) in Self.commands {
            #expect(top.stdoutLines.contains { $0.hasPrefix("  \(word) ") }, "\(word) is not listed")
            for help in ["--help", "-h"] {
                let run = try await Self.bench([word, help])
                #expect(run.status == 0 && run.stderr.isEmpty, "iap-bench \(word) \(help): \(run.stderr)")
                #expect(run.stdout.hasPrefix("usage: iap-bench \(word) "))
                let lines = CommandHelpTests.optionLines(run.stdout)
                for option in options + ["help"] {
                    #expect(
                        lines.contains {
                            $0.hasPrefix("  --\(option) ") || $0 == "  --\(option)"
                                || $0.hasPrefix("  -h, --\(option) ")
                        },
                        "iap-bench \(word) --help does not explain --\(option)"
                    )
                }
                #expect(run.stdout.contains("\nexample:\n  ") || run.stdout.contains("\nexamples:\n  "))
                #expect(!run.stdout.contains("iap bench"), "iap-bench \(word) --help still says iap bench")
            }
            #expect(try await Self.bench(["help", word]).stdout == (try await Self.bench([word, "--help"])).stdout)
        }
        for (arguments, problem, help) in [
            (["pipeline", "--bogus"], "unknown option --bogus", "iap-bench pipeline --help"),
            (["verify", "--runs", "0"], "--runs must be a whole number between 1 and 1000", "iap-bench verify --help"),
            (["frobnicate"], "unknown command 'frobnicate'", "iap-bench --help"),
        ] {
            let run = try await Self.bench(arguments)
            #expect(run.status == 2, "\(arguments) exited \(run.status)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderrLines == ["error: usage: \(problem) (see \(help))"], "\(arguments)")
        }
    }

    @Test func iapBenchSaysWhereTheBenchmarksWent() async throws {
        for arguments in [["bench"], ["bench", "--help"], ["bench", "store", "--runs", "1"]] {
            let run = try await CLI.iap(arguments)
            #expect(run.status == 2, "\(arguments)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderrLines.count == 1, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains("iap-bench <command>") && run.stderr.contains("swift run -c release iap-bench"))
        }
        let help = try await CLI.iap(["--help"])
        #expect(!help.stdoutLines.contains { $0.hasPrefix("  bench ") })
    }

    @Test func pipelineAndVerifyPrintTheirFigures() async throws {
        let pipeline = try await Self.report(
            ["pipeline", "--deliveries", "40", "--runs", "1", "--concurrency", "2"],
            keys: [
                "benchmark", "build", "concurrentTasks", "cores", "deliveriesPerRun", "oneTask", "runs", "store",
                "unit",
            ]
        )
        #expect(pipeline["benchmark"] as? String == "pipeline")
        #expect((pipeline["concurrentTasks"] as? [String: Any])?["tasks"] as? Int == 2)
        let verify = try await Self.report(
            ["verify", "--seconds", "0.05", "--runs", "1"],
            keys: [
                "appleChainNoCache", "benchmark", "breakdown", "build", "met", "noCache", "opensslP256Verify", "ratios",
                "runs", "secondsPerRun", "targets", "unit", "warmCache",
            ]
        )
        #expect(((verify["warmCache"] as? [String: Any])?["perSecond"] as? Double ?? 0) > 0)
    }

    @Test func theProcessBenchmarksRunTheIAPBesideThem() async throws {
        let ingest = try await Self.report(
            ["ingest", "--transactions", "30", "--runs", "1", "--window", "8"],
            keys: [
                "benchmark", "build", "cores", "met", "oneLineAtATime", "ratio", "runs", "target", "transactions",
                "unit",
                "window",
            ]
        )
        #expect(
            (ingest["window"] as? [String: Any])?["command"] as? String
                == "iap ledger ingest --data DIR --catalog catalog.json --root root.der --bundle-id com.example.app "
                + "--environment Sandbox --token-is-user --ledger-only --window 8 tokens.txt"
        )
        let batch = try await Self.report(
            ["verify-batch", "--transactions", "30", "--runs", "1", "--no-openssl-speed"],
            keys: [
                "applePython", "benchmark", "build", "cores", "met", "note", "opensslP256VerifyOneCore", "ratios",
                "runs",
                "targets", "transactions", "unit", "wholeProcess", "wholeProcessBatchJob",
            ]
        )
        #expect(((batch["wholeProcess"] as? [String: Any])?["perSecond"] as? Double ?? 0) > 0)
    }

    @Test func withoutAnIAPBesideItABenchmarkSaysWhatToBuild() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-bench-alone-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let alone = directory.appending(path: "iap-bench")
        do {
            try FileManager.default.linkItem(at: try Self.binary(), to: alone)
        } catch {
            try FileManager.default.copyItem(at: try Self.binary(), to: alone)
        }
        for benchmark in ["verify-batch", "ingest"] {
            let run = try await Self.bench([benchmark, "--transactions", "5", "--runs", "1"], executable: alone)
            #expect(run.status == 1, "\(benchmark): \(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.contains("no iap beside iap-bench"), "\(benchmark): \(run.stderr)")
            #expect(run.stderr.contains("--product iap"), "\(benchmark): \(run.stderr)")
        }
    }

    @Test func theStoreAndServeBenchmarksPrintTheirFigures() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-bench-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try await Self.report(
            [
                "store", "--transactions", "200", "--deliveries", "20", "--writers", "2", "--runs", "1", "--dir",
                directory.path,
            ],
            keys: ["benchmark", "build", "cores", "durableDeliveries", "open", "runs", "store", "targets"]
        )
        // The open figures come from a child process: iap-bench store --open-only.
        let open = try #require((store["open"] as? [[String: Any]])?.first)
        #expect(open["transactions"] as? Int == 200)
        #expect((open["samples"] as? [[String: Any]])?.first?["openSeconds"] is Double)
        // Deliveries into a copy of the 200-transaction store, with 2 writers.
        let intoStore = try #require(open["deliveries"] as? [String: Any])
        #expect((intoStore["perSecond"] as? Double ?? 0) > 0)
        #expect(intoStore["writers"] as? Int == 2)
        let serve = try await Self.report(
            ["serve", "--seconds", "1", "--clients", "2", "--transactions", "100"],
            keys: [
                "benchmark", "build", "clients", "cores", "errors", "goal", "latencyMs", "met", "pipeline", "ratio",
                "seconds", "statuses", "store", "submissions", "submissionsPerSecond", "unit",
            ]
        )
        #expect(serve["errors"] as? Int == 0)
        let misused = try await Self.bench(["serve", "--processes", "2"])
        #expect(misused.status == 2)
        #expect(misused.stderr.contains("--processes takes 2 to 8, with --database"))
        let analytics = try await Self.report(
            ["analytics", "--transactions", "2000", "--runs", "1"],
            keys: [
                "activeSubscriptions", "benchmark", "build", "consolePagesMs", "cores", "goalSeconds", "met",
                "openSeconds", "reportSeconds", "transactions",
            ]
        )
        #expect(analytics["transactions"] as? Int == 2_000)
        #expect((analytics["activeSubscriptions"] as? Int ?? 0) > 0)
        #expect(((analytics["reportSeconds"] as? [String: Any])?["samples"] as? [Double])?.count == 1)
        let pages = try #require(analytics["consolePagesMs"] as? [String: [String: Any]])
        #expect(
            Set(pages.keys) == [
                "overview", "analytics", "customer", "customerByTransaction", "customerNotFound", "deadLetters",
                "audit", "notifications",
            ]
        )
        #expect(pages["overview"]?["requests"] as? Int == 4)
        let reconcile = try await Self.report(
            ["reconcile", "--families", "100,200", "--runs", "1"],
            keys: ["benchmark", "build", "cores", "perFamilyLargestToSmallest", "runs", "sizes"]
        )
        let sizes = try #require(reconcile["sizes"] as? [[String: Any]])
        #expect(sizes.map { $0["families"] as? Int } == [100, 200])
        // A transaction-history and a refund-history request per family, every family its own Apple account.
        #expect(sizes.map { $0["requests"] as? Int } == [200, 400])
        #expect(sizes.allSatisfy { ($0["microsecondsPerFamily"] as? Double ?? 0) > 0 })
        let tooSmall = try await Self.bench(["reconcile", "--families", "10"])
        #expect(tooSmall.status == 2)
        #expect(
            tooSmall.stderrLines == [
                "error: usage: --families takes sizes from 100 to 1000000 (see iap-bench reconcile --help)"
            ]
        )
    }
}

/// `iap-bench serve --database URL --processes 2`: server processes of their own on one schema.
@Suite(
    "iap-bench serve on PostgreSQL",
    .serialized,
    .enabled(
        if: PostgresTestServer.isConfigured,
        "needs PostgreSQL: export IAP_TEST_POSTGRES_URL=$(Scripts/postgres-server.sh start)"
    )
)
struct IAPBenchServeProcessesTests {
    @Test func oneServerProcessAndTwoOnOneSchemaPrintTheirRates() async throws {
        let url = try PostgresTestServer.requireURL()
        let serve = try await IAPBenchCommandTests.report(
            [
                "serve", "--database", url, "--processes", "2", "--seconds", "1", "--clients", "2",
                "--transactions", "100",
            ],
            keys: [
                "benchmark", "build", "clients", "cores", "errors", "goal", "latencyMs", "met", "pipeline", "processes",
                "ratio", "seconds", "statuses", "store", "submissions", "submissionsPerSecond", "unit",
            ]
        )
        #expect(serve["store"] as? String == "PostgresEntitlementStore")
        let processes = try #require(serve["processes"] as? [String: Any])
        let one = try #require(processes["one"] as? [String: Any])
        let several = try #require(processes["several"] as? [String: Any])
        #expect(one["processes"] as? Int == 1)
        #expect(several["processes"] as? Int == 2)
        #expect(several["connectionsPerProcess"] as? Int == 1)
        for run in [one, several] {
            #expect(run["errors"] as? Int == 0)
            #expect((run["submissions"] as? Int ?? 0) > 0)
        }
        #expect(processes["ratio"] is Double)
    }
}
