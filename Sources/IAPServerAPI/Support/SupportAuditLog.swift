import IAPCore
/// An append-only log of what support did to customers' orders (``SupportAuditEntry``).
///
/// ## Implementation requirements
/// - **Durable before it answers**: when ``append(_:)`` returns, the entry survives a crash.
/// - **Append-only**: entries are never changed or removed; ``entries()`` returns them in append order.
/// - Safe to call from many tasks at once.
///
/// `InMemorySupportAuditLog` (in `IAPTesting`) and `FileSupportAuditLog` (in `IAPStorageFile`, JSON lines with
/// `fsync`) implement it.
public protocol SupportAuditLog: Sendable {
    /// Appends an entry durably.
    ///
    /// - Parameter entry: The entry.
    /// - Throws: ``IAPError`` with code `storageFailure` if it could not be written; then it was not.
    func append(_ entry: SupportAuditEntry) async throws

    /// Every entry, oldest first.
    ///
    /// - Returns: The entries.
    /// - Throws: ``IAPError`` if the log cannot be read.
    func entries() async throws -> [SupportAuditEntry]
}
