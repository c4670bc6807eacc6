import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI
import IAPStorageFile

/// The support audit of a ledger, for `iap serve` and `iap support lookup-order` (which append to it), `iap support
/// audit verify` (which checks it) and `iap support audit reseal` (which lets support write to it again).
enum SupportAuditCommand {
    /// An audit log opened for appending, and how to close it.
    struct OpenLog {
        let log: any SupportAuditLog
        let close: @Sendable () async -> Void
    }

    /// Opens the audit that lives with the ledger (the site's, guarded by the head the ledger keeps: a log that does
    /// not match it is opened refusing every append; the site closes it), or `auditPath`, anchored to the ledger's
    /// identity but not guarded (the ledger keeps the head of its own audit only).
    static func open(_ site: any LedgerSite, auditPath: String?) async throws -> OpenLog {
        guard let auditPath else {
            return OpenLog(log: try await site.supportAudit(observer: { _ in }), close: {})
        }
        let log = try FileSupportAuditLog(path: auditPath, ledgerId: try await site.store.ledgerIdentity())
        return OpenLog(log: log, close: { await log.close() })
    }

    /// `iap support audit verify`.
    static func run(_ arguments: [String], spec: CommandSpec) async -> Never {
        let parsed = spec.parse(arguments)
        let ledgerArgument: String?
        do {
            ledgerArgument = try parsed.singlePositional()
            _ = try CommandLedger.location(parsed, ledger: ledgerArgument)
        } catch let error as Arguments.UsageError {
            spec.fail(error)
        } catch {
            spec.fail(Arguments.UsageError(message: "\(error)"))
        }
        do {
            let result = try await verify(parsed, ledger: ledgerArgument)
            terminate(report(result, json: parsed.has("json")))
        } catch let error as Arguments.UsageError {
            spec.fail(error)
        } catch {
            let failure = IAPError.wrapping(error, as: .internalError, "the audit could not be verified")
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            terminate(.rejected)
        }
    }

