#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// What ``RenewalExtensionStore/begin(_:limit:since:)`` decided.
public enum RenewalExtensionBeginOutcome: Sendable, Hashable {
    /// The record is stored; send the request.
    case started(RenewalExtensionRecord)
    /// A record with this request identifier exists already (returned as stored).
    case existing(RenewalExtensionRecord)
    /// The subscription had `limit` extensions (requested or succeeded) since the window began; nothing stored.
    case limitReached([RenewalExtensionRecord])
}

/// Where the ``RenewalDateExtender`` keeps its requests, so that a retry with the same request identifier is
/// answered without a second call to Apple, and a third extension within a year is refused.
///
/// ## Implementation requirements
/// - **Durable before it answers.**
/// - **Atomic check and insert**: ``begin(_:limit:since:)`` decides and stores in one step, so two concurrent
///   requests for one subscription cannot both pass the limit, and of concurrent requests with one identifier
///   exactly one is `.started` — across every process that shares the store.
/// - Keys compare exactly; request identifiers are unique across subscriptions.
/// - Dates are kept at least to the millisecond; ``records(originalTransactionId:)`` lists in the order the
///   requests were begun.
///
/// `RenewalExtensionStoreConformance` (in `IAPConformance`) checks these requirements. `InMemoryRenewalExtensionStore`
/// (in `IAPInMemory`), `FileRenewalExtensionStore` (in `IAPStorageFile`) and `PostgresRenewalExtensionStore` (in
/// `IAPStoragePostgres`) implement it.
public protocol RenewalExtensionStore: Sendable {
    /// The record of a request identifier, or `nil`.
    ///
    /// - Throws: ``IAPError`` if the store fails.
    func record(requestIdentifier: String) async throws -> RenewalExtensionRecord?

    /// Stores a new request unless its identifier exists or the subscription reached the limit.
    ///
    /// - Parameters:
    ///   - record: The new request (state `requested`).
    ///   - limit: The most `requested` or `succeeded` extensions of the subscription since `since`.
    ///   - since: The start of the window.
    /// - Returns: What was decided.
    /// - Throws: ``IAPError`` if the store fails; nothing was stored.
    func begin(_ record: RenewalExtensionRecord, limit: Int, since: Date) async throws -> RenewalExtensionBeginOutcome

    /// Replaces the record of the same request identifier with Apple's answer.
    ///
    /// - Parameter record: The completed record.
    /// - Throws: ``IAPError`` `notFound` for an unknown request identifier, or if the store fails.
    func complete(_ record: RenewalExtensionRecord) async throws

    /// The records of a subscription, oldest first.
    ///
    /// - Throws: ``IAPError`` if the store fails.
    func records(originalTransactionId: String) async throws -> [RenewalExtensionRecord]
}

extension RenewalExtensionBeginOutcome {
    /// The contract's decision, for stores to share: an existing identifier wins, then the limit.
    ///
    /// - Parameters:
    ///   - record: The new request.
    ///   - existing: The stored record with the same request identifier, if any.
    ///   - family: The stored records of the subscription.
    ///   - limit: The most live extensions in the window.
    ///   - since: The start of the window.
    /// - Returns: The decision; `.started` means the store must now store `record`.
    package static func decide(
        _ record: RenewalExtensionRecord,
        existing: RenewalExtensionRecord?,
        family: [RenewalExtensionRecord],
        limit: Int,
        since: Date
    ) -> RenewalExtensionBeginOutcome {
        if let existing {
            return .existing(existing)
        }
        let live = family.filter { $0.state != .failed && $0.requestedAt > since }
        if live.count >= limit {
            return .limitReached(live)
        }
        return .started(record)
    }
}
