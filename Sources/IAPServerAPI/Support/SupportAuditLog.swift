/// An append-only, tamper-evident log of what support did to customers' orders (``SupportAuditEntry``).
///
/// Each entry carries the SHA-256 of the entry before it, and the first the ledger's anchor
/// (``SupportAuditChain``), so an entry edited, removed, added or moved breaks the chain where it happened; the log
/// also keeps its head (how many entries, and the last one's hash) apart from the entries, so that a log cut short
/// or emptied is noticed too. ``verify()`` reports every break.
///
/// ## Implementation requirements
/// - **Sealed by the log**: ``append(_:)`` seals the entry as the next of the chain
///   (``SupportAuditChain/seal(_:after:)``: its number, the previous entry's hash, the process's OS user), stores
///   the sealed bytes exactly, and advances the head. Appends from several tasks or processes are serialized, so
///   the chain never forks.
/// - **Durable before it answers**: when ``append(_:)`` returns, the entry survives a crash.
/// - **Append-only**: entries are never changed or removed; ``entries()`` returns them in append order.
/// - **Refuses a broken head**: an append onto a log that holds fewer entries than its head records, or whose
///   entry at the head differs from the recorded one, throws `storageCorrupted` and writes nothing.
/// - Safe to call from many tasks at once.
///
/// `InMemorySupportAuditLog` (in `IAPInMemory`), `FileSupportAuditLog` (in `IAPStorageFile`, JSON lines with
/// `fsync`, in the ledger's directory) and `PostgresSupportAuditLog` (in `IAPStoragePostgres`, a table of the
/// ledger's schema) implement it. ``LedgerGuardedSupportAuditLog`` wraps one with the head the ledger keeps, so that
/// a log deleted or cut together with its head is refused too.
public protocol SupportAuditLog: Sendable {
    /// Seals an entry as the next of the chain and appends it durably.
    ///
    /// - Parameter entry: The entry; its ``SupportAuditEntry/sequence``, ``SupportAuditEntry/previousHash`` and
    ///   ``SupportAuditEntry/osUser`` are set by the log.
    /// - Returns: The entry as sealed and stored.
    /// - Throws: ``IAPError`` with code `storageFailure` if it could not be written, `storageCorrupted` if the log
    ///   does not match its head; then nothing was written.
    @discardableResult
    func append(_ entry: SupportAuditEntry) async throws -> SupportAuditEntry

    /// Every entry, oldest first.
    ///
    /// - Returns: The entries.
    /// - Throws: ``IAPError`` if the log cannot be read.
    func entries() async throws -> [SupportAuditEntry]

    /// Checks the chain and the head, changing nothing.
    ///
    /// - Returns: What was found: the number of entries, the head, and every break with its place.
    /// - Throws: ``IAPError`` if the log cannot be read.
    func verify() async throws -> SupportAuditVerification

    /// Throws when the log would refuse an append now, writing nothing: for a tool to refuse a support action before
    /// it acts rather than after. The default never throws.
    ///
    /// - Throws: ``IAPError`` as ``append(_:)`` would refuse.
    func checkWritable() async throws
}

extension SupportAuditLog {
    /// Never throws: the log finds out at ``append(_:)``.
    public func checkWritable() async throws {}
}
