import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI

/// `iap ledger export`: every entry as one JSON object per line.
enum LedgerExportCommand {
    static let spec = CommandSpec(
        name: "ledger export",
        summary: "every entry as one JSON object per line (a readable backup)",
        synopsis: [CommandLedger.synopsis],
        discussion: """
            Prints every ledger entry, one JSON object per line, with the signed transaction's fields under
            Apple's names and dates in milliseconds since 1970. It changes nothing.
            """,
        options: CommandLedger.options,
        examples: ["iap ledger export --data ./iap-demo-data/ledger > ledger.jsonl"]
    )

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        try parsed.noPositionals()
        let ledger = try await CommandLedger.open(parsed)
        let store = ledger.store
        let entries: [LedgerEntry]
        do {
            entries = try await store.allEntries()
        } catch {
            await ledger.close()
            throw error
        }
        await ledger.close()
        let encoder = AppStoreJSON.makeEncoder()
        for entry in entries {
            Output.write(try encoder.encode(entry))
            Output.write("\n")
        }
        return .success
    }
}
