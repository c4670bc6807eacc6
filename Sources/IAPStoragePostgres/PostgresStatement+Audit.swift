/// The statements of the ledger's identity and the support audit (``PostgresSupportAuditLog``).
extension PostgresStatement {
    static let ledgerIdentity = PostgresStatement(
        name: "iap_ledger_identity",
        sql: "SELECT ledger_id FROM iap_ledger_identity WHERE id = 1"
    )

    /// Serializes the appends to one schema's audit across processes, until the transaction ends. $1 the lock's name.
    static let auditLock = PostgresStatement(
        name: "iap_audit_lock",
        sql: "SELECT pg_advisory_xact_lock(hashtext($1))"
    )

    static let auditHead = PostgresStatement(
        name: "iap_audit_head",
        sql: "SELECT entries, last_hash FROM iap_support_audit_head WHERE id = 1"
    )

    /// The last row, and how many rows there are (a log is small: support's actions).
    static let auditLast = PostgresStatement(
        name: "iap_audit_last",
        sql: """
            SELECT sequence, entry, (SELECT count(*) FROM iap_support_audit)
            FROM iap_support_audit ORDER BY sequence DESC LIMIT 1
            """
    )

    /// $1 sequence, $2 the sealed entry.
    static let auditAppend = PostgresStatement(
        name: "iap_audit_append",
        sql: "INSERT INTO iap_support_audit (sequence, entry) VALUES ($1::bigint, $2)"
    )

    /// $1 entries, $2 the last entry's hash.
    static let auditMoveHead = PostgresStatement(
        name: "iap_audit_move_head",
        sql: """
            INSERT INTO iap_support_audit_head (id, entries, last_hash) VALUES (1, $1::bigint, $2)
            ON CONFLICT (id) DO UPDATE SET entries = excluded.entries, last_hash = excluded.last_hash
            """
    )

    static let auditAll = PostgresStatement(
        name: "iap_audit_all",
        sql: "SELECT sequence, entry FROM iap_support_audit ORDER BY sequence"
    )

    /// The support audit's head the ledger keeps (``PostgresEntitlementStore`` as a `SupportAuditHeadKeeper`).
    static let auditLedgerHead = PostgresStatement(
        name: "iap_audit_ledger_head",
        sql: "SELECT audit_entries, audit_last_hash FROM iap_ledger_identity WHERE id = 1"
    )

    /// Moves the ledger's head forward only. $1 entries, $2 the last entry's hash.
    static let auditAdvanceLedgerHead = PostgresStatement(
        name: "iap_audit_advance_ledger_head",
        sql: """
            UPDATE iap_ledger_identity SET audit_entries = $1::bigint, audit_last_hash = $2
            WHERE id = 1 AND (audit_entries IS NULL OR audit_entries < $1::bigint)
            """
    )

    /// Sets the ledger's head whatever it was (a reseal). $1 entries, $2 the last entry's hash.
    static let auditResealLedgerHead = PostgresStatement(
        name: "iap_audit_reseal_ledger_head",
        sql: "UPDATE iap_ledger_identity SET audit_entries = $1::bigint, audit_last_hash = $2 WHERE id = 1"
    )
}
