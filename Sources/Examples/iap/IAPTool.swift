import Foundation
import IAPCommandLine

/// The `iap` tool.
@main
enum IAPTool {
    static let spec = CommandSpec(
        name: "",
        summary: "App Store in-app purchases from the command line",
        synopsis: ["<command> [options]", "help [<command> [<subcommand>]]"],
        discussion: """
            App Store in-app purchases from the command line: verify what the App Store signs, keep a ledger that
            delivers each purchase once, call the App Store Server API, help the support desk, and run a
            simulated App Store. Every command answers --help. Text output shows dates in ISO 8601 UTC; JSON
            output keeps Apple's field names and milliseconds since 1970.

            Exit status: 0 success, 1 rejected or failed, 2 usage error.
            """,
        subcommands: [
            DemoCommand.spec, VerifyCommand.spec, DecodeCommand.spec, LedgerCommand.spec, TestDataCommand.spec,
            APICommand.spec, EmulateCommand.spec, ServeCommand.spec, SupportCommand.spec,
            ReconcileCommand.spec, ConsoleCommand.spec, SandboxCommand.spec,
        ],
        examples: ["iap demo", "iap ledger history --help"]
    )

    /// What `iap bench` says since the benchmarks are an executable of their own.
    static let benchMoved =
        "error: iap bench moved to its own executable: run iap-bench <command> (swift run -c release iap-bench "
        + "verify|verify-batch|ingest|pipeline|store|serve|analytics; iap-bench --help lists them)"

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "bench" {
            Output.error(benchMoved)
            terminate(.usage)
        }
        let (command, rest) = spec.subcommand(arguments)
        switch command.word {
        case "demo":
            await DemoCommand.run(rest)
        case "verify":
            VerifyCommand.run(rest)
        case "decode":
            DecodeCommand.run(rest)
        case "ledger":
            await LedgerCommand.run(rest)
        case "testdata":
            TestDataCommand.run(rest)
        case "api": await APICommand.run(rest)
        case "emulate":
            await EmulateCommand.run(rest)
        case "reconcile":
            await ReconcileCommand.run(rest)
        case "serve":
            await ServeCommand.run(rest)
        case "console":
            await ConsoleCommand.run(rest)
        case "sandbox":
            await SandboxCommand.run(rest)
        default:
            await SupportCommand.run(rest)
        }
    }
}
