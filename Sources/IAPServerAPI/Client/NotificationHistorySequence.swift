import IAPCore
/// The pages of the notifications the App Store sent, fetched as the sequence is iterated.
///
/// Each page is one answer of Get Notification History, up to 20 notifications. The sequence follows
/// `paginationToken` while `hasMore` is `true`, sending the same request body with every page.
/// ``lastPaginationToken`` is the last token the App Store returned; Apple lets a token expire
/// (`4000017 PaginationTokenExpiredError`), so resume from it only soon after.
public struct NotificationHistorySequence: AsyncSequence, Sendable {
    /// One page of the notification history.
    public typealias Element = NotificationHistoryResponse

    /// The filters sent with every page.
    public let request: NotificationHistoryRequest
    /// The token the sequence starts from; `nil` for the first page.
    public let startPaginationToken: String?

    private let client: AppStoreServerAPIClient
    private let progress: PageProgress

    init(client: AppStoreServerAPIClient, request: NotificationHistoryRequest, startPaginationToken: String?) {
        self.client = client
        self.request = request
        self.startPaginationToken = startPaginationToken
        self.progress = PageProgress(startPaginationToken)
    }

    /// The last pagination token the App Store returned in any iteration so far, or ``startPaginationToken``.
    public var lastPaginationToken: String? {
        progress.value
    }

    public func makeAsyncIterator() -> Iterator {
        let client = client
        let request = request
        return Iterator(
            cursor: PageCursor(
                what: "notification history",
                startToken: startPaginationToken,
                progress: progress,
                fetch: { token, target in
                    try await client.notificationPage(request: request, paginationToken: token, target: target)
                },
                nextToken: { $0.paginationToken },
                hasMore: { $0.hasMore == true }
            )
        )
    }

    /// Fetches the pages one by one.
    public struct Iterator: AsyncIteratorProtocol {
        var cursor: PageCursor<NotificationHistoryResponse>

        /// Fetches the next page, or returns `nil` after the last one.
        ///
        /// - Throws: ``IAPError``; the iteration ends after an error.
        public mutating func next() async throws -> NotificationHistoryResponse? {
            try await cursor.next()
        }
    }
}
