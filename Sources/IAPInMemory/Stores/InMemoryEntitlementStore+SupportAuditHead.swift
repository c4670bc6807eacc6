import IAPCore
public import IAPServerAPI

/// The in-memory ledger keeps its support audit's head with its entries, for tests of the audit against a ledger.
extension InMemoryEntitlementStore: SupportAuditHeadKeeper {
    /// The head last recorded, or `nil`.
    public func supportAuditHead() -> SupportAuditHead? {
        auditHead().map { SupportAuditHead(entries: $0.entries, lastHash: $0.lastHash) }
    }

    /// Records the head: forward only, unless `resealing`.
    public func recordSupportAuditHead(_ head: SupportAuditHead, resealing: Bool) {
        recordAuditHead(entries: head.entries, lastHash: head.lastHash, resealing: resealing)
    }
}
