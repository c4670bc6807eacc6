public import IAPCore

extension FileEntitlementStore {
    /// Counts over the whole ledger.
    public func statistics() async throws -> LedgerStatistics {
        try checkOpen()
        return try await answer(state.statistics)
    }

    /// One page of the distinct original transaction ids, by the sequence of each family's first entry; the cursor
    /// is `f1:<count of entries examined>`.
    public func originalTransactionIds(cursor: String?, limit: Int) async throws -> OriginalTransactionIdPage {
        try checkOpen()
        return try await answer(try state.originalTransactionIdPage(cursor: cursor, limit: limit))
    }
}
