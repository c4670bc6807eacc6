import Foundation
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPServerAPI
import IAPStorageFile
import IAPStoragePostgres

/// The small stores `iap serve` keeps beside its ledger: the reconciliation checkpoints, the support audit log, and the
/// lock that lets one instance of a fleet reconcile at a time.
///
/// This is the one place where the ledger's location picks them:
/// - `--data DIR`: `DIR/reconciliation-checkpoints.jsonl` (`FileReconciliationCheckpointStore`),
///   `DIR/support-audit.jsonl` (`FileSupportAuditLog`), and an in-process lock (the directory's lock admits one
///   process, so there is no fleet).
/// - `--database URL`: the same three in PostgreSQL, so that a fleet shares nothing on local disk (see
///   ``databaseStores(_:)``).
struct ServeStores {
    /// Where each customer's history revisions are kept between reconciliations.
    let checkpoints: any ReconciliationCheckpointStore
    /// Where support lookups and redeliveries are audited; `nil` when this ledger has no audit log yet, which answers
    /// the support endpoints `501`.
    let audit: (any SupportAuditLog)?
    /// Why there is no audit log, for the support endpoints' answer.
    let auditUnavailable: String?
    /// Lets one instance at a time reconcile.
    let lock: any ReconciliationLock
    /// Closes what was opened.
    let close: @Sendable () async -> Void

    /// Opens the stores of a ledger.
    ///
    /// - Parameter ledger: The opened ledger.
    /// - Returns: The stores.
    /// - Throws: ``IAPError`` when a file cannot be opened (another process holds it, permissions).
    static func open(for ledger: CommandLedger) async throws -> ServeStores {
        switch ledger.location {
        case .directory(let directory):
            let checkpoints = try FileReconciliationCheckpointStore(
                path: directory.appendingPathComponent("reconciliation-checkpoints.jsonl").path
            )
            let audit: FileSupportAuditLog
            do {
                audit = try FileSupportAuditLog(path: directory.appendingPathComponent("support-audit.jsonl").path)
            } catch {
                await checkpoints.close()
                throw error
            }
            return ServeStores(
                checkpoints: checkpoints,
                audit: audit,
                auditUnavailable: nil,
                lock: InProcessReconciliationLock(),
                close: {
                    await audit.close()
                    await checkpoints.close()
                }
            )
        case .database(let configuration):
            return try await databaseStores(configuration)
        }
    }

    /// The stores of a PostgreSQL ledger.
    ///
    /// INTEGRATION POINT (`--database`): when IAPStoragePostgres has its PostgreSQL reconciliation checkpoint store, its
    /// advisory lock and the hash-chained support audit table, they replace the three stand-ins below, here and nowhere
    /// else: `PostgresReconciliationCheckpointStore`, a `ReconciliationLock` over `PostgresAdvisoryLock`, and
    /// `PostgresSupportAuditLog` — all on the ledger's own schema, so that a fleet shares nothing on local disk.
    ///
    /// Until then: checkpoints in memory (each instance's first scheduled run reads every history whole, later runs
    /// are incremental; a lost checkpoint costs only time), an in-process lock (instances may reconcile at the same
    /// time: safe, every change goes through the ledger's compare-and-set, but Apple is asked twice), and no audit
    /// log, so the support endpoints answer `501` rather than act unaudited.
    private static func databaseStores(
        _ configuration: PostgresEntitlementStore.Configuration
    ) async throws -> ServeStores {
        _ = configuration
        return ServeStores(
            checkpoints: InMemoryReconciliationCheckpointStore(),
            audit: nil,
            auditUnavailable: "support on a PostgreSQL ledger needs its audit table, which this build does not have",
            lock: InProcessReconciliationLock(),
            close: {}
        )
    }
}
