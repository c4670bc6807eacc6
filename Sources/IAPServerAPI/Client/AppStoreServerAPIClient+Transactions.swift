#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

extension AppStoreServerAPIClient {
    /// Gets one signed transaction: `GET /inApps/v1/transactions/{transactionId}`.
    ///
    /// Falls back to Sandbox on `TransactionIdNotFound` when ``Options/fallsBackToSandbox`` is set.
    ///
    /// - Parameter transactionId: Any transaction identifier.
    /// - Returns: The signed transaction; verify it before use.
    /// - Throws: ``IAPError``, such as `apiError` with ``APIErrorCode/transactionIdNotFound``.
    public func transactionInfo(transactionId: String) async throws -> TransactionInfoResponse {
        var endpoint = try APIEndpoint(
            "GET",
            ["inApps", "v1", "transactions"],
            identifiers: [("transactionId", transactionId)],
            isIdempotent: true
        )
        endpoint.allowsSandboxFallback = true
        return try await call(endpoint, as: TransactionInfoResponse.self).response
    }

    /// Gets the signed app transaction of a customer: `GET /inApps/v1/transactions/appTransactions/{id}`.
    ///
    /// - Parameter anyTransactionId: A transaction, original transaction or app transaction identifier.
    /// - Returns: The signed app transaction; verify it before use.
    /// - Throws: ``IAPError``, such as `apiError` with ``APIErrorCode/appTransactionDoesNotExist``.
    public func appTransactionInfo(anyTransactionId: String) async throws -> AppTransactionInfoResponse {
        var endpoint = try APIEndpoint(
            "GET",
            ["inApps", "v1", "transactions", "appTransactions"],
            identifiers: [("anyTransactionId", anyTransactionId)],
            isIdempotent: true
        )
        endpoint.allowsSandboxFallback = true
        return try await call(endpoint, as: AppTransactionInfoResponse.self).response
    }

    /// The pages of a customer's transaction history: `GET /inApps/v2/history/{transactionId}`.
    ///
    /// Nothing is sent until the sequence is iterated.
    ///
    /// - Parameters:
    ///   - anyTransactionId: Any transaction identifier of the customer.
    ///   - request: The filters and order, sent with every page.
    ///   - revision: A revision saved from an earlier sync, to receive only what changed since; `nil` for all.
    /// - Returns: The sequence of pages.
    public func transactionHistory(
        anyTransactionId: String,
        request: TransactionHistoryRequest = TransactionHistoryRequest(),
        revision: String? = nil
    ) -> TransactionHistorySequence {
        TransactionHistorySequence(
            client: self,
            anyTransactionId: anyTransactionId,
            request: request,
            startRevision: revision
        )
    }

    /// Gets one page of a customer's transaction history: `GET /inApps/v2/history/{transactionId}`.
    ///
    /// - Parameters:
    ///   - anyTransactionId: Any transaction identifier of the customer.
    ///   - request: The filters and order; send the same with every page.
    ///   - revision: The `revision` of the previous page, or `nil` for the first.
    /// - Returns: The page.
    /// - Throws: ``IAPError``.
    public func transactionHistoryPage(
        anyTransactionId: String,
        request: TransactionHistoryRequest = TransactionHistoryRequest(),
        revision: String? = nil
    ) async throws -> HistoryResponse {
        try await historyPage(
            anyTransactionId: anyTransactionId,
            request: request,
            revision: revision,
            target: nil
        ).response
    }

    /// Fetches one history page from a target, or from the client's environment with the fallback.
    func historyPage(
        anyTransactionId: String,
        request: TransactionHistoryRequest,
        revision: String?,
        target: Target?
    ) async throws -> (response: HistoryResponse, target: Target) {
        var endpoint = try APIEndpoint(
            "GET",
            ["inApps", "v2", "history"],
            identifiers: [("anyTransactionId", anyTransactionId)],
            isIdempotent: true
        )
        endpoint.query = Self.historyQuery(request, revision: revision)
        endpoint.allowsSandboxFallback = true
        return try await call(endpoint, as: HistoryResponse.self, target: target)
    }

    /// The query of a transaction history request, in a fixed order; arrays repeat their key.
    static func historyQuery(_ request: TransactionHistoryRequest, revision: String?) -> [(name: String, value: String)]
    {
        var query: [(name: String, value: String)] = []
        if let revision {
            query.append(("revision", revision))
        }
        if let startDate = request.startDate {
            query.append(("startDate", String(startDate.millisecondsSince1970)))
        }
        if let endDate = request.endDate {
            query.append(("endDate", String(endDate.millisecondsSince1970)))
        }
        for productId in request.productIds ?? [] {
            query.append(("productId", productId))
        }
        for productType in request.productTypes ?? [] {
            query.append(("productType", productType.rawValue))
        }
        if let sort = request.sort {
            query.append(("sort", sort.rawValue))
        }
        for group in request.subscriptionGroupIdentifiers ?? [] {
            query.append(("subscriptionGroupIdentifier", group))
        }
        if let ownership = request.inAppOwnershipType {
            query.append(("inAppOwnershipType", ownership.rawValue))
        }
        if let revoked = request.revoked {
            query.append(("revoked", revoked ? "true" : "false"))
        }
        return query
    }

