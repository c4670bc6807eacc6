/// Every statement the store runs on its tables. Dates are `bigint` milliseconds since 1970, as in the
/// entry's JSON; `sequence` and `revision` live in their columns, which are authoritative, and are copied
/// into the JSON on every write so that the JSON alone is a faithful export.
extension PostgresStatement {
    static let entryColumns = "sequence, revision, entry"

    /// $1 transaction id, $2 original transaction id, $3 user, $4 appAccountToken (lowercased), $5 delivery
    /// state, $6 next attempt, $7 revoked at, $8 recorded at, $9 the entry's JSON (with its revision, 1), $10 the
    /// signed transaction (or `NULL`). Returns the sequence, or no row when the id is taken (`ON CONFLICT` waits for
    /// a concurrent insert of the same id to settle). The sequence is written into the JSON here, where it is drawn.
    static let insertEntry = PostgresStatement(
        name: "iap_insert_entry",
        sql: """
            WITH next AS (SELECT nextval('iap_ledger_sequence') AS sequence)
            INSERT INTO iap_ledger_entries (
                sequence, transaction_id, original_transaction_id, user_id, app_account_token, delivery_state,
                next_attempt_at, revoked_at, recorded_at, revision, entry, signed_transaction)
            SELECT next.sequence, $1, $2, $3, $4, $5, $6::bigint, $7::bigint, $8::bigint, 1,
                jsonb_set($9::jsonb, '{sequence}', to_jsonb(next.sequence)), $10
            FROM next
            ON CONFLICT (transaction_id) DO NOTHING
            RETURNING sequence
            """
    )

    /// The compare-and-set: $1 transaction id, $2 expected revision, $3 sequence, $4 recorded at (both must be
    /// the stored ones), $5 user, $6 original transaction id, $7 appAccountToken, $8 delivery state, $9 next
    /// attempt, $10 revoked at, $11 the entry's JSON, which carries the sequence (the `WHERE` checks it is the
    /// stored one) and the new revision ($2 + 1). Returns the new revision, or no row.
    static let replaceEntry = PostgresStatement(
        name: "iap_replace_entry",
        sql: """
            UPDATE iap_ledger_entries SET
                user_id = $5, original_transaction_id = $6, app_account_token = $7, delivery_state = $8,
                next_attempt_at = $9::bigint, revoked_at = $10::bigint, revision = revision + 1, entry = $11::jsonb
            WHERE transaction_id = $1 AND revision = $2::bigint AND sequence = $3::bigint
                AND recorded_at = $4::bigint
            RETURNING revision
            """
    )

    /// As ``replaceEntry``, and $12 the signed transaction that replaces the stored one (or `NULL`: none).
    static let replaceEntrySigned = PostgresStatement(
        name: "iap_replace_entry_signed",
        sql: """
            UPDATE iap_ledger_entries SET
                user_id = $5, original_transaction_id = $6, app_account_token = $7, delivery_state = $8,
                next_attempt_at = $9::bigint, revoked_at = $10::bigint, revision = revision + 1,
                entry = jsonb_set(jsonb_set($11::jsonb, '{sequence}', to_jsonb(sequence)),
                    '{revision}', to_jsonb(revision + 1)),
                signed_transaction = $12
            WHERE transaction_id = $1 AND revision = $2::bigint AND sequence = $3::bigint
                AND recorded_at = $4::bigint
            RETURNING revision
            """
    )

    static let signedTransactionsFrom = PostgresStatement(
        name: "iap_signed_transactions_from",
        sql: "SELECT value FROM iap_ledger_properties WHERE name = 'signed_transactions_from_sequence'"
    )

    static let signedTransactionById = PostgresStatement(
        name: "iap_signed_transaction_by_id",
        sql: "SELECT signed_transaction FROM iap_ledger_entries WHERE transaction_id = $1"
    )

    static let entryById = PostgresStatement(
        name: "iap_entry_by_id",
        sql: "SELECT \(entryColumns) FROM iap_ledger_entries WHERE transaction_id = $1"
    )

    static let keysById = PostgresStatement(
        name: "iap_keys_by_id",
        sql: "SELECT sequence, recorded_at FROM iap_ledger_entries WHERE transaction_id = $1"
    )

    static let entriesByOriginal = PostgresStatement(
        name: "iap_entries_by_original",
        sql: """
            SELECT \(entryColumns) FROM iap_ledger_entries WHERE original_transaction_id = $1 ORDER BY sequence
            """
    )

