import Foundation
import IAPCore
import IAPTesting

extension Emulator {
    /// Answers an App Store Server API request; `segments` follow `/inApps`.
    func serverAPI(_ request: HTTPServerRequest, segments: [String], replaying: Bool) async -> HTTPServerResponse {
        let store = self.store
        do {
            let route = EmulatorRoute(method: request.method, segments: segments)
            if let captures = route.match(("GET", "v1/transactions/appTransactions/*")) {
                let id = captures[0]
                try Self.checkTransactionId(id)
                return Self.apiError(
                    .appTransactionDoesNotExist,
                    message: "The emulator does not sign app transactions."
                )
            } else if let captures = route.match(("GET", "v1/transactions/*")) {
                let id = captures[0]
                return Self.json(try await store.transactionInfo(transactionId: id))
            } else if let captures = route.match(("POST", "v1/transactions/*/finish")) {
                let id = captures[0]
                return await change(request, replaying: replaying) {
                    try await store.finishTransaction(transactionId: id)
                    return HTTPServerResponse(status: 200)
                }
            } else if let captures = route.match(("GET", "v1/history/*"), ("GET", "v2/history/*")) {
                let id = captures[0]
                let query = try Self.historyRequest(request)
                return Self.json(
                    try await store.transactionHistory(
                        anyTransactionId: id,
                        revision: request.queryValue("revision"),
                        request: query
                    )
                )
            } else if let captures = route.match(("GET", "v2/refund/lookup/*")) {
                let id = captures[0]
                return Self.json(
                    try await store.refundHistory(anyTransactionId: id, revision: request.queryValue("revision"))
                )
            } else if let captures = route.match(("GET", "v1/subscriptions/*")), captures[0] != "extend" {
                let id = captures[0]
                var statuses: [SubscriptionStatus] = []
                for value in request.queryValues("status") {
                    guard let raw = Int32(value), (1...5).contains(raw) else {
                        return Self.apiError(.invalidStatus)
                    }
                    statuses.append(SubscriptionStatus(rawValue: raw))
                }
                return Self.json(try await store.allSubscriptionStatuses(anyTransactionId: id, status: statuses))
            } else if let captures = route.match(("GET", "v1/lookup/*")) {
                let orderId = captures[0]
                return Self.json(try await store.lookUpOrderId(orderId))
            } else if route.match(("POST", "v1/notifications/test")) != nil {
                guard dispatcher.url != nil else {
                    return Self.apiError(.serverNotificationUrlNotFound)
                }
                return await change(request, replaying: replaying, journaled: false) {
                    let token = try await store.requestTestNotification()
                    return Self.json(SendTestNotificationResponse(testNotificationToken: token))
                }
            } else if let captures = route.match(("GET", "v1/notifications/test/*")) {
                let token = captures[0]
                return await testNotificationStatus(token)
            } else if route.match(("POST", "v1/notifications/history")) != nil {
                return await notificationHistory(request)
            } else if route.match(
                ("PUT", "v1/subscriptions/extend/*"),
                ("POST", "v1/subscriptions/extend/mass"),
                ("GET", "v1/subscriptions/extend/mass/*/*")
            ) != nil {
                return Self.apiError(
                    .generalBadRequest,
                    message: "The emulator does not support renewal date extensions."
                )
            } else if route.match(
                ("PUT", "v1/transactions/consumption/*"),
                ("PUT", "v2/transactions/consumption/*"),
                ("PUT", "v1/transactions/*/appAccountToken")
            ) != nil {
                return Self.apiError(
                    .generalBadRequest,
                    message: "The emulator does not support \(request.method) \(request.path)."
                )
            } else {
                return HTTPServerResponse(status: 404)
            }
        } catch {
            return Self.response(for: error)
        }
    }

