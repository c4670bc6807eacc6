public import IAPCore

/// Grant and take-back code that runs inside the ledger's own PostgreSQL transaction: for a wallet kept in the same
/// database as the ledger.
///
/// Hand it to a ``PostgresTransactionalFulfillmentStore`` and give that store to the `DeliveryPipeline`. The
/// pipeline then records a new purchase, runs ``grant(_:on:)`` and marks the purchase delivered in one
/// transaction: the wallet's change and the ledger's record commit together or not at all, so each purchase is
/// granted exactly once without an idempotency key on the wallet's side, and a delivery costs one commit.
///
/// ## Implementation requirements
/// - Do only database work, through the connection you are handed: every statement you run on it belongs to the
///   ledger's transaction. Do not call other services or wait for anything else: the transaction holds the
///   ledger entry's row lock while your code runs, and it runs on the store's connection thread, which blocks.
///   For a wallet elsewhere (another database, an HTTP service), use an idempotent `FulfillmentHook` instead.
/// - No idempotency key is needed: the pipeline calls ``grant(_:on:)`` for a purchase only in the transaction
///   that marks it delivered, so a grant that commits is never repeated and one that does not commit left no
///   trace. (``/IAPCore/Delivery/idempotencyKey`` is still there, if you want to record it.)
/// - Throw to say "not done": the transaction rolls back — your statements and the ledger's write alike — and
///   the pipeline records the attempt and retries it later with backoff, as it does with a hook.
/// - ``revoke(_:on:)`` takes back a refunded or revoked purchase, in the transaction that records the take-back.
///   It is called only for a grant that committed: a purchase refunded before it was granted is never granted
///   nor taken back.
public protocol PostgresTransactionalFulfillmentHook: Sendable {
    /// Grants a purchase, in the ledger's transaction.
    ///
    /// - Parameters:
    ///   - delivery: What to grant.
    ///   - connection: The transaction's connection, valid during this call.
    /// - Throws: Any error: the whole transaction rolls back, and the pipeline retries later.
    func grant(_ delivery: Delivery, on connection: PostgresTransactionConnection) throws

    /// Takes back a refunded or revoked purchase, in the ledger's transaction.
    ///
    /// - Parameters:
    ///   - delivery: What to take back (``/IAPCore/Delivery/units`` is what the grant gave).
    ///   - connection: The transaction's connection, valid during this call.
    /// - Throws: Any error: the whole transaction rolls back, and the pipeline retries later.
    func revoke(_ delivery: Delivery, on connection: PostgresTransactionConnection) throws
}
