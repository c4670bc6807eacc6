#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore
public import IAPServerAPI

/// A ``SupportAuditLog`` in the ledger's PostgreSQL schema, chained (``SupportAuditChain``) and anchored to the
/// ledger's identity (`iap_ledger_identity`).
///
/// Entries are rows of `iap_support_audit` (the sealed JSON as `text`, so its bytes stay exactly those its
/// successor's hash covers), and the head is the one row of `iap_support_audit_head`. An append is one transaction
/// that takes an advisory lock on the schema's audit, checks the rows against the head (their count, the last one's
/// number and hash), inserts the next row and
/// moves the head: appends from any number of processes and machines are serialized, so the chain never forks, and
/// the head never disagrees with the rows unless someone changed them outside the store. An append onto such a
/// log is refused with `storageCorrupted` and writes nothing.
///
/// It shares the connections of the ledger's ``PostgresEntitlementStore``; closing the store closes it.
public final class PostgresSupportAuditLog: SupportAuditLog {
    /// The identity of the ledger it anchors to.
    public let ledgerId: String
    private let store: PostgresEntitlementStore

    /// The audit log of the ledger `store` opened.
    ///
    /// - Parameter store: The ledger.
    /// - Throws: ``IAPError`` if the ledger's identity cannot be read.
    public init(store: PostgresEntitlementStore) async throws {
        self.store = store
        self.ledgerId = try await store.ledgerIdentity()
    }

    /// Seals an entry and appends it in one transaction with the head's move.
    ///
    /// - Throws: ``IAPError`` `storageCorrupted` when the rows do not match the head, `invalidArgument` for an entry
    ///   without actor or action, or as the database fails; nothing was written then.
    @discardableResult
    public func append(_ entry: SupportAuditEntry) async throws -> SupportAuditEntry {
        let ledgerId = ledgerId
        let schema = store.configuration.schema
        let lock = "swift-iap support audit " + schema
        return try await store.pool.run { connection in
            try connection.transaction {
                try connection.execute(.auditLock, [lock])
                let head = try Self.head(connection)
                let last = try connection.execute(.auditLast)
                let lastSequence = last.count == 1 ? try last.int64(0, 0) : 0
                let rows = last.count == 1 ? try last.int64(0, 2) : 0
                let lastHash = last.data(0, 1).map { SupportAuditChain.hash(of: $0) }
                switch head {
                case .some(let head)
                where head.entries == lastSequence && head.entries == rows && head.lastHash == lastHash:
                    break
                case .none where last.count == 0:
                    break
                default:
                    throw IAPError(
                        .storageCorrupted,
                        "the support audit of schema \(schema) does not match its head (rows were "
                            + "changed or removed outside the store); check it with 'iap support audit verify'"
                    )
                }
                let sealed = try SupportAuditChain.seal(entry, after: head ?? .empty(ledgerId: ledgerId))
                try connection.execute(
                    .auditAppend,
                    [String(sealed.entry.sequence), String(decoding: sealed.record, as: UTF8.self)]
                )
                try connection.execute(.auditMoveHead, [String(sealed.head.entries), sealed.head.lastHash])
                return sealed.entry
            }
        }
    }

    /// Every entry, oldest first (rows that are not entries left out; ``verify()`` names them).
    public func entries() async throws -> [SupportAuditEntry] {
        try await read().records.compactMap { try? SupportAuditChain.decode($0) }
    }

    /// Checks the rows and the head, read in one snapshot.
    public func verify() async throws -> SupportAuditVerification {
        let (records, head) = try await read()
        return SupportAuditChain.verify(records, ledgerId: ledgerId, recordedHead: head)
    }

