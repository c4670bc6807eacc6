public import IAPCore

extension FileEntitlementStore: ListableEntitlementStore {
    /// The first sequence recorded with its signed transaction: ``signedTransactionsFromSequence``.
    public func firstSignedSequence() async throws -> Int64 {
        signedTransactionsFromSequence
    }

    /// Up to `limit` entries with a sequence above `sequence`, by ascending sequence, from memory.
    ///
    /// - Throws: ``IAPError`` `invalidArgument` for a limit outside 1 to 10,000; `storageFailure` after ``close()``.
    public func entries(afterSequence sequence: Int64, limit: Int) async throws -> [LedgerEntry] {
        try checkOpen()
        try Self.checkPageLimit(limit)
        return try await answer(state.entries(afterSequence: sequence, limit: limit))
    }
}
