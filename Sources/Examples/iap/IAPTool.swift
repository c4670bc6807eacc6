import Foundation

/// The `iap` command-line tool.
@main
enum IAPTool {
    static let usage = """
        usage: iap <command> [options]

        commands:
          demo      the whole chain on a simulated App Store, told as a story (start here)
          verify    verify App Store signed data (JWS) and print its payload
          decode    print a JWS's header and payload WITHOUT verifying it
          ledger    the ledger (a directory or PostgreSQL): ingest, entitlements, history, stats, check, export
          testdata  signed App Store data from a test PKI, for trying the tools
          bench     run a benchmark: iap bench verify | pipeline | store
          api       call the App Store Server API: iap api <transaction|history|statuses|...> ...
          emulate   serve a local App Store (App Store Server API and control endpoints) on loopback
          support   support desk tools: iap support lookup-order ORDER_ID [--redeliver] ...

        Run 'iap <command> --help' for a command's options.
        """

    static func main() async {
        var arguments = CommandLine.arguments.dropFirst()
        guard let command = arguments.popFirst() else {
            Output.error(usage)
            terminate(.usage)
        }
        let rest = Array(arguments)
        switch command {
        case "demo":
            await DemoCommand.run(rest)
        case "verify":
            VerifyCommand.run(rest)
        case "decode":
            DecodeCommand.run(rest)
        case "bench":
            await BenchCommand.run(rest)
        case "ledger":
            await LedgerCommand.run(rest)
        case "testdata":
            TestDataCommand.run(rest)
        case "api": await APICommand.run(rest)
        case "emulate":
            await EmulateCommand.run(rest)
        case "support":
            await SupportCommand.run(rest)
        case "help", "--help", "-h":
            Output.line(usage)
            terminate(.success)
        default:
            Output.error("error: usage: unknown command '\(command)'")
            Output.error(usage)
            terminate(.usage)
        }
    }
}
