import IAPCore
/// Where the ``Reconciler`` keeps, per customer, the revisions of Apple's histories it reached, so that the next
/// run asks only for what changed since.
///
/// ## Implementation requirements
/// - **Durable before it answers**: when ``saveCheckpoint(_:)`` returns, the checkpoint survives a crash.
/// - **Never goes back**, per ``ReconciliationCheckpoint/customerKey``: a checkpoint replaces the stored one when its
///   ``ReconciliationCheckpoint/reconciledAt`` is the same or later, and is ignored (the call succeeds, nothing
///   changes) when it is earlier, so a slow run that finishes after a newer one cannot take the customer back to
///   older revisions. Dates compare to the millisecond; keys compare exactly.
/// - A lost checkpoint costs only time: the next run reads the whole history again, and delivers nothing twice.
/// - Safe to call from many tasks at once; a store shared by several processes keeps the rule across them.
///
/// `ReconciliationCheckpointStoreConformance` (in `IAPConformance`) checks these requirements.
/// `InMemoryReconciliationCheckpointStore` (in `IAPInMemory`), `FileReconciliationCheckpointStore` (in
/// `IAPStorageFile`) and `PostgresReconciliationCheckpointStore` (in `IAPStoragePostgres`) implement it.
public protocol ReconciliationCheckpointStore: Sendable {
    /// The checkpoint of a customer, or `nil` when the customer was never reconciled.
    ///
    /// - Parameter customerKey: The customer's key.
    /// - Returns: The checkpoint.
    /// - Throws: ``IAPError`` if the store fails.
    func checkpoint(customerKey: String) async throws -> ReconciliationCheckpoint?

    /// Saves a customer's checkpoint, replacing the stored one unless that one was reconciled later.
    ///
    /// - Parameter checkpoint: The checkpoint.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty key, or if the store fails.
    func saveCheckpoint(_ checkpoint: ReconciliationCheckpoint) async throws
}