    static let entriesByAppTransaction = PostgresStatement(
        name: "iap_entries_by_app_transaction",
        sql: """
            SELECT \(entryColumns) FROM iap_ledger_entries
            WHERE (entry->'transaction'->>'appTransactionId') = $1 ORDER BY sequence
            """
    )

    /// $1 user, $2 the page size plus one: the first page of a user's history. Served by `iap_ledger_entries_user`
    /// (user_id, sequence), read backwards.
    static let history = PostgresStatement(
        name: "iap_history",
        sql: """
            SELECT \(entryColumns) FROM iap_ledger_entries
            WHERE user_id = $1 ORDER BY sequence DESC LIMIT $2::bigint
            """
    )

    /// $1 user, $2 the cursor's sequence, $3 the page size plus one: a later page. A statement of its own, not an
    /// `$2 IS NULL OR` in one: the server's generic plan of a prepared statement cannot bound the index scan by an
    /// optional parameter, and filtered every newer entry of the user instead (a deep page of a user with 5,000
    /// entries read 2,500 rows to return 21: 20 ms; bounded: 0.04 ms).
    static let historyBefore = PostgresStatement(
        name: "iap_history_before",
        sql: """
            SELECT \(entryColumns) FROM iap_ledger_entries
            WHERE user_id = $1 AND sequence < $2::bigint
            ORDER BY sequence DESC LIMIT $3::bigint
            """
    )

    /// $1 now, $2 limit. Served by the partial index `iap_ledger_entries_due`.
    static let due = PostgresStatement(
        name: "iap_due",
        sql: """
            SELECT \(entryColumns) FROM iap_ledger_entries
            WHERE delivery_state IN ('pending', 'retrying')
                AND (next_attempt_at IS NULL OR next_attempt_at <= $1::bigint)
            ORDER BY next_attempt_at NULLS FIRST, sequence LIMIT $2::bigint
            """
    )

    /// $1 limit. Parked entries are few and looked for only when the catalog changes: no index of their own.
    static let parked = PostgresStatement(
        name: "iap_parked",
        sql: """
            SELECT \(entryColumns) FROM iap_ledger_entries
            WHERE delivery_state = 'unknownProduct'
            ORDER BY sequence LIMIT $1::bigint
            """
    )

    /// $1 after this sequence, $2 limit: every entry in sequence order, a page at a time.
    static let entriesAfter = PostgresStatement(
        name: "iap_entries_after",
        sql: """
            SELECT \(entryColumns) FROM iap_ledger_entries WHERE sequence > $1::bigint ORDER BY sequence
            LIMIT $2::bigint
            """
    )

    /// $1 now (milliseconds): the claimed rows (pending, with the claim's expiry in `next_attempt_at`) whose claim
    /// holds, those whose claim has expired, the earliest expiry among these and the latest among the holding ones;
    /// through the partial index of undelivered rows.
    static let claims = PostgresStatement(
        name: "iap_claims",
        sql: """
            SELECT count(*) FILTER (WHERE next_attempt_at > $1::bigint),
                count(*) FILTER (WHERE next_attempt_at <= $1::bigint),
                min(next_attempt_at) FILTER (WHERE next_attempt_at <= $1::bigint),
                max(next_attempt_at) FILTER (WHERE next_attempt_at > $1::bigint)
            FROM iap_ledger_entries
            WHERE delivery_state IN ('pending', 'retrying') AND delivery_state = 'pending'
                AND next_attempt_at IS NOT NULL
            """
    )

    /// The rows whose lookup columns disagree with their entry's JSON, with the first column that does, the first
    /// 100 by sequence (`LedgerInvariants`, through `indexProblems()`).
    static let lookupMismatches = PostgresStatement(
        name: "iap_lookup_mismatches",
        sql: """
            SELECT transaction_id, CASE
                WHEN entry->>'transactionId' IS DISTINCT FROM transaction_id THEN 'transaction_id'
                WHEN entry->>'originalTransactionId' IS DISTINCT FROM original_transaction_id
                    THEN 'original_transaction_id'
                WHEN entry->>'userId' IS DISTINCT FROM user_id THEN 'user_id'
                ELSE 'delivery_state' END
            FROM iap_ledger_entries
            WHERE entry->>'transactionId' IS DISTINCT FROM transaction_id
                OR entry->>'originalTransactionId' IS DISTINCT FROM original_transaction_id
                OR entry->>'userId' IS DISTINCT FROM user_id
                OR entry->>'deliveryState' IS DISTINCT FROM delivery_state
            ORDER BY sequence LIMIT 100
            """
    )

