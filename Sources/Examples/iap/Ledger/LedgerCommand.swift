import Foundation
import IAPCommandLine
import IAPCore
import IAPStorageFile

/// `iap ledger`: the ledger from the command line, in a directory or in PostgreSQL.
enum LedgerCommand {
    static let spec = CommandSpec(
        name: "ledger",
        summary:
            "the ledger (a directory or PostgreSQL): ingest, drain, entitlements, history, stats, analytics, "
            + "check, repair, export",
        synopsis: ["<command> \(CommandLedger.synopsis) [options]"],
        discussion: """
            The ledger of recorded and delivered purchases, in a directory (--data DIR, the file store) or in
            PostgreSQL (--database URL [--schema NAME], which several processes may share). Every command reads
            and writes through the EntitlementStore contract, so the answers are the same on both; only ingest, drain
            and repair write, and the commands that read never create a ledger (a directory without one is
            notFound). A catalog given to ingest (--catalog FILE) is saved with the ledger (DIR/\(FileLedgerSite.catalogFileName), or the
            iap_catalog table) for later commands; without one, products are treated as non-consumables.
            Text output shows dates in ISO 8601 UTC; --json output keeps Apple's milliseconds since 1970.
            """,
        subcommands: [
            LedgerIngestCommand.spec, LedgerDrainCommand.spec, LedgerEntitlementsCommand.spec,
            LedgerHistoryCommand.spec, LedgerStatsCommand.spec, LedgerAnalyticsCommand.spec, LedgerCheckCommand.spec,
            LedgerRepairCommand.spec, LedgerExportCommand.spec,
        ],
        examples: [
            "iap ledger stats --data ./iap-demo-data/ledger",
            "iap ledger history --database postgres://iap@127.0.0.1/shop --schema public --user alice --json",
        ]
    )

    static func run(_ arguments: [String]) async -> Never {
        let (command, rest) = spec.subcommand(arguments)
        do {
            let status: ExitCode
            switch command.word {
            case "ingest": status = try await LedgerIngestCommand.run(rest)
            case "drain": status = try await LedgerDrainCommand.run(rest)
            case "entitlements": status = try await LedgerEntitlementsCommand.run(rest)
            case "history": status = try await LedgerHistoryCommand.run(rest)
            case "stats": status = try await LedgerStatsCommand.run(rest)
            case "analytics": status = try await LedgerAnalyticsCommand.run(rest)
            case "check": status = try await LedgerCheckCommand.run(rest)
            case "repair": status = try await LedgerRepairCommand.run(rest)
            default: status = try await LedgerExportCommand.run(rest)
            }
            terminate(status)
        } catch let error as Arguments.UsageError {
            command.fail(error)
        } catch let error as Input.ReadError {
            Output.error("error: \(error.message)")
            terminate(.usage)
        } catch {
            let failure = IAPError.wrapping(error, as: .internalError, "the ledger command failed")
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            terminate(.rejected)
        }
    }
}
