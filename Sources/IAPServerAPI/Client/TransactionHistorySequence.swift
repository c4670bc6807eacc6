import IAPCore
/// The pages of a customer's transaction history, fetched as the sequence is iterated.
///
/// Each page is one answer of Get Transaction History (v2), up to 20 signed transactions. The sequence
/// follows `revision` while `hasMore` is `true`, sending the same filters with every page, and stays in the
/// environment that answered the first page. After an iteration, ``lastRevision`` is the revision to save
/// and pass as `revision` next time, to receive only transactions that are new or changed since.
///
/// ```swift
/// let history = client.transactionHistory(anyTransactionId: id, revision: savedRevision)
/// for try await page in history {
///     for signed in page.signedTransactions ?? [] { /* verify and record */ }
/// }
/// savedRevision = history.lastRevision
/// ```
public struct TransactionHistorySequence: AsyncSequence, Sendable {
    /// One page of the history.
    public typealias Element = HistoryResponse

    /// The transaction identifier the history is asked for.
    public let anyTransactionId: String
    /// The filters sent with every page.
    public let request: TransactionHistoryRequest
    /// The revision the sequence starts from; `nil` for the whole history.
    public let startRevision: String?

    private let client: AppStoreServerAPIClient
    private let progress: PageProgress

    init(
        client: AppStoreServerAPIClient,
        anyTransactionId: String,
        request: TransactionHistoryRequest,
        startRevision: String?
    ) {
        self.client = client
        self.anyTransactionId = anyTransactionId
        self.request = request
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
        let request = request
        return Iterator(
            cursor: PageCursor(
                what: "transaction history",
                startToken: startRevision,
                progress: progress,
                fetch: { revision, target in
                    try await client.historyPage(
                        anyTransactionId: id,
                        request: request,
                        revision: revision,
                        target: target
                    )
                },
                nextToken: { $0.revision },
                hasMore: { $0.hasMore == true }
            )
        )
    }

    /// Fetches the pages one by one.
    public struct Iterator: AsyncIteratorProtocol {
        var cursor: PageCursor<HistoryResponse>

        /// Fetches the next page, or returns `nil` after the last one.
        ///
        /// - Throws: ``IAPError``; the iteration ends after an error.
        public mutating func next() async throws -> HistoryResponse? {
            try await cursor.next()
        }
    }
}
