#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

extension EntitlementEngine {
    /// Reads one user's ledger entries and the renewal infos of their subscriptions from a store, then
    /// works out the user's entitlements at an instant.
    ///
    /// The entries are read page by page through ``EntitlementStore/history(userId:cursor:limit:)``, so a
    /// user with many purchases is read in bounded steps; the renewal info of each original transaction is
    /// read once.
    ///
    /// - Parameters:
    ///   - userId: The business user.
    ///   - store: The ledger.
    ///   - usage: The units of consumables the user spent, from the integrator's records; none by default.
    ///   - instant: Now, as the caller's clock says.
    /// - Returns: The snapshot, and the entries it was computed from (oldest first).
    /// - Throws: ``IAPError`` from the store.
    public func evaluate(
        userId: String,
        in store: some EntitlementStore,
        usage: [ConsumableUsage] = [],
        at instant: Date
    ) async throws -> (snapshot: EntitlementSnapshot, entries: [LedgerEntry]) {
        let entries = try await store.allHistory(userId: userId)
        var renewalInfos: [RenewalInfoPayload] = []
        for original in Set(entries.map(\.originalTransactionId)).sorted() {
            if let renewal = try await store.renewalInfo(originalTransactionId: original) {
                renewalInfos.append(renewal)
            }
        }
        let snapshot = evaluate(entries: entries, renewalInfos: renewalInfos, usage: usage, at: instant)
        return (snapshot, entries.sorted { $0.sequence < $1.sequence })
    }
}
