import Foundation
import IAPCommandLine
import IAPCore
import IAPStorageFile

/// `iap ledger repair`: keeps every record of a damaged file ledger that verifies, moves the damaged files aside,
/// and says what it dropped.
enum LedgerRepairCommand {
    static let spec = CommandSpec(
        name: "ledger repair",
        summary: "repair a damaged file ledger: keep every record that verifies, move the damaged files aside",
        synopsis: ["LEDGER [--json]", "--data DIR [--json]"],
        discussion: """
            For a file ledger that 'iap ledger check' reports damaged and that an open refuses (storageCorrupted).
            It takes the ledger's lock (so no other process may hold it), reads every file, keeps every record that
            verifies, copies each damaged file (and the manifest) into LEDGER/damaged-<milliseconds>/, where it is
            kept and never deleted, writes the records that verify as a new snapshot with an empty journal, switches
            the manifest to them in one atomic step, and removes the older files. A crash at any point leaves the
            damaged ledger or the repaired one.

            It prints each record it dropped ('dropped: <file> line <n> (byte <offset>): ...', with the transaction
            when it can tell), then 'repaired: N entries kept (S with their signed transaction); damaged files moved
            to DIR'. A record that depended on a dropped one (a change of a transaction whose insert was damaged) is
            dropped too. When nothing is damaged it only opens the ledger (which cuts a last record torn by a crash
            and removes leftovers of an interrupted compaction) and prints 'nothing to repair'. With --json, one
            object {"repaired", "dropped": [...], "notes": [...], "entries", "signedTransactions",
            "damagedDirectory", "movedFiles"}.

            What was dropped is lost from the ledger: reconcile with the App Store afterwards (the Reconciler) so
            that Apple's history brings back the transactions it knows.

            Exit status: 0 repaired or nothing to repair, 1 the repair failed (the ledger is then as it was), 2
            usage error.
            """,
        options: [
            .value("data", "DIR", "the file ledger (instead of LEDGER)"),
            .flag("json", "print one JSON object"),
        ],
        examples: ["iap ledger repair ./iap-demo-data/ledger"]
    )

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        let positional = try parsed.singlePositional()
        let path: String
        switch (positional, try parsed.value("data")) {
        case (let given?, nil), (nil, let given?):
            guard !given.hasPrefix("postgres://"), !given.hasPrefix("postgresql://") else {
                throw Arguments.UsageError(message: "repair works on a file ledger; PostgreSQL keeps its own integrity")
            }
            path = given
        case (nil, nil):
            throw Arguments.UsageError(message: "the ledger directory is required: iap ledger repair LEDGER")
        case (_?, _?):
            throw Arguments.UsageError(message: "give the ledger once: LEDGER or --data DIR")
        }
        let report: FileEntitlementStore.RepairReport
        do {
            report = try await FileEntitlementStore.repair(directory: URL(fileURLWithPath: path, isDirectory: true))
        } catch {
            let failure = IAPError.wrapping(error, as: .storageFailure, "the repair failed")
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            return .rejected
        }
        let notes = report.findings.filter { $0.severity == .note }.map(\.description)
        if parsed.has("json") {
            let document: [String: Any] = [
                "repaired": report.repaired,
                "dropped": report.dropped.map(\.description),
                "notes": notes,
                "entries": report.entries,
                "signedTransactions": report.signedTransactions,
                "damagedDirectory": report.damagedDirectory ?? NSNull(),
                "movedFiles": report.movedFiles,
            ]
            Output.write(
                try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
            )
            Output.write("\n")
            return .success
        }
        for finding in report.dropped {
            Output.line("dropped: \(finding)")
        }
        for note in notes {
            Output.line("note: \(note)")
        }
        if report.repaired {
            Output.line(
                "repaired: \(report.entries) entries kept (\(report.signedTransactions) with their signed transaction); "
                    + "damaged files moved to \(report.damagedDirectory ?? "-"): "
                    + report.movedFiles.joined(separator: ", ")
            )
            if !report.dropped.isEmpty {
                Output.line(
                    "next: reconcile with the App Store: Apple's history brings back what the dropped records held"
                )
            }
        } else {
            Output.line("nothing to repair: \(report.entries) entries, every record verifies")
        }
        return .success
    }
}
