import Foundation
import IAPCore
import IAPHTTPServer
import IAPPurchaseServer
import IAPServerAPI
import IAPStorageFile
import IAPStoragePostgres

/// The small stores `iap serve` keeps beside its ledger: the reconciliation checkpoints, the support audit log, and the
/// lock that lets one instance of a fleet reconcile at a time.
///
/// This is the one place where the ledger's location picks them:
/// - `--data DIR`: `DIR/reconciliation-checkpoints.jsonl` (`FileReconciliationCheckpointStore`),
///   `DIR/support-audit.jsonl` (`FileSupportAuditLog`, chained to the ledger's identity), and `DIR/reconcile.lock`
///   (`FileExclusiveRunLock`; the directory's own lock already admits one process).
/// - `--database URL`: the checkpoints and the support audit in the ledger's schema
///   (`PostgresReconciliationCheckpointStore`, `PostgresSupportAuditLog`) and a PostgreSQL advisory lock
///   (`PostgresAdvisoryLock`), so that a fleet shares nothing on local disk.
struct ServeStores {
    /// Where each customer's history revisions are kept between reconciliations.
    let checkpoints: any ReconciliationCheckpointStore
    /// Where support lookups and redeliveries are audited (the audit that lives with the ledger); `nil` would answer
    /// the support endpoints `501`.
    let audit: (any SupportAuditLog)?
    /// Why there is no audit log, for the support endpoints' answer.
    let auditUnavailable: String?
    /// Lets one instance at a time reconcile.
    let lock: any ExclusiveRunLock
    /// Closes what was opened.
    let close: @Sendable () async -> Void

    /// The name of the reconciliation's lock, the same for every instance on one ledger.
    static let lockName = "reconcile"

    /// Opens the stores of a ledger.
    ///
    /// The support audit is guarded by the head the ledger keeps: one that does not match it opens refusing every
    /// support action, and the server still starts and takes purchases.
    ///
    /// - Parameters:
    ///   - ledger: The opened ledger.
    ///   - auditObserver: Told whether support may write to the audit, at once and at every change.
    /// - Returns: The stores.
    /// - Throws: ``IAPError`` when a file cannot be opened (another process holds it, permissions).
    static func open(
        for ledger: CommandLedger,
        auditObserver: @escaping @Sendable (LedgerGuardedSupportAuditLog.Standing) -> Void
    ) async throws -> ServeStores {
        switch ledger.location {
        case .directory(let directory):
            let lock = try FileExclusiveRunLock(name: lockName, directory: directory.path)
            let checkpoints = try FileReconciliationCheckpointStore(
                path: directory.appendingPathComponent("reconciliation-checkpoints.jsonl").path
            )
            let audit: SupportAuditCommand.OpenLog
            do {
                audit = try await SupportAuditCommand.open(ledger, auditPath: nil, observer: auditObserver)
            } catch {
                await checkpoints.close()
                throw error
            }
            return ServeStores(
                checkpoints: checkpoints,
                audit: audit.log,
                auditUnavailable: nil,
                lock: lock,
                close: {
                    await audit.close()
                    await checkpoints.close()
                }
            )
        case .database:
            guard let store = ledger.store as? PostgresEntitlementStore else {
                throw IAPError(.internalError, "a --database ledger is not a PostgresEntitlementStore")
            }
            // The audit shares the ledger's connections, which the ledger closes.
            let audit = try await SupportAuditCommand.open(ledger, auditPath: nil, observer: auditObserver)
            return ServeStores(
                checkpoints: PostgresReconciliationCheckpointStore(ledger: store),
                audit: audit.log,
                auditUnavailable: nil,
                lock: try store.exclusiveRunLock(named: lockName),
                close: { await audit.close() }
            )
        }
    }
}
