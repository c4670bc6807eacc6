#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// A ready ``ConsumptionRequestHandler``: answers Apple's `CONSUMPTION_REQUEST` from the ledger, within Apple's
/// 12-hour window, with Send Consumption Information (version 2).
///
/// For each request it reads the ledger — whether the purchase was delivered (``DeliveryStatus``), how much of it
/// was used (a consumable's spent units against the units granted; the elapsed share of a subscription period), the
/// customer's tenure and lifetime purchases and refunds — and asks the integrator, through `facts`, for what only
/// they know: the customer's consent, units spent, a sample provided, a refund preference. Without consent nothing
/// is sent, as Apple requires. A send that fails with a retryable error throws, so the notification is answered with
/// a 5xx and the App Store sends it again.
///
/// Apple's version 2 request carries delivery status, consumption percentage, refund preference, sample content and
/// consent; tenure and lifetime amounts (fields of the deprecated version 1) are given to `facts`, to decide the
/// refund preference from (for example, decline when a customer's refunds exceed their purchases).
///
/// ```swift
/// let responder = LedgerConsumptionResponder(store: ledger, clients: AppStoreServerAPIClients(client)) { context in
///     ConsumptionFacts(
///         customerConsented: await consents.hasConsented(context.entry?.userId),
///         unitsUsed: await wallet.unitsSpent(of: context.transaction.transactionId)
///     )
/// }
/// let processor = NotificationProcessor(pipeline: pipeline, consumptionRequests: responder)
/// ```
public struct LedgerConsumptionResponder: ConsumptionRequestHandler {
    /// How long after a request Apple takes an answer.
    public static let answerWindow: Duration = .seconds(12 * 3_600)

    /// Supplies what only the integrator knows.
    public typealias Facts = @Sendable (ConsumptionContext) async throws -> ConsumptionFacts

    private let store: any EntitlementStore
    private let clients: AppStoreServerAPIClients
    private let clock: any WallClock
    private let facts: Facts

    /// Creates a responder.
    ///
    /// - Parameters:
    ///   - store: The ledger.
    ///   - clients: The App Store Server API clients; each answer goes to the transaction's own environment.
    ///   - clock: The wall clock.
    ///   - facts: What only the integrator knows, for one request.
    public init(
        store: some EntitlementStore,
        clients: AppStoreServerAPIClients,
        clock: some WallClock = SystemClock(),
        facts: @escaping Facts
    ) {
        self.store = store
        self.clients = clients
        self.clock = clock
        self.facts = facts
    }

    public func handleConsumptionRequest(for transaction: TransactionPayload, reason: ConsumptionRequestReason?)
        async throws
    {
        _ = try await respond(to: transaction, reason: reason, requestedAt: nil)
    }

    /// Answers one refund request: computes the answer and sends it when the customer consented and Apple's window
    /// is open.
    ///
    /// - Parameters:
    ///   - transaction: The verified transaction of the `CONSUMPTION_REQUEST`.
    ///   - reason: The customer's stated reason.
    ///   - requestedAt: When Apple asked (the notification's `signedDate`); `nil` for now.
    /// - Returns: What was computed and whether it was sent.
    /// - Throws: ``IAPError`` from the ledger, the integrator's `facts` or the API (retryable ones make the
    ///   notification come again).
    public func respond(
        to transaction: TransactionPayload,
        reason: ConsumptionRequestReason?,
        requestedAt: Date?
    ) async throws -> ConsumptionAnswer {
        let answer = try await answer(for: transaction, reason: reason, requestedAt: requestedAt)
        guard answer.notSentBecause == nil, let transactionId = transaction.transactionId else {
            return answer
        }
        let client = try clients.client(for: transaction.environment, bundleId: transaction.bundleId)
        try await client.sendConsumptionInformation(transactionId: transactionId, answer.request)
        var sent = answer
        sent.sent = true
        return sent
    }

