public import Foundation
import IAPCore
public import IAPServerAPI

/// A ``RenewalExtensionStore`` in memory, for tests.
public actor InMemoryRenewalExtensionStore: RenewalExtensionStore {
    private var byIdentifier: [String: RenewalExtensionRecord] = [:]
    private var order: [String] = []

    /// Creates an empty store.
    public init() {}

    /// The record of a request identifier, or `nil`.
    public func record(requestIdentifier: String) -> RenewalExtensionRecord? {
        byIdentifier[requestIdentifier]
    }

    /// Stores a new request unless its identifier exists or the subscription reached the limit.
    public func begin(_ record: RenewalExtensionRecord, limit: Int, since: Date) -> RenewalExtensionBeginOutcome {
        let outcome = RenewalExtensionBeginOutcome.decide(
            record,
            existing: byIdentifier[record.requestIdentifier],
            family: records(originalTransactionId: record.originalTransactionId),
            limit: limit,
            since: since
        )
        if case .started(let started) = outcome {
            byIdentifier[started.requestIdentifier] = started
            order.append(started.requestIdentifier)
        }
        return outcome
    }

    /// Replaces the record of the same request identifier.
    ///
    /// - Throws: ``IAPError`` `notFound` for an unknown request identifier.
    public func complete(_ record: RenewalExtensionRecord) throws {
        guard byIdentifier[record.requestIdentifier] != nil else {
            throw IAPError(.notFound, "no renewal extension request '\(record.requestIdentifier)'")
        }
        byIdentifier[record.requestIdentifier] = record
    }

    /// The records of a subscription, oldest first.
    public func records(originalTransactionId: String) -> [RenewalExtensionRecord] {
        order.compactMap { byIdentifier[$0] }.filter { $0.originalTransactionId == originalTransactionId }
    }
}
