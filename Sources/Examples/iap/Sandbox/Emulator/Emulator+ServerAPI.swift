import Foundation
import IAPCore
import IAPHTTPServer
import IAPServerAPI
import IAPTesting

extension Emulator {
    /// Answers an App Store Server API request; `segments` follow `/inApps`.
    ///
    /// Finish Transaction, Set App Account Token and the renewal-date extensions (changes: journaled, under the lock,
    /// their notifications posted) and the notification endpoints are the emulator's own; everything else is answered
    /// by the shared ``SimulatedAppStoreServerAPI``, which ``SimulatedAppStoreTransport`` answers from too.
    func serverAPI(_ request: HTTPServerRequest, segments: [String], replaying: Bool) async -> HTTPServerResponse {
        let store = self.store
        let route = ServerAPIRoute(method: request.method, segments: segments)
        if let captures = route.match(("POST", "v1/transactions/*/finish")) {
            let id = captures[0]
            return await change(request, replaying: replaying) {
                try await store.finishTransaction(transactionId: id)
                return HTTPServerResponse(status: 200)
            }
        } else if route.match(
            ("PUT", "v1/transactions/*/appAccountToken"),
            ("PUT", "v1/subscriptions/extend/*"),
            ("POST", "v1/subscriptions/extend/mass")
        ) != nil {
            // A change: journaled, under the lock; the shared API answers it.
            let api = SimulatedAppStoreServerAPI(store: store)
            let asked = SimulatedAppStoreServerAPI.Request(
                method: request.method,
                segments: segments,
                query: request.query,
                body: request.body
            )
            return await change(request, replaying: replaying) {
                HTTPServerResponse(await api.respond(to: asked))
            }
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
        }
        let answer = await SimulatedAppStoreServerAPI(store: store).respond(
            to: .init(method: request.method, segments: segments, query: request.query, body: request.body)
        )
        return HTTPServerResponse(answer)
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