    /// $1 after this sequence, $2 limit: the first entry of each purchase family (no entry of the same original
    /// transaction id has a lower sequence), by sequence. The `NOT EXISTS` probe uses `iap_ledger_entries_original`.
    static let familiesAfter = PostgresStatement(
        name: "iap_families_after",
        sql: """
            SELECT e.sequence, e.original_transaction_id FROM iap_ledger_entries e
            WHERE e.sequence > $1::bigint AND NOT EXISTS (
                SELECT 1 FROM iap_ledger_entries f
                WHERE f.original_transaction_id = e.original_transaction_id AND f.sequence < e.sequence)
            ORDER BY e.sequence LIMIT $2::bigint
            """
    )

    static let bind = PostgresStatement(
        name: "iap_bind",
        sql: """
            INSERT INTO iap_account_tokens (app_account_token, user_id) VALUES ($1, $2)
            ON CONFLICT (app_account_token) DO NOTHING RETURNING user_id
            """
    )

    static let userForToken = PostgresStatement(
        name: "iap_user_for_token",
        sql: "SELECT user_id FROM iap_account_tokens WHERE app_account_token = $1"
    )

    /// $1 original transaction id, $2 signed date (or `NULL`: older than any), $3 the renewal info's JSON.
    /// Returns a row when stored.
    static let storeRenewal = PostgresStatement(
        name: "iap_store_renewal",
        sql: """
            INSERT INTO iap_renewal_infos AS stored (original_transaction_id, signed_date, renewal_info)
            VALUES ($1, $2::bigint, $3::jsonb)
            ON CONFLICT (original_transaction_id) DO UPDATE
                SET signed_date = excluded.signed_date, renewal_info = excluded.renewal_info
                WHERE coalesce(excluded.signed_date, -9223372036854775808)
                    > coalesce(stored.signed_date, -9223372036854775808)
            RETURNING 1
            """
    )

    static let renewal = PostgresStatement(
        name: "iap_renewal",
        sql: "SELECT renewal_info FROM iap_renewal_infos WHERE original_transaction_id = $1"
    )

    static let markNotification = PostgresStatement(
        name: "iap_mark_notification",
        sql: """
            INSERT INTO iap_notifications (notification_uuid, processed_at) VALUES ($1, $2::bigint)
            ON CONFLICT (notification_uuid) DO NOTHING RETURNING 1
            """
    )

    static let notification = PostgresStatement(
        name: "iap_notification",
        sql: "SELECT 1 FROM iap_notifications WHERE notification_uuid = $1"
    )

    static let statistics = PostgresStatement(
        name: "iap_statistics",
        sql: """
            SELECT count(*),
                count(*) FILTER (WHERE delivery_state = 'delivered'),
                count(*) FILTER (WHERE delivery_state = 'retrying'),
                count(*) FILTER (WHERE delivery_state = 'deadLettered' AND entry->>'givenUpAt' IS NULL),
                count(*) FILTER (WHERE revoked_at IS NOT NULL),
                count(DISTINCT user_id) FILTER (
                    WHERE delivery_state <> 'awaitingOwner' AND user_id NOT LIKE 'unowned:%'
                ),
                (SELECT json_object_agg(environment, transactions) FROM (
                    SELECT entry->'transaction'->>'environment' AS environment, count(*) AS transactions
                    FROM iap_ledger_entries
                    WHERE entry->'transaction'->>'environment' IS NOT NULL
                    GROUP BY 1
                ) AS per_environment),
                count(*) FILTER (WHERE delivery_state = 'unknownProduct'),
                count(*) FILTER (WHERE delivery_state = 'deadLettered' AND entry->>'givenUpAt' IS NOT NULL)
            FROM iap_ledger_entries
            """
    )

    static let catalog = PostgresStatement(
        name: "iap_catalog",
        sql: "SELECT catalog FROM iap_catalog WHERE id = 1"
    )

    static let saveCatalog = PostgresStatement(
        name: "iap_save_catalog",
        sql: """
            INSERT INTO iap_catalog (id, catalog) VALUES (1, $1)
            ON CONFLICT (id) DO UPDATE SET catalog = excluded.catalog, saved_at = now()
            """
    )

    /// $1 statement_timeout, $2 search_path: the settings of every new connection.
    static let connectionSettings = PostgresStatement(
        name: "iap_connection_settings",
        sql: "SELECT set_config('statement_timeout', $1, false), set_config('search_path', $2, false)"
    )
}
