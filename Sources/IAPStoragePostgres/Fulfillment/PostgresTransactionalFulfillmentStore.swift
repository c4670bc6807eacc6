#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

/// A ``PostgresEntitlementStore`` whose writes carry out the deliveries themselves: a
/// ``PostgresTransactionalFulfillmentHook`` grants and takes back in the transaction that writes the ledger entry.
///
/// Give it to `DeliveryPipeline(verifier:catalog:store:)` in place of a store and a hook. A new purchase is then
/// one transaction, one commit: `BEGIN` and the insert of the entry, already marked delivered, in one round trip;
/// the hook's statements; `COMMIT`. A due entry (a retry, a take-back) is the same with the compare-and-set
/// update in place of the insert. The entry's row is locked from the insert or update to the commit, so of several
/// deliverers, in any number of processes, exactly one runs the hook; the others find the id taken or the
/// revision changed, and run nothing.
///
/// ```swift
/// let ledger = try await PostgresEntitlementStore(configuration: .init(url: url, schema: "iap"))
/// let pipeline = DeliveryPipeline(
///     verifier: verifier,
///     catalog: catalog,
///     store: PostgresTransactionalFulfillmentStore(store: ledger, hook: WalletGrants())
/// )
/// ```
///
/// Every ``EntitlementStore`` call is the wrapped store's; `close()` closes it.
public final class PostgresTransactionalFulfillmentStore: TransactionalFulfillmentStore, ForwardingEntitlementStore {
    /// The ledger.
    public let store: PostgresEntitlementStore
    /// How concurrent deliveries share commits, or `nil` when each delivery commits on its own.
    public let groupCommit: PostgresGroupCommit?
    private let hook: any PostgresTransactionalFulfillmentHook
    private let committer: PostgresGroupCommitter?

    /// Wraps a store with the hook that grants and takes back in its transactions; each delivery commits on its own.
    ///
    /// - Parameters:
    ///   - store: The ledger, in the database that also holds what the hook writes.
    ///   - hook: The grant and take-back code.
    public init(store: PostgresEntitlementStore, hook: some PostgresTransactionalFulfillmentHook) {
        self.store = store
        self.hook = hook
        groupCommit = nil
        committer = nil
    }

    /// Wraps a store with the hook, and writes concurrent deliveries in shared transactions (group commit): one
    /// commit, one WAL flush, for the deliveries that wait for the database at the same moment.
    ///
    /// ```swift
    /// let ledger = try await PostgresEntitlementStore(configuration: .init(url: url, schema: "iap", poolSize: 8))
    /// let store = try PostgresTransactionalFulfillmentStore(store: ledger, hook: WalletGrants(), groupCommit: .init())
    /// ```
    ///
    /// Each delivery runs in its own `SAVEPOINT`: one that fails is undone alone and gets its own answer. Every
    /// caller returns after the commit that holds its write; if that commit fails, every delivery of the group
    /// fails and none is kept. See ``PostgresGroupCommit`` for what it costs.
    ///
    /// - Parameters:
    ///   - store: The ledger, in the database that also holds what the hook writes.
    ///   - hook: The grant and take-back code.
    ///   - groupCommit: How many deliveries a group holds, and how many groups may be open at once.
    /// - Throws: ``IAPError`` with code `invalidConfiguration` when a limit is out of range (more groups than the
    ///   store's pool has connections, or a group size outside 2 to 64).
    public init(
        store: PostgresEntitlementStore,
        hook: some PostgresTransactionalFulfillmentHook,
        groupCommit: PostgresGroupCommit
    ) throws {
        try groupCommit.validate(poolSize: store.configuration.poolSize)
        self.store = store
        self.hook = hook
        self.groupCommit = groupCommit
        committer = PostgresGroupCommitter(
            pool: store.pool,
            configuration: groupCommit,
            poolSize: store.configuration.poolSize
        )
    }

    /// Closes the wrapped store's connections.
    public func close() async {
        await store.close()
    }

    /// The deliveries waiting for the next group (0 without group commit).
    package var queuedDeliveries: Int {
        committer?.queued ?? 0
    }

    // MARK: Transactional writes

