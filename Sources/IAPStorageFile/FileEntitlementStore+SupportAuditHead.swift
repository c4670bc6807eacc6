import IAPCore
public import IAPServerAPI

/// The file store keeps its support audit's head in its journal: an `auditHead` record after every append to the
/// audit (journal format version 4), carried into each snapshot. A ledger written before it has none.
extension FileEntitlementStore: SupportAuditHeadKeeper {
    /// The head the journal last recorded, or `nil`.
    ///
    /// - Throws: ``IAPError`` `storageFailure` when the store is closed or failed.
    public func supportAuditHead() async throws -> SupportAuditHead? {
        try await auditHead().map { SupportAuditHead(entries: $0.entries, lastHash: $0.lastHash) }
    }

    /// Appends an `auditHead` record and waits until it is durable (nothing is written for a head that would not
    /// move forward, unless `resealing`).
    ///
    /// - Throws: ``IAPError`` `storageFailure`, or `unsupportedOperation` for a store opened read-only.
    public func recordSupportAuditHead(_ head: SupportAuditHead, resealing: Bool) async throws {
        try await recordAuditHead(.init(entries: head.entries, lastHash: head.lastHash), resealing: resealing)
    }
}

extension FileEntitlementStore {
    /// The support audit's head as the journal last recorded it, once durable; `nil` when it never recorded one.
    func auditHead() async throws -> LedgerState.AuditHead? {
        try checkOpen()
        return try await answer(state.auditHead)
    }

    /// Records the support audit's head in the journal (an `auditHead` record), durably; without `resealing`, a head
    /// with no more entries than the recorded one writes nothing.
    func recordAuditHead(_ head: LedgerState.AuditHead, resealing: Bool) async throws {
        try checkOpen()
        if !resealing, let recorded = state.auditHead, recorded.entries >= head.entries {
            return try await answer(())
        }
        let lsn = try append(.auditHead(head)) { $0.recordAuditHead(head) }
        try await waitUntilDurable(lsn)
    }
}
