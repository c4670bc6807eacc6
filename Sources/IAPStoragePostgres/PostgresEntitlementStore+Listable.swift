public import IAPCore

extension PostgresEntitlementStore: ListableEntitlementStore {
    /// The first sequence recorded with its signed transaction: ``signedTransactionsFromSequence()``.
    public func firstSignedSequence() async throws -> Int64 {
        try await signedTransactionsFromSequence()
    }

    /// The rows whose lookup columns (`transaction_id`, `original_transaction_id`, `user_id`, `delivery_state`)
    /// disagree with the entry they hold, the first 100 by sequence: each lookup is an index on one of these columns,
    /// and the table's constraints keep transaction ids and sequences unique. One scan of the table, in the server;
    /// nothing of it is held here.
    public func indexProblems() async throws -> [String] {
        try await pool.run(retryingOnLostConnection: true) { connection in
            let result = try connection.execute(.lookupMismatches)
            return (0..<result.count).map { row in
                let id = result.string(row, 0) ?? ""
                let column = result.string(row, 1) ?? ""
                return "transaction \(id): its \(column) column disagrees with the entry it holds"
            }
        }
    }
}