    /// Records a new transaction and carries out its delivery in the same transaction, or returns the entry
    /// already recorded with its id and carries out nothing.
    ///
    /// - Parameters:
    ///   - entry: The entry, in the state it has once the delivery is done.
    ///   - signedTransaction: The compact JWS the entry's transaction was verified from, kept with it.
    ///   - delivery: What the hook grants (or takes back).
    /// - Returns: `.inserted` once the entry and the hook's statements committed together; `.existing` with the
    ///   stored entry, the hook not called.
    /// - Throws: ``IAPError`` with code `fulfillmentFailed` when the hook threw, left a failed statement behind, or
    ///   the commit was refused (all rolled back; with group commit, a refused commit fails its whole group);
    ///   `storageUnavailable` when the connection was lost (during the commit, whether it landed is unknown: the
    ///   entry tells); otherwise as ``PostgresEntitlementStore/insert(_:)``.
    public func insert(_ entry: LedgerEntry, signedTransaction: String?, fulfilling delivery: Delivery) async throws
        -> InsertOutcome
    {
        try PostgresEntitlementStore.validateNew(entry)
        try LedgerState.checkSignedTransaction(signedTransaction, of: entry.transactionId)
        let hook = self.hook
        return try await deliver(order: entry) { transaction in
            let outcome = try PostgresEntitlementStore.insert(
                entry,
                signedTransaction: signedTransaction,
                opening: transaction
            )
            if case .inserted = outcome {
                try Self.fulfill(delivery, with: hook, on: transaction.connection)
            }
            return outcome
        }
    }

    /// Replaces an entry if its stored revision is still `revision`, and carries out a delivery in the same
    /// transaction.
    ///
    /// - Parameters:
    ///   - entry: The new state, once the delivery is done.
    ///   - revision: The revision the caller read.
    ///   - delivery: What the hook grants or takes back.
    /// - Returns: `true` once the entry and the hook's statements committed together; `false` when the revision
    ///   differs or there is no such entry, the hook not called.
    /// - Throws: ``IAPError`` as ``insert(_:signedTransaction:fulfilling:)``, or `invalidArgument` as
    ///   ``PostgresEntitlementStore/replace(_:ifRevision:)``.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64, fulfilling delivery: Delivery) async throws
        -> Bool
    {
        guard PostgresEntitlementStore.storable(entry.transactionId) else {
            return false
        }
        let hook = self.hook
        return try await deliver(order: entry) { transaction in
            guard try PostgresEntitlementStore.replace(entry, ifRevision: revision, signed: nil, opening: transaction)
            else {
                return false
            }
            try Self.fulfill(delivery, with: hook, on: transaction.connection)
            return true
        }
    }

    /// Runs a delivery in a transaction of its own, or in the next group, and returns once it committed.
    private func deliver<Value: Sendable>(
        order entry: LedgerEntry,
        _ body: @escaping @Sendable (PostgresDeliveryTransaction) throws -> Value
    ) async throws -> Value {
        if let committer {
            return try await committer.submit(order: PostgresEntitlementStore.order(of: entry), body)
        }
        return try await store.pool.run { connection in
            try PostgresGroupCommitter.commitAlone(on: connection, body)
        }
    }

    /// Runs the hook in the open transaction; throws (the caller undoes the delivery) when it failed.
    private static func fulfill(
        _ delivery: Delivery,
        with hook: any PostgresTransactionalFulfillmentHook,
        on connection: PostgresConnection
    ) throws {
        let transaction = PostgresTransactionConnection(connection)
        defer { transaction.close() }
        do {
            switch delivery.action {
            case .grant: try hook.grant(delivery, on: transaction)
            case .revoke: try hook.revoke(delivery, on: transaction)
            }
        } catch {
            throw IAPError(
                .fulfillmentFailed,
                "the transactional fulfillment hook failed to \(delivery.action.rawValue) "
                    + "\(delivery.idempotencyKey): \(error)",
                underlying: (error as? IAPError) ?? SendableErrorBox(error),
                isRetryable: true
            )
        }
        guard connection.isInTransaction else {
            throw IAPError(
                .fulfillmentFailed,
                "a statement of the transactional fulfillment hook failed, and the hook returned as if it had not "
                    + "(\(delivery.idempotencyKey)); the transaction was rolled back",
                isRetryable: true
            )
        }
    }
}
