#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

/// A `TransactionalFulfillmentStore` in memory: an ``InMemoryEntitlementStore`` and a wallet of balances that its
/// transactional writes change in the same step, as a wallet kept in the ledger's database changes in the ledger's
/// transaction.
///
/// The wallet keeps no idempotency keys, on purpose: it adds each grant's units and subtracts each take-back's,
/// exactly as often as it is asked. A pipeline that granted anything twice shows it in the balance. Tests assert
/// balances and how many grants committed:
///
/// ```swift
/// let ledger = InMemoryTransactionalFulfillmentStore()
/// let pipeline = DeliveryPipeline(verifier: verifier, catalog: catalog, store: ledger)
/// ledger.failNext(1)  // the first grant fails: nothing is written, the pipeline retries
/// _ = await pipeline.submit(signedTransaction: jws, userId: "alice")
/// _ = await pipeline.drainDueRetries()
/// #expect(ledger.balance("alice") == 100)
/// ```
public final class InMemoryTransactionalFulfillmentStore: TransactionalFulfillmentStore, ForwardingEntitlementStore {
    private struct Wallet {
        var balances: [UserKey: Int64] = [:]
        var attempts: [Delivery] = []
        var committed: [Delivery] = []
        var failuresLeft = 0
    }

    /// The ledger.
    public let store: InMemoryEntitlementStore
    private let wallet = LockedValue(Wallet())

    /// Creates a ledger and an empty wallet.
    ///
    /// - Parameter store: The ledger (a new, empty one by default).
    public init(store: InMemoryEntitlementStore = InMemoryEntitlementStore()) {
        self.store = store
    }

    /// The units a user holds: each committed grant adds its ``Delivery/units``, each committed take-back subtracts
    /// them.
    ///
    /// - Parameter userId: The user.
    /// - Returns: The balance, 0 for a user never granted anything.
    public func balance(_ userId: String) -> Int64 {
        wallet.withLock { $0.balances[UserKey(userId), default: 0] }
    }

    /// Every grant and take-back asked of the wallet, in order, the failed and the rolled back included.
    public var attempts: [Delivery] { wallet.withLock { $0.attempts } }

    /// The grants and take-backs that committed with their ledger write, in order.
    public var committed: [Delivery] { wallet.withLock { $0.committed } }

    /// Makes the next `count` grants or take-backs fail: nothing is written, to the wallet or the ledger.
    ///
    /// - Parameter count: How many fail.
    public func failNext(_ count: Int) {
        wallet.withLock { $0.failuresLeft = count }
    }

    // MARK: Transactional writes

    /// Records a new transaction and carries out its delivery in the same step, or returns the entry already there.
    ///
    /// - Throws: ``IAPError`` with code `fulfillmentFailed` when the wallet fails (``failNext(_:)``): nothing was
    ///   written; or as ``InMemoryEntitlementStore/insert(_:signedTransaction:)``.
    public func insert(_ entry: LedgerEntry, signedTransaction: String?, fulfilling delivery: Delivery) async throws
        -> InsertOutcome
    {
        try await store.insert(
            entry,
            signedTransaction: signedTransaction,
            with: { [wallet] _ in try Self.apply(delivery, to: wallet) }
        )
    }

    /// Replaces an entry by compare-and-set and carries out a delivery in the same step.
    ///
    /// - Throws: ``IAPError`` with code `fulfillmentFailed` when the wallet fails: nothing was written; or as
    ///   ``InMemoryEntitlementStore/replace(_:ifRevision:)``.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64, fulfilling delivery: Delivery) async throws
        -> Bool
    {
        try await store.replace(
            entry,
            ifRevision: revision,
            with: { [wallet] _ in try Self.apply(delivery, to: wallet) }
        )
    }

    private static func apply(_ delivery: Delivery, to wallet: LockedValue<Wallet>) throws {
        try wallet.withLock { wallet in
            wallet.attempts.append(delivery)
            if wallet.failuresLeft > 0 {
                wallet.failuresLeft -= 1
                throw IAPError(.fulfillmentFailed, "the wallet is down; nothing was written")
            }
            let sign: Int64 = delivery.action == .grant ? 1 : -1
            wallet.balances[UserKey(delivery.userId), default: 0] += sign * delivery.units
            wallet.committed.append(delivery)
        }
    }
}