    /// Appends an operator's reseal entry after whatever rows the audit holds now, and sets the head row to it, in
    /// one transaction under the audit's lock: what lets support write again to an audit that does not match its
    /// head (`iap support audit reseal`). The entry is sealed after the last row as it is, so the chain goes on from
    /// what is left; breaks before it stay for ``verify()`` to name.
    ///
    /// - Parameter entry: The reseal entry.
    /// - Returns: The entry as sealed and stored.
    /// - Throws: ``IAPError`` as the database fails; nothing was written then.
    public func reseal(_ entry: SupportAuditEntry) async throws -> SupportAuditEntry {
        let ledgerId = ledgerId
        let lock = "swift-iap support audit " + store.configuration.schema
        return try await store.pool.run { connection in
            try connection.transaction {
                try connection.execute(.auditLock, [lock])
                let last = try connection.execute(.auditLast)
                let lastRow = last.count == 1 ? try last.int64(0, 0) : 0
                let rows = last.count == 1 ? try last.int64(0, 2) : 0
                let after =
                    last.data(0, 1).map {
                        SupportAuditHead(entries: Int(rows), lastHash: SupportAuditChain.hash(of: $0))
                    } ?? .empty(ledgerId: ledgerId)
                let sealed = try SupportAuditChain.seal(entry, after: after)
                try connection.execute(
                    .auditAppend,
                    [String(max(lastRow, rows) + 1), String(decoding: sealed.record, as: UTF8.self)]
                )
                try connection.execute(.auditMoveHead, [String(sealed.head.entries), sealed.head.lastHash])
                return sealed.entry
            }
        }
    }

    private func read() async throws -> (records: [SupportAuditRecord], head: SupportAuditHead?) {
        try await store.pool.run(retryingOnLostConnection: true) { connection in
            try connection.transaction {
                try connection.execute(sql: "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                let rows = try connection.execute(.auditAll)
                let records = try (0..<rows.count).map { row in
                    SupportAuditRecord(
                        location: "row \(try rows.int64(row, 0))",
                        bytes: Array(rows.data(row, 1) ?? Data())
                    )
                }
                return (records, try Self.head(connection))
            }
        }
    }

    private static func head(_ connection: PostgresConnection) throws -> SupportAuditHead? {
        let row = try connection.execute(.auditHead)
        guard row.count == 1 else { return nil }
        return SupportAuditHead(entries: Int(try row.int64(0, 0)), lastHash: row.string(0, 1) ?? "")
    }
}

extension PostgresEntitlementStore: SupportAuditHeadKeeper {
    /// The support audit's head the ledger keeps: the `audit_entries` and `audit_last_hash` of its
    /// `iap_ledger_identity` row, or `nil` when they are unset (no audited action since the schema kept them).
    ///
    /// - Throws: ``IAPError`` as the database fails.
    public func supportAuditHead() async throws -> SupportAuditHead? {
        try await pool.run(retryingOnLostConnection: true) { connection in
            let row = try connection.execute(.auditLedgerHead)
            guard row.count == 1, !row.isNull(0, 0), let hash = row.string(0, 1) else { return nil }
            return SupportAuditHead(entries: Int(try row.int64(0, 0)), lastHash: hash)
        }
    }

    /// Records the support audit's head in the ledger's identity row: forward only, unless `resealing`.
    ///
    /// - Throws: ``IAPError`` as the database fails.
    public func recordSupportAuditHead(_ head: SupportAuditHead, resealing: Bool) async throws {
        try await pool.run { connection in
            _ = try connection.execute(
                resealing ? .auditResealLedgerHead : .auditAdvanceLedgerHead,
                [String(head.entries), head.lastHash]
            )
        }
    }
}

extension PostgresEntitlementStore: IdentifiedEntitlementStore {
    /// The ledger's identity: the one row of `iap_ledger_identity`, made when the schema was created or migrated.
    ///
    /// - Returns: 32 lowercase hexadecimal characters.
    /// - Throws: ``IAPError`` `storageCorrupted` when the row is missing or holds something else, or as the database
    ///   fails.
    public func ledgerIdentity() async throws -> String {
        let schema = configuration.schema
        return try await pool.run(retryingOnLostConnection: true) { connection in
            guard let identity = try connection.execute(.ledgerIdentity).string(0, 0),
                LedgerIdentifier.isValid(identity)
            else {
                throw IAPError(
                    .storageCorrupted,
                    "the ledger in schema \(schema) has no identity (the row of iap_ledger_identity is missing)"
                )
            }
            return identity
        }
    }
}
