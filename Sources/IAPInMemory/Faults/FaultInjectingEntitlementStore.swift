#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// Wraps an ``EntitlementStore`` and makes chosen calls fail, to test what a crash or an outage leaves
/// behind.
///
/// A fault either fails a call **before** it reaches the wrapped store (an outage: nothing changed), or
/// **after** the wrapped store applied it (a crash or a lost answer: the change is durable but the caller
/// never heard so). Both throw ``IAPError`` with code `storageFailure`, marked retryable.
///
/// ```swift
/// let store = FaultInjectingEntitlementStore(wrapping: InMemoryEntitlementStore())
/// store.inject(.afterApplying, on: .replace)   // the next replace is applied, then "crashes"
/// ```
public final class FaultInjectingEntitlementStore: EntitlementStore {
    /// The store calls a fault can hit.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        case insert, entry, replace, entries, history, dueDeliveries, parkedEntries, bind, user, storeRenewalInfo,
            renewalInfo
        case markNotificationProcessed, isNotificationProcessed, statistics, originalTransactionIds
        case signedTransaction
    }

    /// When a fault strikes.
    public enum Timing: Sendable, Hashable {
        /// The call fails without reaching the store.
        case beforeApplying
        /// The store applies the call, then the call fails.
        case afterApplying
    }

    private struct Fault {
        let operation: Operation
        let timing: Timing
        var remaining: Int
    }

    /// The wrapped store.
    public let base: any EntitlementStore
    private let faults = LockedValue<[Fault]>([])
    private let counts = LockedValue<[Operation: Int]>([:])

    /// Wraps a store.
    public init(wrapping base: some EntitlementStore) {
        self.base = base
    }

    /// Makes the next `count` calls of `operation` fail.
    ///
    /// - Parameters:
    ///   - timing: Before or after the wrapped store applies the call.
    ///   - operation: Which call.
    ///   - count: How many calls in a row.
    public func inject(_ timing: Timing, on operation: Operation, count: Int = 1) {
        faults.withLock { $0.append(Fault(operation: operation, timing: timing, remaining: count)) }
    }

    /// Removes every pending fault.
    public func clearFaults() {
        faults.withLock { $0.removeAll() }
    }

    /// How many times an operation was called (failed calls included).
    public func callCount(_ operation: Operation) -> Int {
        counts.withLock { $0[operation, default: 0] }
    }

    private func take(_ operation: Operation) -> Timing? {
        counts.withLock { $0[operation, default: 0] += 1 }
        return faults.withLock { faults in
            guard let index = faults.firstIndex(where: { $0.operation == operation && $0.remaining > 0 }) else {
                return nil
            }
            faults[index].remaining -= 1
            let timing = faults[index].timing
            if faults[index].remaining == 0 {
                faults.remove(at: index)
            }
            return timing
        }
    }

    private func run<T>(_ operation: Operation, _ body: () async throws -> T) async throws -> T {
        let timing = take(operation)
        if timing == .beforeApplying {
            throw IAPError(
                .storageFailure,
                "injected fault: \(operation.rawValue) failed before applying",
                isRetryable: true
            )
        }
        let result = try await body()
        if timing == .afterApplying {
            throw IAPError(
                .storageFailure,
                "injected fault: \(operation.rawValue) failed after applying",
                isRetryable: true
            )
        }
        return result
    }

    public func insert(_ entry: LedgerEntry, signedTransaction: String?) async throws -> InsertOutcome {
        try await run(.insert) { try await base.insert(entry, signedTransaction: signedTransaction) }
    }

    public func entry(transactionId: String) async throws -> LedgerEntry? {
        try await run(.entry) { try await base.entry(transactionId: transactionId) }
    }

    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64) async throws -> Bool {
        try await run(.replace) { try await base.replace(entry, ifRevision: revision) }
    }

    /// A replace with a signed transaction counts as ``Operation/replace``.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64, signedTransaction: String?) async throws
        -> Bool
    {
        try await run(.replace) {
            try await base.replace(entry, ifRevision: revision, signedTransaction: signedTransaction)
        }
    }

    public func signedTransaction(transactionId: String) async throws -> String? {
        try await run(.signedTransaction) { try await base.signedTransaction(transactionId: transactionId) }
    }

    public func entries(originalTransactionId: String) async throws -> [LedgerEntry] {
        try await run(.entries) { try await base.entries(originalTransactionId: originalTransactionId) }
    }

    public func entries(appTransactionId: String) async throws -> [LedgerEntry] {
        try await run(.entries) { try await base.entries(appTransactionId: appTransactionId) }
    }

    public func history(userId: String, cursor: String?, limit: Int) async throws -> LedgerPage {
        try await run(.history) { try await base.history(userId: userId, cursor: cursor, limit: limit) }
    }

    public func dueDeliveries(at instant: Date, limit: Int) async throws -> [LedgerEntry] {
        try await run(.dueDeliveries) { try await base.dueDeliveries(at: instant, limit: limit) }
    }

    public func parkedEntries(limit: Int) async throws -> [LedgerEntry] {
        try await run(.parkedEntries) { try await base.parkedEntries(limit: limit) }
    }

    public func bind(appAccountToken: String, to userId: String) async throws -> BindingOutcome {
        try await run(.bind) { try await base.bind(appAccountToken: appAccountToken, to: userId) }
    }

    public func user(forAppAccountToken appAccountToken: String) async throws -> String? {
        try await run(.user) { try await base.user(forAppAccountToken: appAccountToken) }
    }

    public func storeRenewalInfo(_ renewalInfo: RenewalInfoPayload) async throws -> Bool {
        try await run(.storeRenewalInfo) { try await base.storeRenewalInfo(renewalInfo) }
    }

    public func renewalInfo(originalTransactionId: String) async throws -> RenewalInfoPayload? {
        try await run(.renewalInfo) { try await base.renewalInfo(originalTransactionId: originalTransactionId) }
    }

    public func markNotificationProcessed(_ notificationUUID: String, at instant: Date) async throws -> Bool {
        try await run(.markNotificationProcessed) {
            try await base.markNotificationProcessed(notificationUUID, at: instant)
        }
    }

    public func isNotificationProcessed(_ notificationUUID: String) async throws -> Bool {
        try await run(.isNotificationProcessed) { try await base.isNotificationProcessed(notificationUUID) }
    }

    public func statistics() async throws -> LedgerStatistics {
        try await run(.statistics) { try await base.statistics() }
    }

    public func originalTransactionIds(cursor: String?, limit: Int) async throws -> OriginalTransactionIdPage {
        try await run(.originalTransactionIds) { try await base.originalTransactionIds(cursor: cursor, limit: limit) }
    }
}
