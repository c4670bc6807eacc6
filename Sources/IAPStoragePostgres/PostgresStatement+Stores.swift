/// The statements of the stores that live beside the ledger (reconciliation checkpoints, renewal extensions) and of
/// the advisory locks. Dates are `bigint` milliseconds since 1970, as in the ledger.
extension PostgresStatement {
    // MARK: Advisory lock keys

    /// The SQL expression of an advisory lock's key: the first 64 bits of the MD5 digest of the text `$1`, read as
    /// a signed big-endian `bigint`. An operator computes the same key in `psql` to find a holder in `pg_locks`.
    static let advisoryKey = "('x' || left(md5($1), 16))::bit(64)::bigint"

    // MARK: Reconciliation checkpoints

    static let checkpoint = PostgresStatement(
        name: "iap_checkpoint",
        sql: """
            SELECT history_revision, refund_revision, reconciled_at FROM iap_reconciliation_checkpoints
            WHERE customer_key = $1
            """
    )

    /// $1 customer key, $2 history revision, $3 refund revision, $4 reconciled at. Replaces the stored checkpoint
    /// only when it is not newer: a checkpoint never goes back.
    static let saveCheckpoint = PostgresStatement(
        name: "iap_save_checkpoint",
        sql: """
            INSERT INTO iap_reconciliation_checkpoints AS stored
                (customer_key, history_revision, refund_revision, reconciled_at)
            VALUES ($1, $2, $3, $4::bigint)
            ON CONFLICT (customer_key) DO UPDATE
                SET history_revision = excluded.history_revision, refund_revision = excluded.refund_revision,
                    reconciled_at = excluded.reconciled_at
                WHERE excluded.reconciled_at >= stored.reconciled_at
            """
    )

    // MARK: Renewal extensions

    static let extensionColumns = """
        request_identifier, original_transaction_id, extend_by_days, reason_code, requested_at, state, \
        effective_date, web_order_line_item_id, error, completed_at
        """

    /// $1 the lock's text (`swift-iap renewal-extension <schema> <original transaction id>`): serializes the
    /// check-and-insert of one subscription's requests until the transaction ends.
    static let lockSubscription = PostgresStatement(
        name: "iap_lock_subscription",
        sql: "SELECT pg_advisory_xact_lock(\(advisoryKey))"
    )

    static let extensionByIdentifier = PostgresStatement(
        name: "iap_extension_by_identifier",
        sql: "SELECT \(extensionColumns) FROM iap_renewal_extensions WHERE request_identifier = $1"
    )

    static let extensionsByOriginal = PostgresStatement(
        name: "iap_extensions_by_original",
        sql: """
            SELECT \(extensionColumns) FROM iap_renewal_extensions WHERE original_transaction_id = $1
            ORDER BY position
            """
    )

    /// $1 to $10 in the order of ``extensionColumns``. Returns a row when inserted, none when the identifier is
    /// taken (`ON CONFLICT` waits for a concurrent insert of it to settle).
    static let insertExtension = PostgresStatement(
        name: "iap_insert_extension",
        sql: """
            INSERT INTO iap_renewal_extensions (\(extensionColumns))
            VALUES ($1, $2, $3::integer, $4::integer, $5::bigint, $6, $7::bigint, $8, $9, $10::bigint)
            ON CONFLICT (request_identifier) DO NOTHING RETURNING 1
            """
    )

    /// $1 to $10 in the order of ``extensionColumns``: replaces every field but the position. Returns a row when
    /// the identifier exists.
    static let completeExtension = PostgresStatement(
        name: "iap_complete_extension",
        sql: """
            UPDATE iap_renewal_extensions SET original_transaction_id = $2, extend_by_days = $3::integer,
                reason_code = $4::integer, requested_at = $5::bigint, state = $6, effective_date = $7::bigint,
                web_order_line_item_id = $8, error = $9, completed_at = $10::bigint
            WHERE request_identifier = $1 RETURNING 1
            """
    )

    // MARK: Exclusive-run locks

    /// $1 the lock's text. Returns whether the session-level lock was taken, and its key.
    static let tryAdvisoryLock = PostgresStatement(
        name: "iap_try_advisory_lock",
        sql: "SELECT pg_try_advisory_lock(key), key FROM (SELECT \(advisoryKey) AS key) AS lock"
    )

    /// $1 the key. Whether this session holds the session-level lock of that key (a `bigint` key is kept in
    /// `pg_locks` as its high 32 bits in `classid`, its low 32 bits in `objid`, with `objsubid` 1).
    static let holdsAdvisoryLock = PostgresStatement(
        name: "iap_holds_advisory_lock",
        sql: """
            SELECT count(*) FROM pg_locks
            WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid() AND objsubid = 1
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND ((classid::bigint << 32) | objid::bigint) = $1::bigint
            """
    )

    /// $1 the key.
    static let advisoryUnlock = PostgresStatement(
        name: "iap_advisory_unlock",
        sql: "SELECT pg_advisory_unlock($1::bigint)"
    )

    /// The settings of a lock's own connection: the server probes it with TCP keepalives (after 30 s of silence,
    /// every 10 s, 3 probes), so a holder whose machine vanished loses the lock within about a minute; and no
    /// `idle_session_timeout` ends the idle session that holds a lock (where the server has that setting).
    static let lockConnectionSettings = PostgresStatement(
        name: "iap_lock_connection_settings",
        sql: """
            SELECT set_config('tcp_keepalives_idle', '30', false), set_config('tcp_keepalives_interval', '10', false),
                set_config('tcp_keepalives_count', '3', false),
                (SELECT set_config(name, '0', false) FROM pg_settings WHERE name = 'idle_session_timeout')
            """
    )
}
