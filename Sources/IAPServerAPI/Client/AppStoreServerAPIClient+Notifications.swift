import IAPCore
extension AppStoreServerAPIClient {
    /// Asks the App Store to send a `TEST` notification to the server's notification URL:
    /// `POST /inApps/v1/notifications/test`.
    ///
    /// Not retried automatically unless ``Options/retriesNonIdempotentRequests`` is set.
    ///
    /// - Returns: The token to check the notification's delivery with.
    /// - Throws: ``IAPError``.
    public func requestTestNotification() async throws -> SendTestNotificationResponse {
        let endpoint = try APIEndpoint("POST", ["inApps", "v1", "notifications", "test"], isIdempotent: false)
        return try await call(endpoint, as: SendTestNotificationResponse.self).response
    }

    /// Gets a test notification and its send attempts: `GET /inApps/v1/notifications/test/{testNotificationToken}`.
    ///
    /// - Parameter testNotificationToken: The token from ``requestTestNotification()``.
    /// - Returns: The signed notification and each attempt to send it.
    /// - Throws: ``IAPError``, such as `apiError` with ``APIErrorCode/testNotificationNotFound``.
    public func testNotificationStatus(testNotificationToken: String) async throws -> CheckTestNotificationResponse {
        let endpoint = try APIEndpoint(
            "GET",
            ["inApps", "v1", "notifications", "test"],
            identifiers: [("testNotificationToken", testNotificationToken)],
            isIdempotent: true
        )
        return try await call(endpoint, as: CheckTestNotificationResponse.self).response
    }

    /// The pages of the notifications the App Store sent: `POST /inApps/v1/notifications/history`.
    ///
    /// Nothing is sent until the sequence is iterated. The query is read-only, so it is retried like a GET.
    ///
    /// - Parameters:
    ///   - request: The period and filters, sent with every page.
    ///   - paginationToken: A token to resume from; `nil` for the first page.
    /// - Returns: The sequence of pages.
    public func notificationHistory(
        _ request: NotificationHistoryRequest,
        paginationToken: String? = nil
    ) -> NotificationHistorySequence {
        NotificationHistorySequence(client: self, request: request, startPaginationToken: paginationToken)
    }

    /// Gets one page of the notification history: `POST /inApps/v1/notifications/history`.
    ///
    /// - Parameters:
    ///   - request: The period and filters; send the same with every page.
    ///   - paginationToken: The `paginationToken` of the previous page, or `nil` for the first.
    /// - Returns: The page.
    /// - Throws: ``IAPError``, such as `apiError` with ``APIErrorCode/paginationTokenExpired``.
    public func notificationHistoryPage(
        _ request: NotificationHistoryRequest,
        paginationToken: String? = nil
    ) async throws -> NotificationHistoryResponse {
        try await notificationPage(request: request, paginationToken: paginationToken, target: nil).response
    }

    /// Fetches one notification history page.
    func notificationPage(
        request: NotificationHistoryRequest,
        paginationToken: String?,
        target: Target?
    ) async throws -> (response: NotificationHistoryResponse, target: Target) {
        var endpoint = try APIEndpoint("POST", ["inApps", "v1", "notifications", "history"], isIdempotent: true)
        if let paginationToken {
            endpoint.query = [("paginationToken", paginationToken)]
        }
        endpoint.body = try Self.encodeBody(request)
        return try await call(endpoint, as: NotificationHistoryResponse.self, target: target)
    }
}
