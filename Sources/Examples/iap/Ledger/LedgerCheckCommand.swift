import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPStorageFile

/// `iap ledger check`: reads the ledger without changing it and says what it holds, what is damaged, and what an
/// open would do; optionally verifies every kept signed transaction again.
enum LedgerCheckCommand {
    static let spec = CommandSpec(
        name: "ledger check",
        summary: "verify a ledger without changing it; exit 1 if anything recorded is lost or does not verify",
        synopsis: [
            "\(CommandLedger.synopsis) [--json]",
            "  [--reverify [--root FILE.der]... [--bundle-id ID] [--environment LIST] [--app-apple-id N]",
            "  [--strict-x509] [--require-jws]]",
        ],
        discussion: """
            Reads the ledger and changes nothing: it creates no file, takes no lock (a file ledger may be in use by
            another process meanwhile) and repairs nothing. For a file ledger it reads every file the manifest lists
            and every record in them, going on past damage, and prints what it found ('found: ...'), each problem
            ('error: storageCorrupted: <file> line <n> (byte <offset>): ...'), each thing an open repairs by itself
            ('note: ...': a last record torn by a crash, leftovers of an interrupted compaction), and what an open
            would do ('open: ...'). Then it checks the invariants on every record that verifies: one entry per
            transaction id, unique sequences, delivered entries granted, settled revocations taken back, indexes
            that find every entry, statistics that match the entries. A note names user ids that differ only in
            their Unicode normalization (compared by their bytes, they are two users; earlier versions took them for
            one), escaped as \\u{...} so that they read apart.

            With --reverify, every signed transaction the ledger keeps is verified again with the verifier options
            (as 'iap verify' takes them; the chain is checked at each one's signedDate) and compared with the
            payload recorded beside it; a difference, a failed verification, an unreadable signed transaction, or
            an entry recorded without one since the ledger keeps them is an error naming the transaction. Entries
            an earlier version recorded (before the ledger kept signed transactions) have none: they are counted,
            listed with --json, and are an error only with --require-jws.

            Prints 'ok: ...' when everything holds. With --json, prints one object {"ok", "problems": [...],
            "notes": [...], "found": {...}, "open": {"refuses", "would": [...]}, "reverify": {...}}.

            Exit status: 0 nothing recorded is lost and everything verifies (notes allowed), 1 otherwise (or no
            ledger: notFound), 2 usage error. A damaged file ledger is repaired with 'iap ledger repair'.
            """,
        options: CommandLedger.options + [
            .flag("json", "print one JSON object"),
            .flag("reverify", "verify every kept signed transaction again and compare it with its entry"),
        ] + VerifyCommand.verifierOptions + [
            .flag("require-jws", "with --reverify: an entry without a signed transaction is an error")
        ],
        examples: [
            "iap ledger check --data ./iap-demo-data/ledger",
            "iap ledger check --data ./ledger --reverify --bundle-id com.example.app --environment Production "
                + "--app-apple-id 1234567890",
        ]
    )

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        try parsed.noPositionals()
        let location = try CommandLedger.location(parsed)
        let reverify = parsed.has("reverify")
        let verifierOptions = ["root", "bundle-id", "environment", "app-apple-id", "strict-x509", "require-jws"]
        if !reverify, let given = verifierOptions.first(where: { parsed.options[$0] != nil }) {
            throw Arguments.UsageError(message: "--\(given) goes with --reverify")
        }
        var verifier: AppStoreSignedDataVerifier?
        if reverify {
            let settings = try VerifyCommand.Settings(parsed)
            verifier = try AppStoreSignedDataVerifier(configuration: settings.configuration)
            for note in settings.skippedChecks {
                Output.error("note: \(note)")
            }
        }
        var report = Report()
        let site: any LedgerSite
        switch location {
        case .directory(let directory):
            let inspection: FileEntitlementStore.Inspection
            do {
                inspection = try FileEntitlementStore.inspect(directory: directory)
            } catch {
                return report.fail(error, json: parsed.has("json"))
            }
            report.describe(inspection, directory: directory.path)
            site = FileLedgerSite(store: inspection.store)
        case .database:
            do {
                site = try await CommandLedger.open(parsed)
            } catch let error as Arguments.UsageError {
                throw error
            } catch {
                return report.fail(error, json: parsed.has("json"))
            }
        }
        let store = site.store
        do {
            let findings = try await LedgerInvariants.examine(store)
            report.problems += findings.problems.map { "storageCorrupted: \($0)" }
            for group in findings.equivalentUserIds {
                let named = group.map { "'\(Output.escapedUserId($0))'" }.joined(separator: ", ")
                report.notes.append(
                    "the user ids \(named) differ only in their Unicode normalization: they are \(group.count) users "
                        + "(user ids are compared by their bytes), which earlier versions treated as one; look at "
                        + "their purchases ('iap ledger entitlements --user ID') and token bindings"
                )
            }
            let undecided = findings.undecidedProratedRefunds
            if !undecided.isEmpty {
                let named = undecided.prefix(5).joined(separator: ", ") + (undecided.count > 5 ? ", ..." : "")
                report.notes.append(
                    "\(undecided.count) prorated refund(s) of a non-consumable or a subscription (\(named)) were recorded "
                        + "before the ledger kept the decision on their access: --prorated-refunds decides them, so "
                        + "keep the policy they were processed under"
                )
            }
            let statistics = try await store.statistics()
            report.found["transactions"] = statistics.transactions
            report.found["unknownProduct"] = statistics.unknownProduct
            if statistics.unknownProduct > 0 {
                let parked = try await store.parkedEntries(limit: 5)
                let named = parked.map { "\($0.transactionId) (\($0.productId))" }.joined(separator: ", ")
                report.notes.append(
                    (statistics.unknownProduct == 1 ? "1 purchase is" : "\(statistics.unknownProduct) purchases are")
                        + " recorded but parked, their product unknown to the "
                        + "catalog (\(named)\(statistics.unknownProduct > parked.count ? ", ..." : "")): nothing is "
                        + "granted until the catalog names them; add them to the catalog, then send 'iap serve' SIGHUP "
                        + "(or run 'iap ledger ingest --catalog FILE')"
                )
            }
            let claims = try await store.claims(at: SystemClock().now)
            report.found["claimed"] = claims.claimed
            report.found["staleClaims"] = claims.staleClaims
            if claims.staleClaims > 0 {
                let since = claims.oldestStaleSince.map { " since \(TextDate.text($0))" } ?? ""
                report.notes.append(
                    "\(claims.staleClaims) purchase(s) claimed by a deliverer that stopped before recording the outcome "
                        + "(claims expired\(since)): neither delivered nor waiting for a retry; the next drain of due "
                        + "deliveries delivers them ('iap serve' drains continuously, 'iap ledger ingest' before it "
                        + "reads its input)"
                )
            }
            let hasCatalog = try await site.savedCatalog() != nil
            report.found["catalog"] = hasCatalog
            if !hasCatalog {
                report.notes.append(
                    "no catalog is saved with the ledger: a --grant-url command refuses to start without one, and "
                        + "--ledger-only delivers each purchase as its signed transaction's type says; give --catalog "
                        + "FILE to save one"
                )
            }
            if let verifier {
                let result = try await LedgerReverification.run(store, verifier: verifier) { done, total in
                    Output.error("reverify: \(done) of \(total) entries")
                }
                report.add(result, requireJWS: parsed.has("require-jws"))
            }
        } catch {
            await site.close()
            throw error
        }
        await site.close()
        return report.print(json: parsed.has("json"))
    }

    /// What the check found, printed at the end.
    struct Report {
        var problems: [String] = []
        var notes: [String] = []
        var found: [String: Any] = [:]
        var foundLines: [String] = []
        var refuses = false
        var would: [String] = []
        var reverify: [String: Any]?
        var reverifyLine: String?
        /// What `ok:` says holds.
        var holds = "invariants hold"

        mutating func describe(_ inspection: FileEntitlementStore.Inspection, directory: String) {
            holds = "checksums, the manifest and invariants hold"
            let recovery = inspection.recovery
            found["snapshot"] = recovery.snapshotGeneration.map { Int($0) } ?? NSNull()
            found["snapshotRecords"] = recovery.snapshotRecords
            found["journalRecords"] = recovery.journalRecords
            found["signedRecordsChecked"] = inspection.signedRecordsChecked
            foundLines.append(
                "found: "
                    + (recovery.snapshotGeneration.map { "snapshot \($0) with \(recovery.snapshotRecords) records" }
                        ?? "no snapshot")
                    + ", \(recovery.journalRecords) journal records"
                    + (inspection.signedRecordsChecked > 0
                        ? ", \(inspection.signedRecordsChecked) records of signed transactions" : "")
            )
            for finding in inspection.findings {
                switch finding.severity {
                case .damage: problems.append("\(IAPError.Code.storageCorrupted.rawValue): \(finding)")
                case .note: notes.append(finding.description)
                }
            }
            refuses = !inspection.opens
            if refuses {
                would.append(
                    "refuses this ledger (storageCorrupted); 'iap ledger repair \(directory)' keeps every record "
                        + "that verifies, moves the damaged files aside and says what it dropped"
                )
            } else if recovery.repairedAnything {
                would += recovery.description.split(separator: "\n").dropFirst(2).map(String.init)
            } else {
                would.append("opens it as it is")
            }
        }

        mutating func add(_ result: LedgerReverification, requireJWS: Bool) {
            problems += result.problems.map(\.line)
            if requireJWS {
                problems += result.missing.map {
                    "\(IAPError.Code.notFound.rawValue): transaction \($0): no signed transaction is kept with it"
                }
            }
            reverify = [
                "verified": result.verified,
                "failed": result.problems.count,
                "unsigned": result.missing.count,
                "unsignedTransactionIds": result.missing,
            ]
            var line = "reverify: \(result.verified) signed transactions verify and match their entries"
            if !result.problems.isEmpty {
                line += ", \(result.problems.count) do not"
            }
            if !result.missing.isEmpty {
                line +=
                    "; \(result.missing.count) entries have none (recorded before the ledger kept signed "
                    + "transactions)" + (requireJWS ? "" : ", not an error without --require-jws")
            }
            reverifyLine = line
        }

        /// Reports a ledger that could not be read at all.
        func fail(_ error: any Error, json: Bool) -> ExitCode {
            let failure = IAPError.wrapping(error, as: .storageCorrupted, "the ledger cannot be read")
            if json {
                Self.emit(["ok": false, "problems": ["\(failure.code.rawValue): \(failure.message)"]])
            } else {
                Output.error("error: \(failure.code.rawValue): \(failure.message)")
            }
            return .rejected
        }

        func print(json: Bool) -> ExitCode {
            let ok = problems.isEmpty
            if json {
                var document: [String: Any] = [
                    "ok": ok, "problems": problems, "notes": notes, "found": found,
                    "open": ["refuses": refuses, "would": would],
                ]
                document["reverify"] = reverify ?? NSNull()
                Self.emit(document)
                return ok ? .success : .rejected
            }
            for line in foundLines {
                Output.line(line)
            }
            for note in notes {
                Output.line("note: \(note)")
            }
            for action in would {
                Output.line("open: \(action)")
            }
            if let reverifyLine {
                Output.line(reverifyLine)
            }
            Output.flush()
            guard ok else {
                for problem in problems.prefix(50) {
                    Output.error("error: \(problem)")
                }
                if problems.count > 50 {
                    Output.error("... and \(problems.count - 50) more")
                }
                return .rejected
            }
            Output.line("ok: " + holds + (reverifyLine == nil ? "" : "; the kept signed transactions verify"))
            return .success
        }

        private static func emit(_ document: [String: Any]) {
            if let data = try? JSONSerialization.data(
                withJSONObject: document,
                options: [.sortedKeys, .withoutEscapingSlashes]
            ) {
                Output.write(data)
            }
            Output.write("\n")
        }
    }
}
