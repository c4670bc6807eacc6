import IAPCore
public import IAPServerAPI

/// A ``SupportAuditLog`` in memory, for tests.
public actor InMemorySupportAuditLog: SupportAuditLog {
    private var log: [SupportAuditEntry] = []

    /// Creates an empty log.
    public init() {}

    /// Appends an entry.
    public func append(_ entry: SupportAuditEntry) {
        log.append(entry)
    }

    /// Every entry, oldest first.
    public func entries() -> [SupportAuditEntry] {
        log
    }
}
