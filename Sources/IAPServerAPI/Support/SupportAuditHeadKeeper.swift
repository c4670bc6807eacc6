/// Where a ledger keeps the head of its support audit (``SupportAuditHead``), inside the ledger itself: the copy of
/// the head that deleting or cutting the audit log, with the head kept beside it, cannot take along.
///
/// ``LedgerGuardedSupportAuditLog`` records the head here after every append to the ledger's audit, and compares
/// the log with it when it opens (`iap support audit verify` compares too).
///
/// ## Implementation requirements
/// - **In the ledger**: the head is stored with the ledger's own data (the file store's journal and snapshots, a
///   row of the PostgreSQL ledger's identity), never only in a file beside the audit log, and survives a crash once
///   ``recordSupportAuditHead(_:resealing:)`` returns.
/// - **Forward only**: without `resealing`, a head with no more entries than the one kept is ignored, so writers
///   that record out of order never move it back.
/// - **Reseal replaces**: with `resealing`, the head given replaces the kept one whatever it was.
/// - Safe to call from many tasks at once.
///
/// `FileEntitlementStore` (in `IAPStorageFile`), `PostgresEntitlementStore` (in `IAPStoragePostgres`) and
/// `InMemoryEntitlementStore` (in `IAPInMemory`) implement it; `LedgerGuardedSupportAuditLogTests` checks the
/// contract against the in-memory one.
public protocol SupportAuditHeadKeeper: Sendable {
    /// The head the ledger keeps, or `nil` when it never recorded one (a new ledger, or one written by a version that
    /// kept none).
    ///
    /// - Returns: The head.
    /// - Throws: ``IAPError`` when the ledger cannot be read.
    func supportAuditHead() async throws -> SupportAuditHead?

    /// Records the head durably.
    ///
    /// - Parameters:
    ///   - head: The head after an append.
    ///   - resealing: Whether it replaces whatever is kept (`iap support audit reseal`); otherwise it only moves the
    ///     kept head forward.
    /// - Throws: ``IAPError`` `storageFailure` when it cannot be written.
    func recordSupportAuditHead(_ head: SupportAuditHead, resealing: Bool) async throws
}
