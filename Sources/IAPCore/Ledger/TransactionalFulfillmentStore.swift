/// A ledger that carries out a delivery's grant or take-back inside its own write, so that the ledger's record and
/// the fulfillment commit together or not at all.
///
/// A ``FulfillmentHook`` lives outside the ledger (a webhook, another database), so the pipeline claims an entry,
/// calls the hook, then marks the entry delivered: a crash between the hook's effect and the mark calls the hook
/// again, and the hook must deduplicate by ``Delivery/idempotencyKey``. When the wallet lives in the same
/// database as the ledger, a store that conforms to this protocol runs the grant in the transaction that writes
/// the entry: the grant and the mark are one commit, so a delivery happens exactly once without idempotency keys
/// on the wallet's side, and without a claim. ``DeliveryPipeline/init(verifier:catalog:store:clock:retryPolicy:unclaimedTokenPolicy:sandboxPolicy:tokenOwnership:proratedRefunds:unknownProducts:events:)``
/// takes such a store in place of a hook. `PostgresTransactionalFulfillmentStore` (IAPStoragePostgres) is the
/// one swift-iap ships.
///
/// ## Implementation requirements
/// - Everything ``EntitlementStore`` requires; the two calls below are ``EntitlementStore/insert(_:signedTransaction:)`` and
///   ``EntitlementStore/replace(_:ifRevision:)`` with the fulfillment of `delivery` added to the same atomic
///   commit.
/// - **Both or neither.** When a call returns a write (`.inserted`, `true`), the entry and the fulfillment's effect
///   are durable together. When it returns no write (`.existing`, `false`), the fulfillment did not run, or ran
///   and was rolled back. When it throws, neither is durable — except when the store lost its connection while
///   committing, and cannot know: then it throws `storageUnavailable`, and reading the entry tells (the entry
///   carries the write exactly when the effect happened).
/// - **The fulfillment failed.** When the integrator's grant or take-back throws (or leaves the transaction
///   unable to commit), nothing is written and the call throws ``IAPError`` with code
///   ``IAPError/Code/fulfillmentFailed``, the integrator's error as its underlying error. No other failure of the
///   store uses that code: the pipeline records the attempt and retries it later with backoff.
/// - The fulfillment runs only after the write took: the id was free (insert), or the revision matched
///   (replace). Two concurrent calls for one entry never both carry out their delivery.
public protocol TransactionalFulfillmentStore: EntitlementStore {
    /// Records a new transaction and carries out its delivery in one atomic commit, or returns the entry already
    /// recorded with its id and carries out nothing.
    ///
    /// - Parameters:
    ///   - entry: The entry to record, in the state it has once the delivery is done; its `sequence` and
    ///     `revision` are assigned by the store.
    ///   - signedTransaction: The compact JWS the entry's transaction was verified from, kept with it as
    ///     ``EntitlementStore/insert(_:signedTransaction:)`` keeps it.
    ///   - delivery: What to grant (or take back).
    /// - Returns: `.inserted` with the stored entry (revision 1), delivery carried out; or `.existing` with the
    ///   entry already there, nothing carried out.
    /// - Throws: ``IAPError`` with code `fulfillmentFailed` when the fulfillment failed, or as
    ///   ``EntitlementStore/insert(_:signedTransaction:)`` throws; nothing was recorded nor carried out.
    func insert(_ entry: LedgerEntry, signedTransaction: String?, fulfilling delivery: Delivery) async throws
        -> InsertOutcome

    /// Replaces an entry if nobody changed it since it was read, and carries out a delivery in the same atomic
    /// commit.
    ///
    /// - Parameters:
    ///   - entry: The new state of the entry, once the delivery is done (same rules as
    ///     ``EntitlementStore/replace(_:ifRevision:)``).
    ///   - revision: The revision the caller read.
    ///   - delivery: What to grant or take back.
    /// - Returns: `true` if stored and carried out (the stored revision is now `revision + 1`), `false` if the
    ///   stored revision differs or the entry does not exist: nothing carried out.
    /// - Throws: ``IAPError`` with code `fulfillmentFailed` when the fulfillment failed, or as
    ///   ``EntitlementStore/replace(_:ifRevision:)`` throws; nothing changed.
    func replace(_ entry: LedgerEntry, ifRevision revision: Int64, fulfilling delivery: Delivery) async throws
        -> Bool
}
