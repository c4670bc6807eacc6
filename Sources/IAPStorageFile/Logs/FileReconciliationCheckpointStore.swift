import IAPCore
public import IAPServerAPI

/// A ``ReconciliationCheckpointStore`` in a file: each saved checkpoint is appended as one JSON line with `fsync`;
/// on open, the last line of each customer wins. A checkpoint older than the stored one is not appended.
///
/// One process at a time holds the file (`flock`). The file grows by one line per saved checkpoint; it can be
/// deleted at any time at the cost of one full reconciliation per customer.
public actor FileReconciliationCheckpointStore: ReconciliationCheckpointStore {
    private let file: JSONLinesFile
    private var checkpoints: [String: ReconciliationCheckpoint] = [:]

    /// Opens (creating) the store.
    ///
    /// - Parameter path: The file, such as `reconciliation.jsonl`.
    /// - Throws: ``IAPError`` `storageLocked`, `storageCorrupted` or `storageFailure`.
    public init(path: String) throws {
        file = try JSONLinesFile(path: path)
        for checkpoint in try file.readAll(ReconciliationCheckpoint.self) {
            checkpoints[checkpoint.customerKey] = checkpoint
        }
    }

    /// The checkpoint of a customer, or `nil`.
    public func checkpoint(customerKey: String) -> ReconciliationCheckpoint? {
        checkpoints[customerKey]
    }

    /// Saves a checkpoint durably, unless the stored one was reconciled later.
    ///
    /// - Throws: ``IAPError`` `invalidArgument` for an empty key, `storageFailure`.
    public func saveCheckpoint(_ checkpoint: ReconciliationCheckpoint) throws {
        guard !checkpoint.customerKey.isEmpty else {
            throw IAPError(.invalidArgument, "a reconciliation checkpoint needs a customer key")
        }
        guard checkpoint.replaces(checkpoints[checkpoint.customerKey]) else {
            return
        }
        try file.append(checkpoint)
        checkpoints[checkpoint.customerKey] = checkpoint
    }

    /// Closes the file and releases its lock.
    public func close() {
        file.close()
    }
}
