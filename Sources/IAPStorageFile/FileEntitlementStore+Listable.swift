public import IAPCore

extension FileEntitlementStore: ListableEntitlementStore {
    /// The first sequence recorded with its signed transaction: ``signedTransactionsFromSequence``.
    public func firstSignedSequence() async throws -> Int64 {
        signedTransactionsFromSequence
    }
}
