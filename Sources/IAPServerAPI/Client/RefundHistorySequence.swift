import IAPCore
/// The pages of a customer's refunded and revoked transactions, fetched as the sequence is iterated.
///
/// Each page is one answer of Get Refund History (v2), up to 20 signed transactions. The sequence follows
/// `revision` while `hasMore` is `true` and stays in the environment that answered the first page. After an
/// iteration, ``lastRevision`` is the revision to save and pass next time, to receive only new refunds.
public struct RefundHistorySequence: AsyncSequence, Sendable {
    /// One page of the refund history.
    public typealias Element = RefundHistoryResponse

    /// The transaction identifier the history is asked for.
    public let anyTransactionId: String
    /// The revision the sequence starts from; `nil` for the whole history.
    public let startRevision: String?

    private let client: AppStoreServerAPIClient
    private let progress: PageProgress

    init(client: AppStoreServerAPIClient, anyTransactionId: String, startRevision: String?) {
        self.client = client
        self.anyTransactionId = anyTransactionId
        self.startRevision = startRevision
        self.progress = PageProgress(startRevision)
    }

    /// The last revision the App Store returned in any iteration so far, or ``startRevision`` before.
    public var lastRevision: String? {
        progress.value
    }

    public func makeAsyncIterator() -> Iterator {
        let client = client
        let id = anyTransactionId
        return Iterator(
            cursor: PageCursor(
                what: "refund history",
                startToken: startRevision,
                progress: progress,
                fetch: { revision, target in
                    try await client.refundPage(anyTransactionId: id, revision: revision, target: target)
                },
                nextToken: { $0.revision },
                hasMore: { $0.hasMore == true }
            )
        )
    }

    /// Fetches the pages one by one.
    public struct Iterator: AsyncIteratorProtocol {
        var cursor: PageCursor<RefundHistoryResponse>

        /// Fetches the next page, or returns `nil` after the last one.
        ///
        /// - Throws: ``IAPError``; the iteration ends after an error.
        public mutating func next() async throws -> RefundHistoryResponse? {
            try await cursor.next()
        }
    }
}
