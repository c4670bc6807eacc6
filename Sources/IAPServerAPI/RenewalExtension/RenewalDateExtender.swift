#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// Extends one subscription's renewal date (Extend a Subscription Renewal Date), within Apple's limits and
/// idempotently.
///
/// Before it calls Apple, it checks what Apple would refuse: 1 to 90 days, a reason code 0 to 3, a request
/// identifier of 1 to 128 characters, and at most two extensions of a subscription within 365 days (counting
/// those requested or succeeded; a refused one does not count). It records each request durably in a
/// ``RenewalExtensionStore`` *before* the call, and Apple's answer after, so:
/// - a retry with the same request identifier after an answer makes no second call and returns the same record;
/// - a retry after a crash or a network failure (record still `requested`) asks Apple again with the same
///   identifier, which Apple recognises;
/// - the same identifier with other parameters is refused (`requestIdentifierReused`).
public struct RenewalDateExtender: Sendable {
    /// Apple's limit: extensions of one subscription within ``window``.
    public static let maximumExtensionsPerWindow = 2
    /// Apple's window: 365 days.
    public static let window: TimeInterval = 365 * 86_400
    /// Apple's range of days per extension.
    public static let allowedDays: ClosedRange<Int> = 1...90

    private let client: AppStoreServerAPIClient
    private let store: any RenewalExtensionStore
    private let clock: any WallClock

    /// Creates an extender.
    ///
    /// - Parameters:
    ///   - client: The App Store Server API client.
    ///   - store: Where requests are recorded.
    ///   - clock: The clock of the 365-day window.
    public init(
        client: AppStoreServerAPIClient,
        store: some RenewalExtensionStore,
        clock: some WallClock = SystemClock()
    ) {
        self.client = client
        self.store = store
        self.clock = clock
    }

    /// Extends a subscription's renewal date once per request identifier.
    ///
    /// - Parameters:
    ///   - originalTransactionId: The subscription's original transaction id.
    ///   - days: By how many days, 1 to 90.
    ///   - reason: Why (``ExtendReasonCode``, 0 to 3).
    ///   - requestIdentifier: A unique id of this request (a UUID): the idempotency key.
    /// - Returns: The record: `succeeded` with the new renewal date, or `failed` with Apple's refusal. A repeated
    ///   identifier returns the stored record without calling Apple.
    /// - Throws: ``IAPError`` `invalidArgument` for days, reason or identifier out of range;
    ///   `extensionLimitReached` for a third extension within 365 days; `requestIdentifierReused` for a known
    ///   identifier with other parameters; a retryable `apiError`, `transportFailure` or `timeout` when Apple could
    ///   not answer (the record stays `requested`: retry with the same identifier); `storageFailure`.
    public func extend(
        originalTransactionId: String,
        days: Int,
        reason: ExtendReasonCode,
        requestIdentifier: String
    ) async throws -> RenewalExtensionRecord {
        guard !originalTransactionId.isEmpty, originalTransactionId.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw IAPError(.invalidArgument, "'\(originalTransactionId)' is not an original transaction id")
        }
        guard Self.allowedDays.contains(days) else {
            throw IAPError(.invalidArgument, "a renewal date can be extended by 1 to 90 days, not \(days)")
        }
        guard (0...3).contains(reason.rawValue) else {
            throw IAPError(.invalidArgument, "the extend reason code must be 0, 1, 2 or 3, not \(reason.rawValue)")
        }
        guard !requestIdentifier.isEmpty, requestIdentifier.count <= 128 else {
            throw IAPError(.invalidArgument, "the request identifier must have 1 to 128 characters")
        }
        let now = clock.now
        let candidate = RenewalExtensionRecord(
            requestIdentifier: requestIdentifier,
            originalTransactionId: originalTransactionId,
            extendByDays: Int32(days),
            reasonCode: reason.rawValue,
            requestedAt: now
        )
        var record: RenewalExtensionRecord
        switch try await store.begin(
            candidate,
            limit: Self.maximumExtensionsPerWindow,
            since: now.addingTimeInterval(-Self.window)
        ) {
        case .started(let started):
            record = started
        case .existing(let existing):
            guard existing.asksSame(as: candidate) else {
                throw IAPError(
                    .requestIdentifierReused,
                    "request identifier '\(requestIdentifier)' was used for another extension (subscription "
                        + "\(existing.originalTransactionId), \(existing.extendByDays) days, reason \(existing.reasonCode))"
                )
            }
            guard existing.state == .requested else {
                return existing
            }
            record = existing
        case .limitReached(let live):
            let dates = live.map { String($0.requestedAt.millisecondsSince1970) }.joined(separator: ", ")
            throw IAPError(
                .extensionLimitReached,
                "subscription \(originalTransactionId) was extended \(live.count) times within 365 days "
                    + "(requested at \(dates) ms); Apple allows \(Self.maximumExtensionsPerWindow)"
            )
        }

        let response: ExtendRenewalDateResponse
        do {
            response = try await client.extendSubscriptionRenewalDate(
                originalTransactionId: originalTransactionId,
                ExtendRenewalDateRequest(
                    extendByDays: Int32(days),
                    extendReasonCode: reason,
                    requestIdentifier: requestIdentifier
                )
            )
        } catch let error as IAPError where !error.isRetryable && error.code == .apiError {
            record.state = .failed
            record.error = "\(error.code): \(error.message)"
            record.completedAt = clock.now
            try await store.complete(record)
            return record
        }
        record.state = response.success == true ? .succeeded : .failed
        record.effectiveDate = response.effectiveDate
        record.webOrderLineItemId = response.webOrderLineItemId
        if response.success != true {
            record.error = "Apple answered success: false"
        }
        record.completedAt = clock.now
        try await store.complete(record)
        return record
    }
}
