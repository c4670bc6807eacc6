/// Where a support audit chain ends: how many entries it holds and the hash of the last one.
///
/// A log keeps its head apart from its entries (a file next to the log, a row next to the table) and moves it with
/// every append, so that a log cut short or emptied no longer reaches its head. A head is also what a new entry
/// is sealed after (``SupportAuditChain/seal(_:after:)``).
public struct SupportAuditHead: Codable, Sendable, Hashable {
    /// The number of entries.
    public var entries: Int
    /// The SHA-256, in lowercase hexadecimal, of the last entry as stored; the ledger's anchor when there is none.
    public var lastHash: String

    /// Creates a head.
    ///
    /// - Parameters:
    ///   - entries: The number of entries.
    ///   - lastHash: The last entry's hash, or the anchor for an empty log.
    public init(entries: Int, lastHash: String) {
        self.entries = entries
        self.lastHash = lastHash
    }

    /// The head of an empty log of a ledger: no entries, and the ledger's anchor.
    ///
    /// - Parameter ledgerId: The ledger's identity.
    /// - Returns: The head.
    public static func empty(ledgerId: String) -> SupportAuditHead {
        SupportAuditHead(entries: 0, lastHash: SupportAuditChain.anchor(ledgerId: ledgerId))
    }
}
