import IAPCore
public import IAPServerAPI

/// A ``SupportAuditLog`` in memory, for tests: the same chain as the stored logs, sealed and checked by
/// ``SupportAuditChain``.
public actor InMemorySupportAuditLog: SupportAuditLog {
    /// The identity of the ledger the log anchors to.
    public let ledgerId: String
    private var records: [[UInt8]] = []
    private var log: [SupportAuditEntry] = []
    private var head: SupportAuditHead

    /// Creates an empty log.
    ///
    /// - Parameter ledgerId: The identity of the ledger it belongs to (`IdentifiedEntitlementStore`); a fixed one by
    ///   default.
    public init(ledgerId: String = "in-memory") {
        self.ledgerId = ledgerId
        self.head = .empty(ledgerId: ledgerId)
    }

    /// Seals and appends an entry.
    @discardableResult
    public func append(_ entry: SupportAuditEntry) throws -> SupportAuditEntry {
        let sealed = try SupportAuditChain.seal(entry, after: head)
        records.append(sealed.record)
        log.append(sealed.entry)
        head = sealed.head
        return sealed.entry
    }

    /// Every entry, oldest first.
    public func entries() -> [SupportAuditEntry] {
        log
    }

    /// Checks the chain.
    public func verify() -> SupportAuditVerification {
        SupportAuditChain.verify(
            records.enumerated().map { SupportAuditRecord(location: "entry \($0.offset + 1)", bytes: $0.element) },
            ledgerId: ledgerId,
            recordedHead: head
        )
    }
}