    /// Reads and checks the audit, writing nothing: a file ledger is opened read-only, without its lock (another
    /// process may hold it), for the head it keeps.
    static func verify(_ parsed: Arguments, ledger argument: String?) async throws -> SupportAuditVerification {
        let auditPath = try parsed.value("audit")
        if case .directory(let directory) = try CommandLedger.location(parsed, ledger: argument) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory),
                isDirectory.boolValue
            else {
                throw IAPError(.notFound, "there is no ledger at \(directory.path)")
            }
            if let auditPath {
                // Anchored to the ledger's identity, read without opening the ledger.
                return try FileLedgerSite.verifySupportAudit(at: auditPath, ledgerIn: directory)
            }
        }
        let site = try await CommandLedger.open(parsed, ledger: argument)
        do {
            let result =
                if let auditPath {
                    try FileSupportAuditLog.verify(path: auditPath, ledgerId: try await site.store.ledgerIdentity())
                } else {
                    try await site.verifySupportAudit()
                }
            await site.close()
            return result
        } catch {
            await site.close()
            throw error
        }
    }

    /// `iap support audit reseal`: appends an `audit.reseal` entry that records what was found, and sets the ledger's
    /// head to it, so that support may write to the audit again.
    static func runReseal(_ arguments: [String], spec: CommandSpec) async -> Never {
        let parsed = spec.parse(arguments)
        let ledgerArgument: String?
        let reason: String
        let actor: String
        let events: any EventSink
        do {
            ledgerArgument = try parsed.singlePositional()
            events = try CommandEvents.sink(parsed)
            _ = try CommandLedger.location(parsed, ledger: ledgerArgument)
            guard let given = try parsed.value("reason"), !given.allSatisfy(\.isWhitespace) else {
                throw Arguments.UsageError(message: "--reason TEXT is required: say why the audit is resealed")
            }
            reason = given
            let named = try parsed.value("operator")
            if named?.isEmpty == true {
                throw Arguments.UsageError(message: "--operator needs a name")
            }
            actor = named ?? SupportAuditChain.osUser
        } catch let error as Arguments.UsageError {
            spec.fail(error)
        } catch {
            spec.fail(Arguments.UsageError(message: "\(error)"))
        }
        do {
            let site = try await CommandLedger.open(parsed, ledger: ledgerArgument, access: .readWrite)
            let code: ExitCode
            do {
                code = try await reseal(
                    site,
                    reason: reason,
                    actor: actor,
                    json: parsed.has("json"),
                    events: events
                )
            } catch {
                await site.close()
                throw error
            }
            await site.close()
            terminate(code)
        } catch let error as Arguments.UsageError {
            spec.fail(error)
        } catch {
            let failure = IAPError.wrapping(error, as: .internalError, "the audit could not be resealed")
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            terminate(.rejected)
        }
    }

    /// Reseals the ledger's own audit when it does not match the ledger's head; writes nothing when it does.
    static func reseal(
        _ site: any LedgerSite,
        reason: String,
        actor: String,
        json: Bool,
        events: any EventSink
    ) async throws -> ExitCode {
        // The ledger's head first, then the log (an append between the two reads leaves the log ahead).
        let checked = try await site.verifySupportAudit()
        let ledgerHead = checked.ledgerHead
        guard !checked.isIntact else {
            let count = checked.entryCount
            let line =
                "ok: nothing to reseal: the audit matches the ledger's head (\(count) entr\(count == 1 ? "y" : "ies")"
                + ", head \(checked.head.lastHash))"
            if json {
                try writeJSON(["resealed": false, "entries": count, "head": checked.head.lastHash])
            } else {
                Output.line(line)
            }
            return .success
        }
        var entry = SupportAuditEntry(
            at: SystemClock().now,
            actor: actor,
            action: "audit.reseal",
            orderId: "",
            userId: nil,
            outcomes: []
        )
        entry.reseal = SupportAuditEntry.Reseal(
            reason: reason,
            ledgerHead: ledgerHead,
            logHead: checked.head,
            recordedHead: checked.recordedHead,
            problems: checked.problems.map(\.description)
        )
        // The entry first, then the ledger's head: a crash between leaves the ledger's head on what was found, and a
        // second reseal goes on from there.
        let head = try await site.resealSupportAudit(with: entry)
        events.record(
            IAPEvent(
                time: SystemClock().now,
                event: "support.audit",
                outcome: "resealed",
                message: "the support audit was resealed by \(actor) at entry \(head.entries): \(reason)",
                auditHead: head.lastHash
            )
        )
        let ledgerSaid = ledgerHead.map { "\($0.entries) entries with head \($0.lastHash)" } ?? "no head"
        if json {
            var document: [String: Any] = [
                "resealed": true, "entries": head.entries, "head": head.lastHash,
                "found": [
                    "logEntries": checked.entryCount, "logHead": checked.head.lastHash,
                    "problems": checked.problems.map(\.description),
                ],
            ]
            if let ledgerHead {
                document["ledgerHead"] = ["entries": ledgerHead.entries, "lastHash": ledgerHead.lastHash]
            }
            try writeJSON(document)
        } else {
            for problem in checked.problems.prefix(20) {
                Output.line("found: \(problem)")
            }
            Output.line(
                "resealed: entry \(head.entries) (audit.reseal by \(actor)), head \(head.lastHash); the ledger had "
                    + "\(ledgerSaid), the log \(checked.entryCount) entries with head \(checked.head.lastHash)"
            )
        }
        return .success
    }

    private static func writeJSON(_ document: [String: Any]) throws {
        Output.write(
            try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
        )
        Output.write("\n")
    }

    /// Prints the result; the exit status it calls for.
    static func report(_ result: SupportAuditVerification, json: Bool) -> ExitCode {
        if json {
            var document: [String: Any] = [
                "ok": result.isIntact,
                "entries": result.entryCount,
                "head": result.head.lastHash,
                "problems": result.problems.map { problem -> [String: Any] in
                    var item: [String: Any] = ["location": problem.location, "message": problem.message]
                    item["entry"] = problem.entry
                    return item
                },
                "notes": result.notes,
            ]
            if let recorded = result.recordedHead {
                document["recordedHead"] = ["entries": recorded.entries, "lastHash": recorded.lastHash]
            }
            if let ledger = result.ledgerHead {
                document["ledgerHead"] = ["entries": ledger.entries, "lastHash": ledger.lastHash]
            }
            do {
                Output.write(
                    try JSONSerialization.data(
                        withJSONObject: document,
                        options: [.sortedKeys, .withoutEscapingSlashes]
                    )
                )
            } catch {
                Output.error("error: internalError: the result cannot be written as JSON")
                return .rejected
            }
            Output.write("\n")
            return result.isIntact ? .success : .rejected
        }
        for note in result.notes {
            Output.error("note: \(note)")
        }
        guard result.isIntact else {
            for problem in result.problems.prefix(20) {
                Output.error("error: \(IAPError.Code.storageCorrupted.rawValue): \(problem)")
            }
            if result.problems.count > 20 {
                Output.error("... and \(result.problems.count - 20) more")
            }
            return .rejected
        }
        let count = result.entryCount
        Output.line("ok: \(count) entr\(count == 1 ? "y" : "ies"), head \(result.head.lastHash)")
        return .success
    }
}
