import IAPCore

/// The store's tables, and the migrations that create and evolve them.
///
/// Each migration is a list of statements with a version; `iap_schema_migrations` records every version
/// applied. Opening a store takes a transaction-scoped advisory lock on its schema, applies the missing
/// versions in that transaction, and refuses a schema whose newest version is one this code does not know
/// (a newer swift-iap migrated it), so several instances starting at once migrate exactly once. The
/// whole layout is described in `Documentation/Postgres.md`.
enum PostgresSchema {
    struct Migration: Sendable {
        let version: Int
        let description: String
        let statements: [String]
    }

    /// The newest version this code reads and writes.
    static var latestVersion: Int { migrations.last?.version ?? 0 }

    static let migrations: [Migration] = [
        Migration(
            version: 1,
            description: "ledger entries, appAccountToken bindings, renewal infos, notifications, catalog",
            statements: [
                """
                CREATE SEQUENCE iap_ledger_sequence AS bigint
                """,
                """
                CREATE TABLE iap_ledger_entries (
                    sequence bigint PRIMARY KEY,
                    transaction_id text COLLATE "C" NOT NULL UNIQUE,
                    original_transaction_id text COLLATE "C" NOT NULL,
                    user_id text COLLATE "C" NOT NULL,
                    app_account_token text COLLATE "C",
                    delivery_state text COLLATE "C" NOT NULL,
                    next_attempt_at bigint,
                    revoked_at bigint,
                    recorded_at bigint NOT NULL,
                    revision bigint NOT NULL,
                    entry jsonb NOT NULL
                )
                """,
                """
                CREATE INDEX iap_ledger_entries_user ON iap_ledger_entries (user_id, sequence)
                """,
                """
                CREATE INDEX iap_ledger_entries_original ON iap_ledger_entries (original_transaction_id, sequence)
                """,
                """
                CREATE INDEX iap_ledger_entries_token ON iap_ledger_entries (app_account_token)
                    WHERE app_account_token IS NOT NULL
                """,
                """
                CREATE INDEX iap_ledger_entries_due ON iap_ledger_entries (next_attempt_at NULLS FIRST, sequence)
                    WHERE delivery_state IN ('pending', 'retrying')
                """,
                """
                CREATE INDEX iap_ledger_entries_revoked ON iap_ledger_entries (revoked_at)
                    WHERE revoked_at IS NOT NULL
                """,
                """
                CREATE TABLE iap_account_tokens (
                    app_account_token text COLLATE "C" PRIMARY KEY,
                    user_id text COLLATE "C" NOT NULL,
                    bound_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                """
                CREATE TABLE iap_renewal_infos (
                    original_transaction_id text COLLATE "C" PRIMARY KEY,
                    signed_date bigint,
                    renewal_info jsonb NOT NULL
                )
                """,
                """
                CREATE TABLE iap_notifications (
                    notification_uuid text COLLATE "C" PRIMARY KEY,
                    processed_at bigint NOT NULL
                )
                """,
                """
                CREATE TABLE iap_catalog (
                    id integer PRIMARY KEY CHECK (id = 1),
                    catalog text NOT NULL,
                    saved_at timestamptz NOT NULL DEFAULT now()
                )
                """,
            ]
        ),
        // Self-contained: it reads and changes no table of another migration, so it can take any number.
        Migration(
            version: 2,
            description: "the ledger's identity and the chained support audit with its head",
            statements: [
                """
                CREATE TABLE iap_ledger_identity (
                    id integer PRIMARY KEY CHECK (id = 1),
                    ledger_id text COLLATE "C" NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                """
                INSERT INTO iap_ledger_identity (id, ledger_id) VALUES (1, replace(gen_random_uuid()::text, '-', ''))
                """,
                """
                CREATE TABLE iap_support_audit (
                    sequence bigint PRIMARY KEY CHECK (sequence > 0),
                    entry text NOT NULL,
                    appended_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                """
                CREATE TABLE iap_support_audit_head (
                    id integer PRIMARY KEY CHECK (id = 1),
                    entries bigint NOT NULL,
                    last_hash text COLLATE "C" NOT NULL
                )
                """,
            ]
        ),
        Migration(
            version: 3,
            description: "the signed transaction (JWS) of each ledger entry, for re-verification",
            statements: [
                """
                ALTER TABLE iap_ledger_entries ADD COLUMN signed_transaction text COLLATE "C"
                """,
                """
                CREATE TABLE iap_ledger_properties (
                    name text COLLATE "C" PRIMARY KEY,
                    value text NOT NULL
                )
                """,
                // Entries recorded before this version have no signed transaction, and are not expected to.
                """
                INSERT INTO iap_ledger_properties (name, value)
                SELECT 'signed_transactions_from_sequence', (coalesce(max(sequence), 0) + 1)::text
                FROM iap_ledger_entries
                """,
            ]
        ),
        Migration(
            version: 4,
            description: "reconciliation checkpoints, renewal-extension requests",
            statements: [
                """
                CREATE TABLE iap_reconciliation_checkpoints (
                    customer_key text COLLATE "C" PRIMARY KEY,
                    history_revision text,
                    refund_revision text,
                    reconciled_at bigint NOT NULL
                )
                """,
                """
                CREATE TABLE iap_renewal_extensions (
                    request_identifier text COLLATE "C" PRIMARY KEY,
                    position bigint GENERATED ALWAYS AS IDENTITY,
                    original_transaction_id text COLLATE "C" NOT NULL,
                    extend_by_days integer NOT NULL,
                    reason_code integer NOT NULL,
                    requested_at bigint NOT NULL,
                    state text COLLATE "C" NOT NULL CHECK (state IN ('requested', 'succeeded', 'failed')),
                    effective_date bigint,
                    web_order_line_item_id text,
                    error text,
                    completed_at bigint
                )
                """,
                """
                CREATE INDEX iap_renewal_extensions_original
                    ON iap_renewal_extensions (original_transaction_id, position)
                """,
            ]
        ),
        // Self-contained: drops two indexes of version 1 that no statement reads through. Every index is written on
        // each insert and on each update that moves a row (most ledger updates do), so an index nobody reads costs
        // every delivery. Instances still at version 1 run no query that needed them either.
        Migration(
            version: 5,
            description: "drop the indexes no query uses: iap_ledger_entries_token, iap_ledger_entries_revoked",
            statements: [
                """
                DROP INDEX IF EXISTS iap_ledger_entries_token
                """,
                """
                DROP INDEX IF EXISTS iap_ledger_entries_revoked
                """,
            ]
        ),
        // Reads and changes only tables of version 2, and may run again (a schema whose record of it was lost). The
        // ledger's copy of the support audit's head, in the row of its identity (which the ledger needs to open), so
        // that deleting the audit's rows with its head row does not take it along; a schema with an audit already
        // starts from that audit's head.
        Migration(
            version: 6,
            description: "the support audit's head kept by the ledger, in iap_ledger_identity",
            statements: [
                """
                ALTER TABLE iap_ledger_identity
                    ADD COLUMN IF NOT EXISTS audit_entries bigint,
                    ADD COLUMN IF NOT EXISTS audit_last_hash text COLLATE "C"
                """,
                """
                UPDATE iap_ledger_identity
                SET audit_entries = head.entries, audit_last_hash = head.last_hash
                FROM iap_support_audit_head head
                WHERE iap_ledger_identity.id = 1 AND head.id = 1 AND iap_ledger_identity.audit_entries IS NULL
                """,
            ]
        ),
        // An index of an expression over the entry: no column to fill, and a schema may run it again.
        Migration(
            version: 7,
            description: "iap_ledger_entries_app_transaction: the entries of an app transaction id (an Apple Account)",
            statements: [
                """
                CREATE INDEX IF NOT EXISTS iap_ledger_entries_app_transaction
                    ON iap_ledger_entries ((entry->'transaction'->>'appTransactionId'), sequence)
                    WHERE (entry->'transaction'->>'appTransactionId') IS NOT NULL
                """
            ]
        ),
    ]

    private static let lock = PostgresStatement(
        name: "iap_migration_lock",
        sql: "SELECT pg_advisory_xact_lock(hashtext($1))"
    )
    private static let applied = PostgresStatement(
        name: "iap_migration_applied",
        sql: "SELECT version FROM iap_schema_migrations ORDER BY version"
    )
    private static let record = PostgresStatement(
        name: "iap_migration_record",
        sql: "INSERT INTO iap_schema_migrations (version, description) VALUES ($1, $2)"
    )

    /// Creates or migrates the schema, or refuses one that is newer than this code.
    ///
    /// - Parameters:
    ///   - connection: A connection whose `search_path` is the schema.
    ///   - schema: The schema's name, already validated as a plain identifier.
    ///   - create: Whether to create a ledger that does not exist yet.
    /// - Returns: The version the schema had before (0 for a new one).
    /// - Throws: ``IAPError`` with code `storageSchemaTooNew`, `notFound` for a missing ledger that is not to be
    ///   created (the transaction is rolled back: nothing is created), or as the connection throws.
    @discardableResult
    static func migrate(_ connection: PostgresConnection, schema: String, create: Bool = true) throws -> Int {
        try connection.transaction {
            try connection.execute(lock, ["swift-iap schema " + schema])
            try connection.execute(ddl: "CREATE SCHEMA IF NOT EXISTS \"\(schema)\"")
            try connection.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS iap_schema_migrations (
                        version integer PRIMARY KEY,
                        description text NOT NULL,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """
            )
            let result = try connection.execute(applied)
            var versions = Set<Int>()
            for row in 0..<result.count {
                versions.insert(Int(try result.int64(row, 0)))
            }
            let found = versions.max() ?? 0
            guard found > 0 || create else {
                throw IAPError(.notFound, "there is no ledger in the PostgreSQL schema \"\(schema)\"")
            }
            guard found <= latestVersion else {
                throw IAPError(
                    .storageSchemaTooNew,
                    "the ledger schema \"\(schema)\" is at version \(found), but this swift-iap knows versions up to "
                        + "\(latestVersion); upgrade swift-iap before it writes this ledger"
                )
            }
            // Every migration not yet applied, in order: each reads and changes only what earlier versions made, so
            // one added below the newest applied version (two branches of the code each adding one) still applies.
            for migration in migrations where !versions.contains(migration.version) {
                for statement in migration.statements {
                    try connection.execute(ddl: statement)
                }
                try connection.execute(record, [String(migration.version), migration.description])
            }
            return found
        }
    }
}