    /// Rejects an id that is not a number, as Apple does with 4000006.
    static func checkTransactionId(_ id: String) throws {
        guard !id.isEmpty, id.count <= 20, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            var error = IAPError(.apiError, "Invalid transaction id")
            error.apiErrorCode = APIErrorCode.invalidTransactionId.rawValue
            error.httpStatus = 400
            throw error
        }
    }

    /// The filters of a transaction history request, from its query, with Apple's errors for bad values.
    static func historyRequest(_ request: HTTPServerRequest) throws -> TransactionHistoryRequest {
        func fail(_ code: APIErrorCode) -> IAPError {
            var error = IAPError(.apiError, code.summary ?? "Invalid request")
            error.apiErrorCode = code.rawValue
            error.httpStatus = code.httpStatus ?? 400
            return error
        }
        var result = TransactionHistoryRequest()
        if let value = request.queryValue("startDate") {
            guard let millis = Int64(value), millis >= 0 else { throw fail(.invalidStartDate) }
            result.startDate = Date(millisecondsSince1970: millis)
        }
        if let value = request.queryValue("endDate") {
            guard let millis = Int64(value), millis >= 0 else { throw fail(.invalidEndDate) }
            result.endDate = Date(millisecondsSince1970: millis)
        }
        let productIds = request.queryValues("productId")
        if !productIds.isEmpty {
            guard productIds.allSatisfy({ !$0.isEmpty }) else { throw fail(.invalidProductId) }
            result.productIds = productIds
        }
        let types = request.queryValues("productType")
        if !types.isEmpty {
            result.productTypes = try types.map {
                guard let type = TransactionHistoryRequest.ProductType(rawValue: $0) else {
                    throw fail(.invalidProductType)
                }
                return type
            }
        }
        if let value = request.queryValue("sort") {
            guard let sort = TransactionHistoryRequest.Order(rawValue: value) else { throw fail(.invalidSort) }
            result.sort = sort
        }
        let groups = request.queryValues("subscriptionGroupIdentifier")
        if !groups.isEmpty {
            guard groups.allSatisfy({ !$0.isEmpty }) else { throw fail(.invalidSubscriptionGroupIdentifier) }
            result.subscriptionGroupIdentifiers = groups
        }
        if let value = request.queryValue("inAppOwnershipType") {
            guard value == "PURCHASED" || value == "FAMILY_SHARED" else { throw fail(.invalidInAppOwnershipType) }
            result.inAppOwnershipType = InAppOwnershipType(rawValue: value)
        }
        if let value = request.queryValue("revoked") {
            // Apple's Python client sends `True` and `False`.
            switch value.lowercased() {
            case "true": result.revoked = true
            case "false": result.revoked = false
            default: throw fail(.invalidRevoked)
            }
        }
        return result
    }

    /// Get Test Notification Status: the `TEST` notification a token names, with its send attempts.
    private func testNotificationStatus(_ token: String) async -> HTTPServerResponse {
        guard let separator = token.lastIndex(of: "_"), Int64(token[token.index(after: separator)...]) != nil else {
            return Self.apiError(.invalidTestNotificationToken)
        }
        let uuid = String(token[..<separator])
        guard let record = await dispatcher.record(notificationUUID: uuid), record.notificationType == "TEST" else {
            return Self.apiError(.testNotificationNotFound)
        }
        return Self.json(
            CheckTestNotificationResponse(signedPayload: record.signedPayload, sendAttempts: record.sendAttempts)
        )
    }

    /// Get Notification History: the notifications signed in `[startDate, endDate)`, 20 a page.
    private func notificationHistory(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        let query: NotificationHistoryRequest
        do {
            query = try AppStoreJSON.makeDecoder().decode(NotificationHistoryRequest.self, from: request.body)
        } catch {
            return Self.apiError(.generalBadRequest, message: "The request body is not a NotificationHistoryRequest.")
        }
        guard let start = query.startDate else { return Self.apiError(.invalidStartDate) }
        guard let end = query.endDate else { return Self.apiError(.invalidEndDate) }
        guard start < end else { return Self.apiError(.startDateAfterEndDate) }
        if query.transactionId != nil, query.notificationType != nil || query.notificationSubtype != nil {
            return Self.apiError(.multipleFiltersSupplied)
        }
        if query.notificationSubtype != nil, query.notificationType == nil {
            return Self.apiError(.invalidNotificationType)
        }
        var offset = 0
        if let token = request.queryValue("paginationToken") {
            guard let data = Data(base64Encoded: token), let text = String(data: data, encoding: .utf8),
                text.hasPrefix("notifications:"), let parsed = Int(text.dropFirst("notifications:".count)),
                parsed >= 0
            else {
                return Self.apiError(.invalidPaginationToken)
            }
            offset = parsed
        }
        let matching = await dispatcher.allRecords().filter { record in
            guard let signed = record.signedDate, signed >= start, signed < end else { return false }
            if let type = query.notificationType, record.notificationType != type.rawValue { return false }
            if let subtype = query.notificationSubtype, record.subtype != subtype.rawValue { return false }
            if let id = query.transactionId, !record.transactionIds.contains(id) { return false }
            if query.onlyFailures == true, record.sendAttempts.last?.sendAttemptResult == .success { return false }
            return true
        }
        let page = matching.dropFirst(offset).prefix(Self.notificationPageSize)
        let next = offset + page.count
        let hasMore = next < matching.count
        return Self.json(
            NotificationHistoryResponse(
                paginationToken: hasMore ? Data("notifications:\(next)".utf8).base64EncodedString() : nil,
                hasMore: hasMore,
                notificationHistory: page.map {
                    NotificationHistoryResponseItem(signedPayload: $0.signedPayload, sendAttempts: $0.sendAttempts)
                }
            )
        )
    }
}
