public import IAPCore

extension PostgresEntitlementStore: ListableEntitlementStore {
    /// The first sequence recorded with its signed transaction: ``signedTransactionsFromSequence()``.
    public func firstSignedSequence() async throws -> Int64 {
        try await signedTransactionsFromSequence()
    }
}
