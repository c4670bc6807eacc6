#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
public import IAPServerAPI

/// A ``ReconciliationCheckpointStore`` in the ledger's PostgreSQL schema, shared by every instance of a fleet.
///
/// It keeps one row per customer in `iap_reconciliation_checkpoints` and works on the ledger's connections: open the
/// ``PostgresEntitlementStore`` (which creates or migrates the table), then make this store from it. Closing the
/// ledger closes it too.
///
/// A save is one upsert, `INSERT ... ON CONFLICT (customer_key) DO UPDATE ... WHERE excluded.reconciled_at >=
/// stored.reconciled_at`: a checkpoint never goes back, even when two instances reconcile one customer at once and
/// the one that started first finishes last. Dates are kept to the millisecond; keys compare byte by byte.
///
/// ```swift
/// let ledger = try await PostgresEntitlementStore(configuration: .init(url: databaseURL, schema: "iap"))
/// let checkpoints = PostgresReconciliationCheckpointStore(ledger: ledger)
/// ```
public final class PostgresReconciliationCheckpointStore: ReconciliationCheckpointStore {
    /// The ledger whose schema and connections the store uses.
    public let ledger: PostgresEntitlementStore

    /// Makes the store of a ledger's schema.
    ///
    /// - Parameter ledger: The open ledger.
    public init(ledger: PostgresEntitlementStore) {
        self.ledger = ledger
    }

    /// The checkpoint of a customer, or `nil` when the customer was never reconciled.
    ///
    /// - Parameter customerKey: The customer's key.
    /// - Returns: The checkpoint.
    /// - Throws: ``IAPError`` `storageUnavailable` or `storageFailure` if the database fails, `storageCorrupted` for a
    ///   row that does not read back.
    public func checkpoint(customerKey: String) async throws -> ReconciliationCheckpoint? {
        guard PostgresEntitlementStore.storable(customerKey) else {
            return nil
        }
        return try await ledger.pool.run(retryingOnLostConnection: true) { connection in
            let row = try connection.execute(.checkpoint, [customerKey])
            guard row.count == 1 else {
                return nil
            }
            return ReconciliationCheckpoint(
                customerKey: customerKey,
                historyRevision: row.string(0, 0),
                refundRevision: row.string(0, 1),
                reconciledAt: Date(millisecondsSince1970: try row.int64(0, 2))
            )
        }
    }

    /// Saves a checkpoint, unless the stored one was reconciled later; durable when the call returns.
    ///
    /// - Parameter checkpoint: The checkpoint.
    /// - Throws: ``IAPError`` `invalidArgument` for an empty key or text PostgreSQL cannot hold (a NUL character);
    ///   `storageUnavailable` or `storageFailure` if the database fails (saving again is safe).
    public func saveCheckpoint(_ checkpoint: ReconciliationCheckpoint) async throws {
        guard !checkpoint.customerKey.isEmpty else {
            throw IAPError(.invalidArgument, "a reconciliation checkpoint needs a customer key")
        }
        let parameters = [
            checkpoint.customerKey, checkpoint.historyRevision, checkpoint.refundRevision,
            String(checkpoint.reconciledAt.millisecondsSince1970),
        ]
        try await ledger.pool.run { connection in
            _ = try connection.execute(.saveCheckpoint, parameters)
        }
    }
}
