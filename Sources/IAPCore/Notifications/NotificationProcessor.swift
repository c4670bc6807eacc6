#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The answer for the App Store: an HTTP status and a small JSON body that names what happened and never the internal
/// detail (which goes to the pipeline's ``EventSink``).
///
/// | Outcome | Status | Body |
/// |---|---|---|
/// | processed, duplicate, unowned | `200` | `{"outcome":"processed"}` (`duplicate`, `unowned`) |
/// | rejected: did not verify | `400` | `{"code":"<IAPError code>","error":"the notification did not verify"}` |
/// | rejected: not a notification (`malformedRequest`) | `400` | `{"code":"<IAPError code>","error":"the body is not {\"signedPayload\": \"...\"} of this app"}` |
/// | failed | `503`, `Retry-After: 5` | `{"code":"<IAPError code>","error":"the notification could not be recorded now; send it again"}` |
public struct NotificationResponse: Sendable, Hashable {
    /// `200` once the effect is durable; `400` for a body that is not App Store data of this app (retrying cannot
    /// help); `503` when the App Store should send the notification again.
    public var status: Int
    /// The JSON body.
    public var body: String
    /// How many seconds the App Store should wait before sending again (the `Retry-After` header), for a `503`.
    public var retryAfterSeconds: Int?

    /// The body's media type.
    public static let contentType = "application/json"

    /// Creates a response.
    public init(status: Int, body: String, retryAfterSeconds: Int? = nil) {
        self.status = status
        self.body = body
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// A JSON object of strings, keys sorted, `/` not escaped.
    static func json(_ object: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(object), let text = String(data: data, encoding: .utf8) else {
            return "{}"
        }
        return text
    }
}

/// What processing one notification did.
public enum NotificationOutcome: Sendable, Hashable {
    /// The effect is durable. The transaction's delivery outcome is included when the notification
    /// carried a transaction.
    case processed(NotificationType?, DeliveryOutcome?)
    /// This `notificationUUID` was processed before; nothing was done again.
    case duplicate(String)
    /// Processed, but the transaction belongs to no known user (no appAccountToken, never submitted by the
    /// app); reconciliation or the support tool can attach it later.
    case unowned(NotificationType?, TransactionPayload)
    /// Not App Store data, or data for another app: retrying cannot help.
    case rejected(IAPError)
    /// A failure that may pass (the store is unavailable): the App Store should retry.
    case failed(IAPError)

    /// A short stable name: `processed`, `duplicate`, `unowned`, `rejected` or `failed`.
    public var name: String {
        switch self {
        case .processed: "processed"
        case .duplicate: "duplicate"
        case .unowned: "unowned"
        case .rejected: "rejected"
        case .failed: "failed"
        }
    }

    /// The notification's type, when it verified and was not a duplicate.
    public var notificationType: NotificationType? {
        switch self {
        case .processed(let type, _), .unowned(let type, _): type
        case .duplicate, .rejected, .failed: nil
        }
    }

    /// The error of a rejected or failed notification.
    public var error: IAPError? {
        switch self {
        case .rejected(let error), .failed(let error): error
        case .processed, .duplicate, .unowned: nil
        }
    }

