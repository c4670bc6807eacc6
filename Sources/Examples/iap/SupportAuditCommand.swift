import Foundation
import IAPCore
import IAPServerAPI
import IAPStorageFile
import IAPStoragePostgres

/// The support audit of a ledger, for `iap support lookup-order` (which appends to it) and `iap support audit
/// verify` (which checks it).
enum SupportAuditCommand {
    /// An audit log opened for appending, and how to close it.
    struct OpenLog {
        let log: any SupportAuditLog
        let close: @Sendable () async -> Void
    }

    /// The name of the audit log in a file ledger's directory.
    static let fileName = "support-audit.jsonl"

    /// Opens the audit that lives with the ledger (its directory's file, or its schema's table), or `auditPath`,
    /// anchored to the ledger's identity either way.
    static func open(_ ledger: CommandLedger, auditPath: String?) async throws -> OpenLog {
        let ledgerId = try await ledger.store.ledgerIdentity()
        let path: String
        switch (auditPath, ledger.location) {
        case (let auditPath?, _):
            path = auditPath
        case (nil, .directory(let directory)):
            path = directory.appendingPathComponent(fileName).path
        case (nil, .database):
            guard let store = ledger.store as? PostgresEntitlementStore else {
                throw IAPError(.internalError, "a database ledger is not a PostgresEntitlementStore")
            }
            // It shares the ledger's connections, which the ledger closes.
            return OpenLog(log: try await PostgresSupportAuditLog(store: store), close: {})
        }
        let log = try FileSupportAuditLog(path: path, ledgerId: ledgerId)
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

    /// Reads and checks the audit, writing nothing: a file ledger is not even opened (another process may hold it).
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
            var result = try FileSupportAuditLog.verify(
                path: auditPath ?? directory.appendingPathComponent(fileName).path,
                ledgerId: identity ?? ""
            )
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
                        try await PostgresSupportAuditLog(store: store).verify()
                    }
                await store.close()
                return result
            } catch {
                await ledger.store.close()
                throw error
            }
        }
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
