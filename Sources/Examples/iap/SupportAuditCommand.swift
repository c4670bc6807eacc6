import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI
import IAPStorageFile
import IAPStoragePostgres

/// The support audit of a ledger, for `iap serve` and `iap support lookup-order` (which append to it), `iap support
/// audit verify` (which checks it) and `iap support audit reseal` (which lets support write to it again).
enum SupportAuditCommand {
    /// An audit log opened for appending, and how to close it.
    struct OpenLog {
        let log: any SupportAuditLog
        /// The ledger's own audit, guarded by the head the ledger keeps; `nil` for `--audit FILE`.
        let guarded: LedgerGuardedSupportAuditLog?
        let close: @Sendable () async -> Void
    }

    /// The name of the audit log in a file ledger's directory.
    static let fileName = "support-audit.jsonl"

    /// Opens the audit that lives with the ledger (its directory's file, or its schema's table), guarded by the head
    /// the ledger keeps (a log that does not match it is opened refusing every append), or `auditPath`, anchored to
    /// the ledger's identity but not guarded (the ledger keeps the head of its own audit only).
    ///
    /// - Parameter observer: Told whether the ledger's own audit is writable, at once and at every change.
    static func open(
        _ ledger: CommandLedger,
        auditPath: String?,
        observer: @escaping @Sendable (LedgerGuardedSupportAuditLog.Standing) -> Void = { _ in }
    ) async throws -> OpenLog {
        let ledgerId = try await ledger.store.ledgerIdentity()
        if let auditPath {
            let log = try FileSupportAuditLog(path: auditPath, ledgerId: ledgerId)
            return OpenLog(log: log, guarded: nil, close: { await log.close() })
        }
        let keeper = try keeper(ledger)
        switch ledger.location {
        case .directory(let directory):
            let log: FileSupportAuditLog
            do {
                log = try FileSupportAuditLog(path: directory.appendingPathComponent(fileName).path, ledgerId: ledgerId)
            } catch let error as IAPError where error.code == .storageCorrupted {
                // A log that does not match its own head: open refusing, so that the rest goes on.
                let guarded = LedgerGuardedSupportAuditLog(unopened: error, keeper: keeper, observer: observer)
                return OpenLog(log: guarded, guarded: guarded, close: {})
            }
            do {
                let guarded = try await LedgerGuardedSupportAuditLog(log: log, keeper: keeper, observer: observer)
                return OpenLog(log: guarded, guarded: guarded, close: { await log.close() })
            } catch {
                await log.close()
                throw error
            }
        case .database:
            guard let store = ledger.store as? PostgresEntitlementStore else {
                throw IAPError(.internalError, "a database ledger is not a PostgresEntitlementStore")
            }
            // It shares the ledger's connections, which the ledger closes.
            let guarded = try await LedgerGuardedSupportAuditLog(
                log: try await PostgresSupportAuditLog(store: store),
                keeper: keeper,
                observer: observer
            )
            return OpenLog(log: guarded, guarded: guarded, close: {})
        }
    }

    /// The ledger as the keeper of its audit's head.
    static func keeper(_ ledger: CommandLedger) throws -> any SupportAuditHeadKeeper {
        guard let keeper = ledger.store as? any SupportAuditHeadKeeper else {
            throw IAPError(.internalError, "the ledger does not keep its support audit's head")
        }
        return keeper
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
        switch try CommandLedger.location(parsed, ledger: argument) {
        case .directory(let directory):
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory),
                isDirectory.boolValue
            else {
                throw IAPError(.notFound, "there is no ledger at \(directory.path)")
            }
            let identity = try FileEntitlementStore.ledgerIdentity(in: directory)
            // The head the ledger keeps is read first (a read-only open: no lock, nothing written), then the log: an
            // append between the two reads leaves the log ahead of the head, which is no tampering.
            var ledgerHead: SupportAuditHead?
            if auditPath == nil {
                let ledger = try await CommandLedger.open(parsed, ledger: argument)
                ledgerHead = try await keeper(ledger).supportAuditHead()
                await ledger.store.close()
            }
            var result = try FileSupportAuditLog.verify(
                path: auditPath ?? directory.appendingPathComponent(fileName).path,
                ledgerId: identity ?? ""
            )
            if auditPath == nil {
                result = result.checked(againstLedgerHead: ledgerHead)
            }
            if identity == nil, result.entryCount > 0 || result.recordedHead != nil {
                result.problems.insert(
                    .init(
                        entry: nil,
                        location: "",
                        message: "the ledger has no identity (\(directory.appendingPathComponent("ledger-id").path) "
                            + "is missing), so the chain's anchor cannot hold"
                    ),
                    at: 0
                )
            }
            return result
        case .database:
            let ledger = try await CommandLedger.open(parsed, ledger: argument)
            do {
                guard let store = ledger.store as? PostgresEntitlementStore else {
                    throw IAPError(.internalError, "a database ledger is not a PostgresEntitlementStore")
                }
                let result =
                    if let auditPath {
                        try FileSupportAuditLog.verify(path: auditPath, ledgerId: try await store.ledgerIdentity())
                    } else {
                        // The ledger's head first, then the log (see above).
                        try await {
                            let ledgerHead = try await store.supportAuditHead()
                            return try await PostgresSupportAuditLog(store: store).verify()
                                .checked(againstLedgerHead: ledgerHead)
                        }()
                    }
                await store.close()
                return result
            } catch {
                await ledger.store.close()
                throw error
            }
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
            let ledger = try await CommandLedger.open(parsed, ledger: ledgerArgument, access: .readWrite)
            let code: ExitCode
            do {
                code = try await reseal(
                    ledger,
                    reason: reason,
                    actor: actor,
                    json: parsed.has("json"),
                    events: events
                )
            } catch {
                await ledger.store.close()
                throw error
            }
            await ledger.store.close()
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
        _ ledger: CommandLedger,
        reason: String,
        actor: String,
        json: Bool,
        events: any EventSink
    ) async throws -> ExitCode {
        let keeper = try keeper(ledger)
        let ledgerId = try await ledger.store.ledgerIdentity()
        let ledgerHead = try await keeper.supportAuditHead()
        let found: SupportAuditVerification
        let append: (SupportAuditEntry) async throws -> SupportAuditEntry
        switch ledger.location {
        case .directory(let directory):
            let path = directory.appendingPathComponent(fileName).path
            found = try FileSupportAuditLog.verify(path: path, ledgerId: ledgerId)
            append = { try FileSupportAuditLog.reseal(path: path, ledgerId: ledgerId, entry: $0) }
        case .database:
            guard let store = ledger.store as? PostgresEntitlementStore else {
                throw IAPError(.internalError, "a database ledger is not a PostgresEntitlementStore")
            }
            let log = try await PostgresSupportAuditLog(store: store)
            found = try await log.verify()
            append = { try await log.reseal($0) }
        }
        let checked = found.checked(againstLedgerHead: ledgerHead)
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
        let stored = try await append(entry)
        let head = try SupportAuditChain.head(after: stored)
        try await keeper.recordSupportAuditHead(head, resealing: true)
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