    /// The neutral HTTP answer for this outcome (see ``NotificationResponse``): what happened, never the internal
    /// detail of a failure.
    public var response: NotificationResponse {
        switch self {
        case .processed, .duplicate, .unowned:
            return NotificationResponse(status: 200, body: NotificationResponse.json(["outcome": name]))
        case .rejected(let error):
            let message =
                error.code.isVerificationFailure
                ? "the notification did not verify" : #"the body is not {"signedPayload": "..."} of this app"#
            return NotificationResponse(
                status: 400,
                body: NotificationResponse.json(["code": error.code.rawValue, "error": message])
            )
        case .failed(let error):
            return NotificationResponse(
                status: 503,
                body: NotificationResponse.json([
                    "code": error.code.rawValue,
                    "error": "the notification could not be recorded now; send it again",
                ]),
                retryAfterSeconds: 5
            )
        }
    }
}

/// Answers a `CONSUMPTION_REQUEST`: the integrator decides what to tell the App Store about a refund request.
public protocol ConsumptionRequestHandler: Sendable {
    /// Handles a consumption request for a transaction (for example by calling Send Consumption Information).
    ///
    /// - Parameters:
    ///   - transaction: The verified transaction the customer asked a refund for.
    ///   - reason: The customer's stated reason, if any.
    /// - Throws: Any error; the notification is then answered with a 5xx so the App Store retries.
    func handleConsumptionRequest(for transaction: TransactionPayload, reason: ConsumptionRequestReason?) async throws
}

/// Processes App Store Server Notifications V2, framework-agnostic: hand it the request body, send back
/// its ``NotificationResponse``.
///
/// It verifies the `signedPayload` and the signed data nested in it, drops duplicates by
/// `notificationUUID`, and maps every notification type to its effect:
/// - purchases, renewals, offer redemptions, upgrades and one-time charges (`SUBSCRIBED`, `DID_RENEW`,
///   `OFFER_REDEEMED`, `DID_CHANGE_RENEWAL_PREF`, `ONE_TIME_CHARGE`) go through the ``DeliveryPipeline``;
/// - renewal-state events (`DID_CHANGE_RENEWAL_STATUS`, `DID_FAIL_TO_RENEW`, `GRACE_PERIOD_EXPIRED`,
///   `EXPIRED`, `PRICE_INCREASE`, `RENEWAL_EXTENDED`, ...) store the renewal info, and any newer
///   transaction (a new expiry date);
/// - `REFUND` and `REVOKE` take back through the pipeline's revoke hook, `REFUND_REVERSED` grants again;
/// - `CONSUMPTION_REQUEST` asks the ``ConsumptionRequestHandler``;
/// - `RESCIND_CONSENT`, `EXTERNAL_PURCHASE_TOKEN`, `METADATA_UPDATE`, `MIGRATION` and `PRICE_CHANGE` go to the
///   ``AppNotificationHandler``;
/// - `TEST`, `REFUND_DECLINED`, `RENEWAL_EXTENSION` summaries and types this version does not know are
///   recorded and acknowledged, never fatal.
///
/// One processor takes the notifications of both environments: give it a verifier that accepts Production and
/// Sandbox (`AppStoreSignedDataVerifier.Configuration(environments: [.production, .sandbox], ...)`) and point App
/// Store Connect's production and sandbox notification URLs at the same route. Each transaction keeps its own
/// environment in the ledger, and the pipeline's ``SandboxPolicy`` decides what a sandbox purchase gets.
///
/// Out-of-order delivery is harmless: a renewal info is stored only when newer than the stored one, and
/// a transaction changes the ledger only when its `signedDate` is newer. The answer is `200` only once the
/// effect is durable, and the notification is marked processed only after its effect.
///
/// Each notification is reported as one ``IAPEvent`` to the pipeline's ``EventSink``: `notification.processed`,
/// `notification.duplicate`, `notification.unowned`, `notification.rejected` or `notification.failed`, with the
/// transaction's ids, product, user and environment when it carried one, the delivery outcome (or the notification's
/// own) as `outcome`, the error code of a failure, the notification's type, subtype and UUID in `message`, and how
/// long it took.
///
/// ```swift
/// // In any HTTP framework's route for POST /app-store/notifications:
/// let response = await processor.handle(body: requestBody)
/// return HTTPResponse(status: response.status, body: response.body)
/// ```
public final class NotificationProcessor: Sendable {
    private let pipeline: DeliveryPipeline
    private let consumption: (any ConsumptionRequestHandler)?
    private let appNotifications: (any AppNotificationHandler)?
    private var verifier: any Verifier { pipeline.verifier }
    private var store: any EntitlementStore { pipeline.store }
    private var clock: any WallClock { pipeline.clock }

    /// The largest body accepted; the App Store's notifications are far smaller.
    public static let maximumBodySize = 512 * 1024

    /// Creates a processor.
    ///
    /// - Parameters:
    ///   - pipeline: Delivers and revokes transactions; its verifier checks the notification and the signed data
    ///     nested in it, its store keeps the renewal infos and the processed notification ids, its clock dates them,
    ///     and its event sink hears of each notification.
    ///   - consumptionRequests: Answers `CONSUMPTION_REQUEST`s; without one they are acknowledged only.
    ///   - appNotifications: Handles the app-level notifications (``NotificationType/appLevel``: `RESCIND_CONSENT`,
    ///     `EXTERNAL_PURCHASE_TOKEN`, `METADATA_UPDATE`, `MIGRATION`, `PRICE_CHANGE`); without one they are
    ///     acknowledged only.
    public init(
        pipeline: DeliveryPipeline,
        consumptionRequests: (any ConsumptionRequestHandler)? = nil,
        appNotifications: (any AppNotificationHandler)? = nil
    ) {
        self.pipeline = pipeline
        self.consumption = consumptionRequests
        self.appNotifications = appNotifications
    }

    private struct Body: Decodable {
        let signedPayload: String
    }

    /// Handles the body of an App Store Server Notifications V2 request (`{"signedPayload": "..."}`).
    ///
    /// - Parameter body: The raw request body.
    /// - Returns: The HTTP status and body to answer with.
    public func handle(body: Data) async -> NotificationResponse {
        await process(body: body).response
    }

