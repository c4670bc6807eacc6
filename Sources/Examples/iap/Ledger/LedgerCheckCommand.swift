import Foundation
import IAPCore

/// `iap ledger check`: verifies the ledger's checksums and invariants.
enum LedgerCheckCommand {
    static let spec = CommandSpec(
        name: "ledger check",
        summary: "verify checksums and invariants; exit 1 with the reasons if broken",
        synopsis: ["\(CommandLedger.synopsis) [--json]"],
        discussion: """
            Reads the whole ledger (a file ledger's checksums are verified as it opens) and checks that every
            entry is consistent and that every user's history lists exactly that user's entries, newest first.
            It changes nothing. Prints 'ok: checksums and invariants hold', or each problem (up to 20) as
            'error: storageCorrupted: ...' on standard error. With --json, prints {"ok", "problems": [...]}.

            Exit status: 0 the ledger is sound, 1 it is not (or cannot be opened), 2 usage error.
            """,
        options: CommandLedger.options + [.flag("json", "print one JSON object {\"ok\", \"problems\"}")],
        examples: ["iap ledger check --data ./iap-demo-data/ledger"]
    )

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        try parsed.noPositionals()
        let store: any ListableEntitlementStore
        do {
            store = try await CommandLedger.open(parsed).store
        } catch let error as Arguments.UsageError {
            throw error
        } catch {
            let failure = IAPError.wrapping(error, as: .storageCorrupted, "the ledger cannot be opened")
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            return .rejected
        }
        let problems: [String]
        do {
            problems = try await LedgerInvariants.check(store)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        if parsed.has("json") {
            let document: [String: Any] = ["ok": problems.isEmpty, "problems": problems]
            Output.write(
                try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
            )
            Output.write("\n")
            return problems.isEmpty ? .success : .rejected
        }
        guard problems.isEmpty else {
            for problem in problems.prefix(20) {
                Output.error("error: \(IAPError.Code.storageCorrupted.rawValue): \(problem)")
            }
            if problems.count > 20 {
                Output.error("... and \(problems.count - 20) more")
            }
            return .rejected
        }
        Output.line("ok: checksums and invariants hold")
        return .success
    }
}
