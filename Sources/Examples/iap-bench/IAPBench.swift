import IAPCommandLine

/// `iap-bench`: benchmarks that print machine-readable figures.
@main
enum IAPBench {
    static let spec = CommandSpec(
        program: "iap-bench",
        name: "",
        summary:
            "run a benchmark: iap-bench verify | verify-batch | ingest | pipeline | store | serve | analytics "
            + "| reconcile",
        discussion: """
            Benchmarks that print machine-readable figures (JSON on standard output, progress on standard
            error). Build with -c release for meaningful figures: swift run -c release iap-bench verify
            """,
        subcommands: [
            VerifyBenchmark.spec, BatchVerifyBenchmark.spec, IngestBenchmark.spec, PipelineBenchmark.spec,
            StoreBenchmark.spec, ServeBenchmark.spec, AnalyticsBenchmark.spec, ReconcileBenchmark.spec,
        ],
        examples: ["swift run -c release iap-bench pipeline --deliveries 2000"]
    )

    static func main() async {
        let (command, rest) = spec.subcommand(Array(CommandLine.arguments.dropFirst()))
        switch command.word {
        case "verify":
            VerifyBenchmark.run(rest)
        case "verify-batch":
            BatchVerifyBenchmark.run(rest)
        case "ingest":
            IngestBenchmark.run(rest)
        case "pipeline":
            await PipelineBenchmark.run(rest)
        case "serve":
            await ServeBenchmark.run(rest)
        case "analytics":
            await AnalyticsBenchmark.run(rest)
        case "reconcile":
            await ReconcileBenchmark.run(rest)
        default:
            await StoreBenchmark.run(rest)
        }
    }
}