    /// Processes the body of an App Store Server Notifications V2 request (`{"signedPayload": "..."}`), and tells
    /// what was done: for a route that answers with more than ``NotificationOutcome/response`` (metrics by type and
    /// outcome, its own body).
    ///
    /// - Parameter body: The raw request body.
    /// - Returns: What was done; ``NotificationOutcome/response`` is the answer ``handle(body:)`` gives.
    public func process(body: Data) async -> NotificationOutcome {
        let started = ContinuousClock.now
        guard body.count <= Self.maximumBodySize else {
            let outcome = NotificationOutcome.rejected(
                IAPError(.malformedRequest, "the body is \(body.count) bytes, more than \(Self.maximumBodySize)")
            )
            report(outcome, notification: nil, started: started)
            return outcome
        }
        let signedPayload: String
        do {
            signedPayload = try JSONDecoder().decode(Body.self, from: body).signedPayload
        } catch {
            let outcome = NotificationOutcome.rejected(
                IAPError(.malformedRequest, "the body is not {\"signedPayload\": \"...\"}")
            )
            report(outcome, notification: nil, started: started)
            return outcome
        }
        guard !JSONMemberNames.hasDuplicate([UInt8](body)) else {
            let outcome = NotificationOutcome.rejected(IAPError(.malformedRequest, "the body names a member twice"))
            report(outcome, notification: nil, started: started)
            return outcome
        }
        return await process(signedPayload: signedPayload, started: started)
    }

    /// Processes one notification's `signedPayload`.
    ///
    /// - Parameter signedPayload: The notification's signed payload.
    /// - Returns: What was done.
    public func process(signedPayload: String) async -> NotificationOutcome {
        await process(signedPayload: signedPayload, started: ContinuousClock.now)
    }

    private func process(signedPayload: String, started: ContinuousClock.Instant) async -> NotificationOutcome {
        let notification: VerifiedNotification
        do {
            notification = try await verifier.verifyNotification(signedPayload)
        } catch let error as IAPError where !error.isRetryable {
            let outcome = NotificationOutcome.rejected(error)
            report(outcome, notification: nil, started: started)
            return outcome
        } catch {
            // A failure that may pass (a custom verifier's network call): the App Store should try again.
            var failure = IAPError.wrapping(error, as: .internalError, "verification did not finish")
            failure.isRetryable = true
            let outcome = NotificationOutcome.failed(failure)
            report(outcome, notification: nil, started: started)
            return outcome
        }
        let outcome = await apply(notification, userId: nil)
        report(outcome, notification: notification, started: started)
        return outcome
    }

    /// Processes a notification that was already verified.
    ///
    /// - Parameters:
    ///   - notification: The verified notification.
    ///   - userId: The user a new purchase in it belongs to, when the caller knows; `nil` resolves it from the
    ///     appAccountToken binding or the subscription it continues.
    /// - Returns: What was done.
    public func process(_ notification: VerifiedNotification, userId: String? = nil) async -> NotificationOutcome {
        let started = ContinuousClock.now
        let outcome = await apply(notification, userId: userId)
        report(outcome, notification: notification, started: started)
        return outcome
    }

    /// Applies a verified notification's effect.
    private func apply(_ notification: VerifiedNotification, userId: String?) async -> NotificationOutcome {
        let type = notification.payload.notificationType
        do {
            if let uuid = notification.payload.notificationUUID,
                try await store.isNotificationProcessed(uuid)
            {
                return .duplicate(uuid)
            }
            if let renewal = notification.renewalInfo, renewal.originalTransactionId != nil {
                do {
                    try await pipeline.checkEnvironment(
                        of: renewal,
                        bundleId: notification.payload.data?.bundleId
                    )
                } catch let conflict as IAPError
                    where conflict.code == .environmentMismatch || conflict.code == .bundleIdMismatch
                {
                    // Another environment's or another app's purchase family: nothing of it is applied, and the App
                    // Store need not send it again.
                    try await markProcessed(notification)
                    return .processed(type, .rejected(conflict))
                }
                _ = try await store.storeRenewalInfo(renewal)
            }
            var delivery: DeliveryOutcome?
            if let transaction = notification.transaction {
                let signed = notification.payload.data?.signedTransactionInfo
                switch try await deliver(transaction, signedTransaction: signed, userId: userId) {
                case .outcome(let outcome):
                    delivery = outcome
                case .unowned:
                    if let failure = await handleAppLevel(notification) {
                        return .failed(failure)
                    }
                    try await markProcessed(notification)
                    return .unowned(type, transaction)
                }
            }
            if type == .consumptionRequest, let transaction = notification.transaction, let consumption {
                do {
                    try await consumption.handleConsumptionRequest(
                        for: transaction,
                        reason: notification.payload.data?.consumptionRequestReason
                    )
                } catch {
                    return .failed(
                        IAPError.wrapping(error, as: .internalError, "the consumption request handler failed")
                    )
                }
            }
            if let failure = await handleAppLevel(notification) {
                return .failed(failure)
            }
            try await markProcessed(notification)
            return .processed(type, delivery)
        } catch {
            var failure = IAPError.wrapping(error, as: .storageFailure, "processing the notification failed")
            failure.isRetryable = true
            return .failed(failure)
        }
    }

