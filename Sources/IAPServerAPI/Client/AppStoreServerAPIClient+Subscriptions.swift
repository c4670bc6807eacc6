public import IAPCore
extension AppStoreServerAPIClient {
    /// Gets the status of every auto-renewable subscription of a customer:
    /// `GET /inApps/v1/subscriptions/{transactionId}`.
    ///
    /// - Parameters:
    ///   - anyTransactionId: Any transaction identifier of the customer.
    ///   - status: Only subscriptions in these states (`status` query, repeated); all when empty.
    /// - Returns: The statuses, by subscription group.
    /// - Throws: ``IAPError``.
    public func allSubscriptionStatuses(
        anyTransactionId: String,
        status: [SubscriptionStatus] = []
    ) async throws -> StatusResponse {
        var endpoint = try APIEndpoint(
            "GET",
            ["inApps", "v1", "subscriptions"],
            identifiers: [("anyTransactionId", anyTransactionId)],
            isIdempotent: true
        )
        endpoint.query = status.map { ("status", String($0.rawValue)) }
        endpoint.allowsSandboxFallback = true
        return try await call(endpoint, as: StatusResponse.self).response
    }

    /// Extends the renewal date of one subscription: `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`.
    ///
    /// Apple recognises a repeated ``ExtendRenewalDateRequest/requestIdentifier``, so the request is retried
    /// like a read.
    ///
    /// - Parameters:
    ///   - originalTransactionId: The original transaction identifier of the subscription.
    ///   - request: How many days, why, and a unique request identifier.
    /// - Returns: The result.
    /// - Throws: ``IAPError``, such as `apiError` with ``APIErrorCode/subscriptionMaxExtension``.
    public func extendSubscriptionRenewalDate(
        originalTransactionId: String,
        _ request: ExtendRenewalDateRequest
    ) async throws -> ExtendRenewalDateResponse {
        var endpoint = try APIEndpoint(
            "PUT",
            ["inApps", "v1", "subscriptions", "extend"],
            identifiers: [("originalTransactionId", originalTransactionId)],
            isIdempotent: true
        )
        endpoint.body = try Self.encodeBody(request)
        return try await call(endpoint, as: ExtendRenewalDateResponse.self).response
    }

    /// Extends the renewal date of every active subscriber of a product:
    /// `POST /inApps/v1/subscriptions/extend/mass`.
    ///
    /// Not retried automatically unless ``Options/retriesNonIdempotentRequests`` is set; check the outcome with
    /// ``statusOfSubscriptionRenewalDateExtensions(productId:requestIdentifier:)``.
    ///
    /// - Parameter request: The product, how many days, why, and a unique request identifier.
    /// - Returns: The request identifier.
    /// - Throws: ``IAPError``.
    public func extendRenewalDateForAllActiveSubscribers(
        _ request: MassExtendRenewalDateRequest
    ) async throws -> MassExtendRenewalDateResponse {
        var endpoint = try APIEndpoint(
            "POST",
            ["inApps", "v1", "subscriptions", "extend", "mass"],
            isIdempotent: false
        )
        endpoint.body = try Self.encodeBody(request)
        return try await call(endpoint, as: MassExtendRenewalDateResponse.self).response
    }

    /// Gets the progress of a mass renewal-date extension:
    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
    ///
    /// - Parameters:
    ///   - productId: The product identifier of the request.
    ///   - requestIdentifier: The request identifier of the request.
    /// - Returns: The progress.
    /// - Throws: ``IAPError``, such as `apiError` with ``APIErrorCode/statusRequestNotFound``.
    public func statusOfSubscriptionRenewalDateExtensions(
        productId: String,
        requestIdentifier: String
    ) async throws -> MassExtendRenewalDateStatusResponse {
        let endpoint = try APIEndpoint(
            "GET",
            ["inApps", "v1", "subscriptions", "extend", "mass"],
            identifiers: [("productId", productId), ("requestIdentifier", requestIdentifier)],
            isIdempotent: true
        )
        return try await call(endpoint, as: MassExtendRenewalDateStatusResponse.self).response
    }
}
