import Foundation
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPServerAPI
import IAPTesting

extension Emulator {
    private struct PurchaseBody: Decodable {
        let productId: String
        let appAccountToken: String?
        let quantity: Int?
        let askToBuy: Bool?
        let account: String?
        let offerId: String?
    }

    private struct FamilyBody: Decodable {
        let organizer: String
        let member: String
    }

    private struct PriceIncreaseBody: Decodable {
        let price: Int64
        let needsConsent: Bool
    }

    private struct RefundBody: Decodable {
        let reason: Int32?
        let percentage: Int32?
    }

    private struct ConsumptionRequestBody: Decodable {
        let reason: String?
    }

    private struct AdvanceBody: Decodable {
        let seconds: Double
    }

    private struct FaultBody: Decodable {
        let status: Int
        let count: Int
        let retryAfterMillis: Int64?
    }

    private struct TransactionAnswer: Encodable {
        let transactionId: String
        let originalTransactionId: String
        let orderId: String?
        let signedTransaction: String
    }

    private struct SubscriptionAnswer: Encodable {
        let originalTransactionId: String
        let status: Int32
        let signedTransaction: String
        let signedRenewalInfo: String
    }

    private struct NotificationAnswer: Encodable {
        let notificationUUID: String
        let notificationType: String
        let subtype: String?
        let signedPayload: String
        let sendAttempts: [SendAttemptItem]
    }

    /// The longest single clock move: ten years.
    static let maximumAdvance: Double = 10 * 366 * 86_400

