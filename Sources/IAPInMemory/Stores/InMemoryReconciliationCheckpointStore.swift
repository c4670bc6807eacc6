import IAPCore
public import IAPServerAPI

/// A ``ReconciliationCheckpointStore`` in memory: for tests, and for a process that may reconcile from scratch
/// after a restart.
public actor InMemoryReconciliationCheckpointStore: ReconciliationCheckpointStore {
    private var checkpoints: [String: ReconciliationCheckpoint] = [:]

    /// Creates an empty store.
    public init() {}

    /// The checkpoint of a customer, or `nil`.
    public func checkpoint(customerKey: String) -> ReconciliationCheckpoint? {
        checkpoints[customerKey]
    }

    /// Saves a checkpoint, replacing the customer's previous one unless that one was reconciled later.
    ///
    /// - Throws: ``IAPError`` `invalidArgument` for an empty key.
    public func saveCheckpoint(_ checkpoint: ReconciliationCheckpoint) throws {
        guard !checkpoint.customerKey.isEmpty else {
            throw IAPError(.invalidArgument, "a reconciliation checkpoint needs a customer key")
        }
        if checkpoint.replaces(checkpoints[checkpoint.customerKey]) {
            checkpoints[checkpoint.customerKey] = checkpoint
        }
    }

    /// Every checkpoint, by customer key.
    public var all: [String: ReconciliationCheckpoint] {
        checkpoints
    }
}