    /// Computes the answer to a refund request without sending it.
    ///
    /// - Parameters:
    ///   - transaction: The verified transaction of the `CONSUMPTION_REQUEST`.
    ///   - reason: The customer's stated reason.
    ///   - requestedAt: When Apple asked; `nil` for now.
    /// - Returns: The answer; ``ConsumptionAnswer/notSentBecause`` says why it would not be sent.
    public func answer(
        for transaction: TransactionPayload,
        reason: ConsumptionRequestReason?,
        requestedAt: Date?
    ) async throws -> ConsumptionAnswer {
        let now = clock.now
        let asked = requestedAt ?? now
        let context = try await context(for: transaction, reason: reason, requestedAt: asked)
        let supplied = try await facts(context)
        let request = ConsumptionRequest(
            customerConsented: supplied.customerConsented,
            consumptionPercentage: supplied.consumptionPercentage
                ?? Self.consumedShare(of: context, unitsUsed: supplied.unitsUsed, now: now),
            deliveryStatus: Self.deliveryStatus(of: context.entry),
            refundPreference: supplied.refundPreference,
            sampleContentProvided: supplied.sampleContentProvided
        )
        var reasonNotSent: String?
        if transaction.transactionId == nil {
            reasonNotSent = "the request names no transaction"
        } else if !supplied.customerConsented {
            reasonNotSent = "the customer did not consent to sharing consumption data"
        } else if now > context.deadline {
            reasonNotSent = "Apple's 12-hour window to answer closed at \(context.deadline)"
        }
        return ConsumptionAnswer(context: context, request: request, sent: false, notSentBecause: reasonNotSent)
    }

    private func context(
        for transaction: TransactionPayload,
        reason: ConsumptionRequestReason?,
        requestedAt: Date
    ) async throws -> ConsumptionContext {
        var entry: LedgerEntry?
        if let transactionId = transaction.transactionId {
            entry = try await store.entry(transactionId: transactionId)
        }
        var history: [LedgerEntry] = []
        if let userId = entry?.userId, !userId.hasPrefix(DeliveryPipeline.unownedPrefix) {
            history = try await store.allHistory(userId: userId)
        }
        var purchased: [String: Int64] = [:]
        var refunded: [String: Int64] = [:]
        var first: Date?
        for item in history {
            let date = item.transaction.purchaseDate ?? item.recordedAt
            first = min(first ?? date, date)
            guard let currency = item.transaction.currency, let price = item.transaction.price, price > 0 else {
                continue
            }
            purchased[currency, default: 0] &+= price
            if item.revokedAt != nil {
                refunded[currency, default: 0] &+= price
            }
        }
        let tenure = first.map { max(0, Int(requestedAt.timeIntervalSince($0) / 86_400)) } ?? 0
        return ConsumptionContext(
            transaction: transaction,
            entry: entry,
            reason: reason,
            requestedAt: requestedAt,
            deadline: requestedAt.addingTimeInterval(Self.answerWindow.timeInterval),
            accountTenureDays: tenure,
            lifetimePurchased: purchased,
            lifetimeRefunded: refunded
        )
    }

    /// Delivered when the hook confirmed the grant; a server outage while it is being retried or dead-lettered;
    /// otherwise (never recorded, waiting for its owner) undelivered for another reason.
    static func deliveryStatus(of entry: LedgerEntry?) -> DeliveryStatus {
        guard let entry else { return .undeliveredOther }
        if entry.deliveredAt != nil {
            return .delivered
        }
        switch entry.deliveryState {
        case .retrying, .deadLettered: return .undeliveredServerOutage
        default: return .undeliveredOther
        }
    }

    /// The share consumed, in milliunits of a percent: a consumable's spent units against the units granted; the
    /// elapsed part of a subscription's period; unknown otherwise.
    static func consumedShare(of context: ConsumptionContext, unitsUsed: Int64?, now: Date) -> Int32? {
        let transaction = context.transaction
        if let unitsUsed, let granted = context.entry?.grantedUnits, granted > 0 {
            return Int32(min(100_000, max(0, unitsUsed) * 100_000 / granted))
        }
        if let start = transaction.purchaseDate, let end = transaction.expiresDate, end > start {
            let share = now.timeIntervalSince(start) / end.timeIntervalSince(start)
            return Int32((min(1, max(0, share)) * 100_000).rounded())
        }
        return nil
    }
}