    /// Answers a control request; `segments` follow `/emulator/v1`.
    func control(_ request: HTTPServerRequest, segments: [String], replaying: Bool) async -> HTTPServerResponse {
        let store = self.store
        let route = ServerAPIRoute(method: request.method, segments: segments)
        if route.match(("POST", "purchases")) != nil {
            guard let body = try? JSONDecoder().decode(PurchaseBody.self, from: request.body) else {
                return Self.controlError(
                    400,
                    "expected {\"productId\", \"appAccountToken\"?, \"quantity\"?, \"askToBuy\"?}"
                )
            }
            let token = body.appAccountToken.map { UUID(uuidString: $0) }
            if let token, token == nil {
                return Self.controlError(400, "appAccountToken is not a UUID")
            }
            if let offerId = body.offerId {
                guard body.askToBuy != true, (body.quantity ?? 1) == 1 else {
                    return Self.controlError(400, "an offer is bought one at a time, without askToBuy")
                }
                return await change(request, replaying: replaying) {
                    Self.answer(
                        try await store.purchase(
                            productId: body.productId,
                            offerId: offerId,
                            account: body.account ?? "customer",
                            appAccountToken: token ?? nil
                        )
                    )
                }
            }
            return await change(request, replaying: replaying) {
                let result = try await store.purchase(
                    productId: body.productId,
                    account: body.account ?? "customer",
                    appAccountToken: token ?? nil,
                    quantity: body.quantity ?? 1,
                    askToBuy: body.askToBuy ?? false
                )
                return Self.answer(result)
            }
        } else if let captures = route.match(("POST", "ask-to-buy/*/approve")) {
            let requestId = captures[0]
            return await change(request, replaying: replaying) {
                Self.answer(try await store.approveAskToBuy(requestId))
            }
        } else if let captures = route.match(("POST", "ask-to-buy/*/decline")) {
            let requestId = captures[0]
            return await change(request, replaying: replaying) {
                try await store.declineAskToBuy(requestId)
                return .json(Data("{}".utf8))
            }
        } else if let captures = route.match(("POST", "transactions/*/refund")) {
            let id = captures[0]
            let body =
                request.body.isEmpty
                ? RefundBody(reason: nil, percentage: nil)
                : try? JSONDecoder().decode(RefundBody.self, from: request.body)
            guard let body else {
                return Self.controlError(400, "expected {\"reason\"?: 0|1, \"percentage\"?: 1...100000} or no body")
            }
            return await change(request, replaying: replaying) {
                let refunded = try await store.refund(
                    transactionId: id,
                    reason: RevocationReason(rawValue: body.reason ?? 0),
                    percentage: body.percentage
                )
                return Self.json(Self.transactionAnswer(refunded))
            }
        } else if let captures = route.match(("POST", "transactions/*/refund-declined")) {
            let id = captures[0]
            return await change(request, replaying: replaying) {
                try await store.declineRefund(transactionId: id)
                return .json(Data("{}".utf8))
            }
        } else if let captures = route.match(("POST", "transactions/*/refund-reversed")) {
            let id = captures[0]
            return await change(request, replaying: replaying) {
                Self.json(Self.transactionAnswer(try await store.reverseRefund(transactionId: id)))
            }
        } else if route.match(("POST", "family/members")) != nil {
            guard let body = try? JSONDecoder().decode(FamilyBody.self, from: request.body) else {
                return Self.controlError(400, "expected {\"organizer\", \"member\"}")
            }
            return await change(request, replaying: replaying) {
                try await store.addFamilyMember(body.member, toFamilyOf: body.organizer)
                return .json(Data("{}".utf8))
            }
        } else if let captures = route.match(("POST", "family/members/*/remove")) {
            let member = captures[0]
            return await change(request, replaying: replaying) {
                try await store.removeFamilyMember(member)
                return .json(Data("{}".utf8))
            }
        } else if let captures = route.match(("POST", "accounts/*/rescind-consent")) {
            let account = captures[0]
            return await change(request, replaying: replaying) {
                try await store.rescindConsent(account: account)
                return .json(Data("{}".utf8))
            }
        } else if let captures = route.match(("POST", "transactions/*/consumption-request")) {
            let id = captures[0]
            let body =
                request.body.isEmpty
                ? ConsumptionRequestBody(reason: nil)
                : try? JSONDecoder().decode(ConsumptionRequestBody.self, from: request.body)
            guard let body else {
                return Self.controlError(400, "expected {\"reason\"?: \"UNINTENDED_PURCHASE\"|...} or no body")
            }
            return await change(request, replaying: replaying) {
                try await store.requestConsumptionInformation(
                    transactionId: id,
                    reason: body.reason.map(ConsumptionRequestReason.init(rawValue:)) ?? .unintendedPurchase
                )
                return .json(Data("{}".utf8))
            }
        } else if let captures = route.match(("GET", "transactions/*/consumption")) {
            return Self.json(await store.consumptionInformation(transactionId: captures[0]))
        } else if let captures = route.match(("POST", "subscriptions/*/*")) {
            let originalTransactionId = captures[0]
            let action = captures[1]
            let body = request.body
            return await change(request, replaying: replaying) {
                try await self.subscriptionAction(action, originalTransactionId: originalTransactionId, body: body)
            }
        } else if route.match(("POST", "clock/advance")) != nil {
            guard let body = try? JSONDecoder().decode(AdvanceBody.self, from: request.body), body.seconds.isFinite,
                body.seconds >= 0, body.seconds <= Self.maximumAdvance
            else {
                return Self.controlError(400, "expected {\"seconds\": N} with 0 <= N <= ten years")
            }
            let clock = self.clock
            return await change(request, replaying: replaying) {
                try await store.advance(by: .milliseconds(Int64((body.seconds * 1000).rounded())))
                return Self.json(["now": clock.now.millisecondsSince1970])
            }
        } else if route.match(("GET", "clock")) != nil {
            return Self.json(["now": clock.now.millisecondsSince1970])
        } else if route.match(("GET", "root-certificate")) != nil {
            return HTTPServerResponse(
                status: 200,
                headers: ["Content-Type": "application/pkix-cert"],
                body: Data(store.pki.root.derBytes)
            )
        } else if route.match(("POST", "faults")) != nil {
            guard let body = try? JSONDecoder().decode(FaultBody.self, from: request.body),
                body.status == 429 || (500...599).contains(body.status), (0...1000).contains(body.count),
                (body.retryAfterMillis ?? 0) >= 0, (body.retryAfterMillis ?? 0) <= 60_000
            else {
                return Self.controlError(
                    400,
                    "expected {\"status\": 500|429, \"count\": 0...1000, \"retryAfterMillis\"?: 0...60000}"
                )
            }
            fault.withLock {
                $0 =
                    body.count > 0
                    ? Fault(status: body.status, remaining: body.count, retryAfterMillis: body.retryAfterMillis) : nil
            }
            return .json(Data("{}".utf8))
        } else if route.match(("GET", "notifications")) != nil {
            let records = await dispatcher.allRecords()
            return Self.json(
                records.map {
                    NotificationAnswer(
                        notificationUUID: $0.notificationUUID,
                        notificationType: $0.notificationType,
                        subtype: $0.subtype,
                        signedPayload: $0.signedPayload,
                        sendAttempts: $0.sendAttempts
                    )
                }
            )
        } else {
            return Self.controlError(404, "no such endpoint: \(request.method) \(request.path)")
        }
    }

