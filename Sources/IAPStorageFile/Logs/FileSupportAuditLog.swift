import IAPCore
public import IAPServerAPI

/// A ``SupportAuditLog`` in a file: one JSON object a line, each appended with `fsync` before ``append(_:)``
/// returns, never rewritten.
///
/// One process at a time holds the file (`flock`); another gets `storageLocked`. A line torn by a crash (its append
/// never returned) is cut off when the file is opened; a complete line that does not decode is `storageCorrupted`.
public actor FileSupportAuditLog: SupportAuditLog {
    private let file: JSONLinesFile
    private var log: [SupportAuditEntry]

    /// Opens (creating) the log.
    ///
    /// - Parameter path: The file, such as `support-audit.jsonl`.
    /// - Throws: ``IAPError`` `storageLocked`, `storageCorrupted` or `storageFailure`.
    public init(path: String) throws {
        file = try JSONLinesFile(path: path)
        log = try file.readAll(SupportAuditEntry.self)
    }

    /// Appends an entry durably.
    ///
    /// - Throws: ``IAPError`` `storageFailure`; the entry is then not in the log.
    public func append(_ entry: SupportAuditEntry) throws {
        try file.append(entry)
        log.append(entry)
    }

    /// Every entry, oldest first.
    public func entries() -> [SupportAuditEntry] {
        log
    }

    /// Closes the file and releases its lock; later appends fail.
    public func close() {
        file.close()
    }
}