    /// Hands an app-level notification to the ``AppNotificationHandler``; the failure to answer with, if it threw.
    private func handleAppLevel(_ notification: VerifiedNotification) async -> IAPError? {
        guard let type = notification.payload.notificationType, type.isAppLevel, let appNotifications else {
            return nil
        }
        do {
            try await appNotifications.handleAppNotification(notification)
            return nil
        } catch {
            var failure = IAPError.wrapping(
                error,
                as: .internalError,
                "the app notification handler failed on \(type.rawValue)"
            )
            failure.isRetryable = true
            return failure
        }
    }

    private enum Delivered {
        case outcome(DeliveryOutcome)
        case unowned
    }

    private func deliver(_ transaction: TransactionPayload, signedTransaction: String?, userId: String?) async throws
        -> Delivered
    {
        // A transaction the ledger knows is brought up to date (refund, reversal, new expiry);
        // an unknown one is a purchase made elsewhere (a renewal, another device, Ask to Buy approved).
        let outcome = await pipeline.deliver(transaction, signedTransaction: signedTransaction, userId: userId)
        if case .awaitingOwner = outcome {
            return .unowned
        }
        return try result(outcome)
    }

    private func result(_ outcome: DeliveryOutcome) throws -> Delivered {
        if case .rejected(let error) = outcome {
            // A store failure must make the App Store retry, and so must a product missing from the catalog:
            // once the catalog is fixed, the retried notification delivers the purchase. Anything else
            // (another user's transaction, another app's) would fail again the same way.
            if error.isRetryable || error.code == .unknownProduct {
                throw error
            }
        }
        return .outcome(outcome)
    }

    /// Reports one notification as an event.
    private func report(
        _ outcome: NotificationOutcome,
        notification: VerifiedNotification?,
        started: ContinuousClock.Instant
    ) {
        var transaction = notification?.transaction
        var entry: LedgerEntry?
        switch outcome {
        case .processed(_, let delivery?):
            entry = delivery.entry
        case .unowned(_, let unowned):
            transaction = unowned
        default:
            break
        }
        let delivery: DeliveryOutcome? =
            if case .processed(_, let delivery) = outcome { delivery } else { nil }
        var detail: [String] = []
        if let payload = notification?.payload {
            detail.append(payload.notificationType?.rawValue ?? "notification")
            if let subtype = payload.subtype {
                detail.append(subtype.rawValue)
            }
            if let uuid = payload.notificationUUID {
                detail.append(uuid)
            }
        }
        if let error = outcome.error ?? delivery.flatMap(Self.error(of:)) {
            detail.append("\(error.code.rawValue): \(error.message)")
        }
        let elapsed = ContinuousClock.now - started
        pipeline.events.record(
            IAPEvent(
                time: clock.now,
                event: "notification.\(outcome.name)",
                userId: entry?.owner,
                productId: entry?.productId ?? transaction?.productId,
                transactionId: entry?.transactionId ?? transaction?.transactionId,
                originalTransactionId: entry?.originalTransactionId ?? transaction?.originalTransactionId,
                environment: (transaction?.environment ?? notification?.payload.data?.environment)?.rawValue,
                outcome: delivery?.name ?? outcome.name,
                errorCode: (outcome.error ?? delivery.flatMap(Self.error(of:)))?.code.rawValue,
                message: detail.isEmpty ? nil : detail.joined(separator: " "),
                durationMs: Int64((elapsed / .milliseconds(1)).rounded()),
                notificationType: notification?.payload.notificationType?.rawValue,
                notificationSubtype: notification?.payload.subtype?.rawValue
            )
        )
    }

    private static func error(of delivery: DeliveryOutcome) -> IAPError? {
        switch delivery {
        case .deferred(_, let error), .rejected(let error): error
        default: nil
        }
    }

    private func markProcessed(_ notification: VerifiedNotification) async throws {
        if let uuid = notification.payload.notificationUUID {
            _ = try await store.markNotificationProcessed(uuid, at: clock.now)
        }
    }
}