    /// A subscription event: `renew`, `fail-billing`, `recover-billing`, `cancel`, `expire`, `price-increase`
    /// (body `{"price", "needsConsent"}`) or `accept-price-increase`.
    private func subscriptionAction(_ action: String, originalTransactionId: String, body: Data) async throws
        -> HTTPServerResponse
    {
        switch action {
        case "price-increase":
            guard let increase = try? JSONDecoder().decode(PriceIncreaseBody.self, from: body) else {
                return Self.controlError(400, "expected {\"price\": milliunits, \"needsConsent\": true|false}")
            }
            try await store.announcePriceIncrease(
                originalTransactionId: originalTransactionId,
                price: increase.price,
                needsConsent: increase.needsConsent
            )
        case "accept-price-increase":
            try await store.consentToPriceIncrease(originalTransactionId: originalTransactionId)
        case "renew":
            // The renewal falls due at the end of the current period: move the clock there.
            guard let expiry = try await expiresDate(originalTransactionId), expiry > clock.now else {
                return Self.controlError(
                    409,
                    "no renewal is due: the subscription's period has ended (billing retry, grace period or expired)"
                )
            }
            try await store.advance(by: Self.duration(from: clock.now, to: expiry))
        case "fail-billing":
            try await store.setBillingFailure(originalTransactionId: originalTransactionId, failing: true)
        case "recover-billing":
            try await store.setBillingFailure(originalTransactionId: originalTransactionId, failing: false)
        case "cancel":
            try await store.setAutoRenew(originalTransactionId: originalTransactionId, enabled: false)
        case "expire":
            // Everything that can refuse runs before the first change, so a refused expire changed nothing.
            let info = try await store.renewalInfo(originalTransactionId: originalTransactionId)
            let expiry = try await expiresDate(originalTransactionId)
            if info.payload.autoRenewStatus == .on {
                try await store.setAutoRenew(originalTransactionId: originalTransactionId, enabled: false)
            }
            if let expiry, expiry > clock.now {
                try await store.advance(by: Self.duration(from: clock.now, to: expiry))
            }
        default:
            return Self.controlError(
                404,
                "unknown subscription action '\(action)'; use renew, fail-billing, recover-billing, cancel, expire, "
                    + "price-increase or accept-price-increase"
            )
        }
        return try await subscriptionAnswer(originalTransactionId)
    }

    private func expiresDate(_ originalTransactionId: String) async throws -> Date? {
        let statuses = try await store.allSubscriptionStatuses(anyTransactionId: originalTransactionId)
        let item = statuses.data?.flatMap { $0.lastTransactions ?? [] }
            .first { $0.originalTransactionId == originalTransactionId }
        guard let signed = item?.signedTransactionInfo, let bytes = EmulatorJWS.payload(of: signed) else {
            throw IAPError(.notFound, "no subscription has the original transaction id \(originalTransactionId)")
        }
        return try AppStoreJSON.makeDecoder().decode(TransactionPayload.self, from: bytes).expiresDate
    }

    private func subscriptionAnswer(_ originalTransactionId: String) async throws -> HTTPServerResponse {
        let statuses = try await store.allSubscriptionStatuses(anyTransactionId: originalTransactionId)
        guard
            let item = statuses.data?.flatMap({ $0.lastTransactions ?? [] })
                .first(where: { $0.originalTransactionId == originalTransactionId }),
            let status = item.status, let signedTransaction = item.signedTransactionInfo,
            let signedRenewalInfo = item.signedRenewalInfo
        else {
            throw IAPError(.notFound, "no subscription has the original transaction id \(originalTransactionId)")
        }
        return Self.json(
            SubscriptionAnswer(
                originalTransactionId: originalTransactionId,
                status: status.rawValue,
                signedTransaction: signedTransaction,
                signedRenewalInfo: signedRenewalInfo
            )
        )
    }

    /// The time from one date to a later one, rounded up to the millisecond so the event at `end` is due.
    private static func duration(from start: Date, to end: Date) -> Duration {
        .milliseconds(max(0, end.millisecondsSince1970 - start.millisecondsSince1970))
    }

    private static func transactionAnswer(_ transaction: SimulatedTransaction) -> TransactionAnswer {
        TransactionAnswer(
            transactionId: transaction.transactionId,
            originalTransactionId: transaction.originalTransactionId,
            orderId: transaction.orderId,
            signedTransaction: transaction.signedTransaction
        )
    }

    private static func answer(_ result: SimulatedPurchaseResult) -> HTTPServerResponse {
        switch result {
        case .purchased(let transaction):
            return json(transactionAnswer(transaction))
        case .pending(let requestId):
            return json(["askToBuyRequestId": requestId], status: 202)
        case .failed(let error):
            return controlError(400, "the purchase failed: \(error.message)")
        }
    }
}
