import IAPCore
/// Where the ``Reconciler`` keeps, per customer, the revisions of Apple's histories it reached, so that the next
/// run asks only for what changed since.
///
/// ## Implementation requirements
/// - **Durable before it answers**: when ``saveCheckpoint(_:)`` returns, the checkpoint survives a crash.
/// - **Last write wins** per ``ReconciliationCheckpoint/customerKey``; keys compare exactly.
/// - A lost checkpoint costs only time: the next run reads the whole history again, and delivers nothing twice.
/// - Safe to call from many tasks at once.
///
/// `InMemoryReconciliationCheckpointStore` (in `IAPTesting`) and `FileReconciliationCheckpointStore` (in
/// `IAPStorageFile`) implement it.
public protocol ReconciliationCheckpointStore: Sendable {
    /// The checkpoint of a customer, or `nil` when the customer was never reconciled.
    ///
    /// - Parameter customerKey: The customer's key.
    /// - Returns: The checkpoint.
    /// - Throws: ``IAPError`` if the store fails.
    func checkpoint(customerKey: String) async throws -> ReconciliationCheckpoint?

    /// Saves a customer's checkpoint, replacing the previous one.
    ///
    /// - Parameter checkpoint: The checkpoint.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty key, or if the store fails.
    func saveCheckpoint(_ checkpoint: ReconciliationCheckpoint) async throws
}