    /// The pages of a customer's refunded and revoked transactions: `GET /inApps/v2/refund/lookup/{transactionId}`.
    ///
    /// Nothing is sent until the sequence is iterated.
    ///
    /// - Parameters:
    ///   - anyTransactionId: Any transaction identifier of the customer.
    ///   - revision: A revision saved from an earlier sync, to receive only new refunds; `nil` for all.
    /// - Returns: The sequence of pages.
    public func refundHistory(anyTransactionId: String, revision: String? = nil) -> RefundHistorySequence {
        RefundHistorySequence(client: self, anyTransactionId: anyTransactionId, startRevision: revision)
    }

    /// Gets one page of a customer's refund history: `GET /inApps/v2/refund/lookup/{transactionId}`.
    ///
    /// - Parameters:
    ///   - anyTransactionId: Any transaction identifier of the customer.
    ///   - revision: The `revision` of the previous page, or `nil` for the first.
    /// - Returns: The page.
    /// - Throws: ``IAPError``.
    public func refundHistoryPage(anyTransactionId: String, revision: String? = nil) async throws
        -> RefundHistoryResponse
    {
        try await refundPage(anyTransactionId: anyTransactionId, revision: revision, target: nil).response
    }

    /// Fetches one refund history page.
    func refundPage(
        anyTransactionId: String,
        revision: String?,
        target: Target?
    ) async throws -> (response: RefundHistoryResponse, target: Target) {
        var endpoint = try APIEndpoint(
            "GET",
            ["inApps", "v2", "refund", "lookup"],
            identifiers: [("anyTransactionId", anyTransactionId)],
            isIdempotent: true
        )
        if let revision {
            endpoint.query = [("revision", revision)]
        }
        endpoint.allowsSandboxFallback = true
        return try await call(endpoint, as: RefundHistoryResponse.self, target: target)
    }

    /// Looks up the in-app purchases of an order id from a customer's receipt: `GET /inApps/v1/lookup/{orderId}`.
    ///
    /// - Parameter orderId: The order id, such as `MK5TTTVWJH`.
    /// - Returns: The order's status and signed transactions.
    /// - Throws: ``IAPError``.
    public func lookUpOrderId(_ orderId: String) async throws -> OrderLookupResponse {
        let endpoint = try APIEndpoint(
            "GET",
            ["inApps", "v1", "lookup"],
            identifiers: [("orderId", orderId)],
            isIdempotent: true
        )
        return try await call(endpoint, as: OrderLookupResponse.self).response
    }

    /// Sends consumption information about a purchase with a refund request (version 2):
    /// `PUT /inApps/v2/transactions/consumption/{transactionId}`.
    ///
    /// - Parameters:
    ///   - transactionId: The transaction of the `CONSUMPTION_REQUEST` notification.
    ///   - request: The information.
    /// - Throws: ``IAPError``.
    public func sendConsumptionInformation(transactionId: String, _ request: ConsumptionRequest) async throws {
        var endpoint = try APIEndpoint(
            "PUT",
            ["inApps", "v2", "transactions", "consumption"],
            identifiers: [("transactionId", transactionId)],
            isIdempotent: true
        )
        endpoint.body = try Self.encodeBody(request)
        try await callWithoutResponse(endpoint)
    }

    /// Sets the appAccountToken of a purchase made without one:
    /// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`.
    ///
    /// - Parameters:
    ///   - originalTransactionId: The original transaction identifier of the purchase.
    ///   - appAccountToken: The token of the customer's account in the app.
    /// - Throws: ``IAPError``, such as `apiError` with ``APIErrorCode/transactionIdNotOriginalTransactionId``.
    public func setAppAccountToken(originalTransactionId: String, appAccountToken: UUID) async throws {
        var endpoint = try APIEndpoint(
            "PUT",
            ["inApps", "v1", "transactions"],
            identifiers: [("originalTransactionId", originalTransactionId)],
            suffix: ["appAccountToken"],
            isIdempotent: true
        )
        endpoint.body = try Self.encodeBody(UpdateAppAccountTokenRequest(appAccountToken: appAccountToken))
        try await callWithoutResponse(endpoint)
    }

    /// Tells the App Store that a consumable or non-consumable purchase was delivered:
    /// `POST /inApps/v1/transactions/{transactionId}/finish`.
    ///
    /// Not retried automatically unless ``Options/retriesNonIdempotentRequests`` is set.
    ///
    /// - Parameter transactionId: The transaction identifier.
    /// - Throws: ``IAPError``.
    public func finishTransaction(transactionId: String) async throws {
        let endpoint = try APIEndpoint(
            "POST",
            ["inApps", "v1", "transactions"],
            identifiers: [("transactionId", transactionId)],
            suffix: ["finish"],
            isIdempotent: false
        )
        try await callWithoutResponse(endpoint)
    }

    /// Encodes a request body with the App Store conventions (dates as whole milliseconds).
    static func encodeBody(_ value: some Encodable) throws -> Data {
        do {
            return try AppStoreJSON.makeEncoder().encode(value)
        } catch {
            throw IAPError.wrapping(error, as: .invalidArgument, "the request body cannot be encoded")
        }
    }
}
