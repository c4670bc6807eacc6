/// One page of the purchase families a ledger knows: their original transaction ids.
public struct OriginalTransactionIdPage: Sendable, Hashable {
    /// The original transaction ids, in the order of the first entry of each family.
    public var originalTransactionIds: [String]
    /// The cursor of the next page, or `nil` when the walk is complete.
    public var nextCursor: String?

    /// Creates a page.
    public init(originalTransactionIds: [String], nextCursor: String?) {
        self.originalTransactionIds = originalTransactionIds
        self.nextCursor = nextCursor
    }
}
