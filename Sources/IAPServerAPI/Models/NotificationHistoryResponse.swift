import IAPCore
/// A page of the notifications the App Store sent: the body of the App Store Server API's Get Notification History.
///
/// Mirrors Apple's `NotificationHistoryResponse`, with Apple's JSON names. Pass ``paginationToken`` back, with the
/// same request body, to get the next page while ``hasMore`` is `true`.
public struct NotificationHistoryResponse: Codable, Hashable, Sendable {
    /// The token to pass as `paginationToken` to get the next page.
    public var paginationToken: String?
    /// Whether more notifications follow this page.
    public var hasMore: Bool?
    /// Up to 20 notifications with their send attempts.
    public var notificationHistory: [NotificationHistoryResponseItem]?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        paginationToken: String? = nil,
        hasMore: Bool? = nil,
        notificationHistory: [NotificationHistoryResponseItem]? = nil
    ) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}
