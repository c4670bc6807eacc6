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
            Apple's names and dates in milliseconds since 1970, by ascending sequence. It reads the ledger a page
            of 2,000 entries at a time and writes each page before it reads the next, so its memory does not grow
            with the ledger. It changes nothing.
            """,
        options: CommandLedger.options,
        examples: ["iap ledger export --data ./iap-demo-data/ledger > ledger.jsonl"]
    )

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        try parsed.noPositionals()
        let ledger = try await CommandLedger.open(parsed)
        let encoder = AppStoreJSON.makeEncoder()
        do {
            // A page at a time, written as it is read: the memory of one page, whatever the ledger's size.
            try await ledger.store.forEachPage { page in
                var lines = Data()
                for entry in page {
                    lines += try encoder.encode(entry)
                    lines.append(UInt8(ascii: "\n"))
                }
                Output.write(lines)
            }
        } catch {
            await ledger.close()
            throw error
        }
        await ledger.close()
        return .success
    }
}
