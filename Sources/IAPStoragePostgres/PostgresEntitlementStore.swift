#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// An ``EntitlementStore`` on PostgreSQL: one ledger shared by every instance of a backend.
///
/// Each call is one statement (or one short transaction) on a pooled connection — with group commit
/// (``Configuration/groupCommit``, on by default), concurrent inserts and compare-and-sets share a transaction, each
/// under its own savepoint and answered once the transaction committed — so the guarantees hold across threads,
/// processes and machines through the database alone, with no lock in this process:
/// - an insert is `INSERT ... ON CONFLICT (transaction_id) DO NOTHING`: of concurrent inserts of one id,
///   the unique constraint lets exactly one through, and the others read the stored entry;
/// - a replace is `UPDATE ... WHERE transaction_id = $1 AND revision = $2`: compare-and-set in SQL, so of
///   several deliverers claiming one due entry (the delivery pipeline claims by replace), exactly one wins;
/// - a binding, a processed notification and a renewal info are single upserts keyed by their primary key.
///
/// `sequence` comes from a PostgreSQL sequence: unique and increasing in insert order, with gaps where an
/// insert lost to an existing id. History cursors are `v1:<sequence>` as in the other stores, and pages are
/// by descending sequence through the `(user_id, sequence)` index. Dates are stored as whole milliseconds,
/// the precision of the App Store's own dates.
///
/// The store creates its schema and migrates it on open (``init(configuration:)``); see
/// `Documentation/Postgres.md` for the tables, the indexes and operations. libpq blocks its thread on every
/// round trip, so every call runs on the pool's own dispatch queue, never on the cooperative thread pool.
/// The store holds no state besides that pool, so it is a `final class` rather than an actor: calls run in
/// parallel, up to ``Configuration/poolSize`` at a time.
public final class PostgresEntitlementStore: EntitlementStore {
    /// How the store was opened.
    public let configuration: Configuration
    /// The schema version the store found when it opened (0 for a new ledger, which it then created).
    public let foundSchemaVersion: Int
    /// The connections, shared with the stores that live beside the ledger (``PostgresSupportAuditLog``, the
    /// reconciliation checkpoints and renewal extensions).
    let pool: PostgresConnectionPool
    /// Shares commits among concurrent inserts and compare-and-sets (``Configuration/groupCommit``).
    private let committer: PostgresGroupCommitter?

    /// The newest schema version this code creates and reads.
    public static var schemaVersion: Int { PostgresSchema.latestVersion }

    /// Connects, creates the schema or migrates it to ``schemaVersion``, and returns the store.
    ///
    /// - Parameter configuration: The server, the schema and the connection limits.
    /// - Throws: ``IAPError`` with code `invalidConfiguration` for a bad URL or schema name,
    ///   `storageUnavailable` when the server cannot be reached, `storageAuthenticationFailed` when it refuses
    ///   the credentials, `storageSchemaTooNew` when a newer swift-iap migrated the schema, `notFound` when the
    ///   ledger does not exist and ``Configuration/createIfMissing`` is `false`, `storageFailure` when a
    ///   migration fails (it is then rolled back entirely).
    public init(configuration: Configuration) async throws {
        try configuration.validate()
        self.configuration = configuration
        let pool = PostgresConnectionPool(size: configuration.poolSize) { try configuration.connect() }
        self.pool = pool
        committer = configuration.groupCommit.map {
            PostgresGroupCommitter(
                pool: pool,
                configuration: $0,
                poolSize: configuration.poolSize,
                autocommitAlone: true
            )
        }
        let schema = configuration.schema
        let create = configuration.createIfMissing
        do {
            foundSchemaVersion = try await pool.run { connection in
                try PostgresSchema.migrate(connection, schema: schema, create: create)
            }
        } catch {
            pool.close()
            throw error
        }
    }

    /// Closes the connections; later calls throw `storageFailure`. Calls under way finish first.
    public func close() async {
        pool.close()
    }

    // MARK: Transactions

    /// Records a new transaction, or returns the one already recorded with its id.
    ///
    /// One `INSERT ... ON CONFLICT (transaction_id) DO NOTHING`: of concurrent inserts of an id from any
    /// process, exactly one is `.inserted`.
    ///
    /// - Parameters:
    ///   - entry: The entry to record; its `sequence` and `revision` are assigned here.
    ///   - signedTransaction: The compact JWS it was verified from, kept in the `signed_transaction` column.
    /// - Returns: `.inserted` with the stored entry once committed, or `.existing` with the entry already there.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty `transactionId` or `userId`, text
    ///   PostgreSQL cannot hold (a NUL character) or a signed transaction that is not a compact JWS,
    ///   `storageUnavailable` or `storageFailure` if the database fails (nothing was recorded, or, for a connection
    ///   lost during the commit, perhaps it was: inserting again answers `.existing` then).
    public func insert(_ entry: LedgerEntry, signedTransaction: String?) async throws -> InsertOutcome {
        try Self.validateNew(entry)
        try LedgerState.checkSignedTransaction(signedTransaction, of: entry.transactionId)
        if let committer {
            return try await committer.submit(order: Self.order(of: entry)) { transaction in
                try Self.insert(entry, signedTransaction: signedTransaction, opening: transaction)
            }
        }
        return try await pool.run { connection in
            if let stored = try Self.insert(entry, signedTransaction: signedTransaction, on: connection) {
                return .inserted(stored)
            }
            return .existing(try Self.existing(entry.transactionId, on: connection))
        }
    }

    /// How many groups of more than one write ran (0 without group commit): whether writes share commits.
    package var sharedWriteGroups: Int {
        committer?.sharedGroups ?? 0
    }

    /// An entry's place in a group commit: by user, then transaction id (see `PostgresGroupCommitter.Item.order`).
    static func order(of entry: LedgerEntry) -> String {
        entry.userId + "\n" + entry.transactionId
    }

    /// The entry for a transaction id, or `nil`.
    ///
    /// - Parameter transactionId: The transaction id.
    /// - Returns: The entry.
    /// - Throws: ``IAPError`` if the database fails.
    public func entry(transactionId: String) async throws -> LedgerEntry? {
        guard Self.storable(transactionId) else {
            return nil
        }
        return try await pool.run(retryingOnLostConnection: true) { connection in
            try Self.entries(connection.execute(.entryById, [transactionId])).first
        }
    }

    /// Replaces an entry if its stored revision is still `revision`: `UPDATE ... WHERE revision = $2`.
    ///
    /// - Parameters:
    ///   - entry: The new state (same `transactionId`, `sequence` and `recordedAt`).
    ///   - revision: The revision the caller read.
    /// - Returns: `true` if stored (the revision is now `revision + 1`), `false` otherwise.
    /// - Throws: ``IAPError`` with code `invalidArgument` if the entry changes its `sequence` or `recordedAt` or
    ///   has an empty `userId`, or if the database fails; nothing changed.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64) async throws -> Bool {
        try await replace(entry, ifRevision: revision, signed: nil)
    }

    /// Replaces an entry and its signed transaction (`NULL` for `nil`) if its stored revision is still `revision`,
    /// in the same `UPDATE`.
    ///
    /// - Parameters:
    ///   - entry: The new state (same `transactionId`, `sequence` and `recordedAt`).
    ///   - revision: The revision the caller read.
    ///   - signedTransaction: The compact JWS of the entry's new transaction, or `nil`.
    /// - Returns: `true` if stored, `false` otherwise (nothing changed).
    /// - Throws: As ``replace(_:ifRevision:)``, and `invalidArgument` for a signed transaction that is not a
    ///   compact JWS.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64, signedTransaction: String?) async throws
        -> Bool
    {
        try LedgerState.checkSignedTransaction(signedTransaction, of: entry.transactionId)
        return try await replace(entry, ifRevision: revision, signed: .some(signedTransaction))
    }

    /// The signed transaction kept with an entry, from its `signed_transaction` column, or `nil`.
    ///
    /// - Parameter transactionId: The transaction id.
    /// - Returns: The compact JWS.
    /// - Throws: ``IAPError`` if the database fails.
    public func signedTransaction(transactionId: String) async throws -> String? {
        guard Self.storable(transactionId) else {
            return nil
        }
        return try await pool.run(retryingOnLostConnection: true) { connection in
            try connection.execute(.signedTransactionById, [transactionId]).string(0, 0)
        }
    }

    /// The first entry sequence recorded by a version that keeps signed transactions: 1 for a ledger created with
    /// them, or the sequence after the last entry when the schema was migrated to keep them (version 3). Entries
    /// before it have none, and are not expected to.
    ///
    /// - Throws: ``IAPError`` if the database fails.
    public func signedTransactionsFromSequence() async throws -> Int64 {
        try await pool.run(retryingOnLostConnection: true) { connection in
            try connection.execute(.signedTransactionsFrom).string(0, 0).flatMap { Int64($0) } ?? 1
        }
    }

    /// The compare-and-set, keeping the signed transaction (`signed` is `nil`) or setting it.
    private func replace(_ entry: LedgerEntry, ifRevision revision: Int64, signed: String??) async throws -> Bool {
        guard Self.storable(entry.transactionId) else {
            return false
        }
        if let committer {
            return try await committer.submit(order: Self.order(of: entry)) { transaction in
                try Self.replace(entry, ifRevision: revision, signed: signed, opening: transaction)
            }
        }
        return try await pool.run { connection in
            if !entry.userId.isEmpty {
                var parameters = try Self.replaceParameters(entry, revision)
                if let signed {
                    parameters.append(signed)
                }
                if try connection.execute(signed == nil ? .replaceEntry : .replaceEntrySigned, parameters).count == 1 {
                    return true
                }
            }
            return try Self.refusal(of: entry, on: connection)
        }
    }

    /// Every entry of a purchase family, by ascending `sequence`.
    ///
    /// - Parameter originalTransactionId: The original transaction id.
    /// - Returns: The entries.
    /// - Throws: ``IAPError`` if the database fails.
    public func entries(originalTransactionId: String) async throws -> [LedgerEntry] {
        guard Self.storable(originalTransactionId) else {
            return []
        }
        return try await pool.run(retryingOnLostConnection: true) { connection in
            try Self.entries(connection.execute(.entriesByOriginal, [originalTransactionId]))
        }
    }

    /// Every entry whose transaction carries an app transaction id, by ascending `sequence`, through the expression
    /// index `iap_ledger_entries_app_transaction` (schema version 7).
    ///
    /// - Parameter appTransactionId: The app transaction id.
    /// - Returns: The entries.
    /// - Throws: ``IAPError`` if the database fails.
    public func entries(appTransactionId: String) async throws -> [LedgerEntry] {
        guard Self.storable(appTransactionId) else {
            return []
        }
        return try await pool.run(retryingOnLostConnection: true) { connection in
            try Self.entries(connection.execute(.entriesByAppTransaction, [appTransactionId]))
        }
    }

    /// One page of a user's entries, newest first; cursors are `v1:<sequence>`.
    ///
    /// - Parameters:
    ///   - userId: The user.
    ///   - cursor: `nil` for the first page, or the previous page's `nextCursor`.
    ///   - limit: The most entries to return (at least 1).
    /// - Returns: The page; its `nextCursor` is `nil` when no older entry exists.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a malformed cursor or a `limit` below 1, or if
    ///   the database fails.
    public func history(userId: String, cursor: String?, limit: Int) async throws -> LedgerPage {
        guard limit >= 1 else {
            throw IAPError(.invalidArgument, "a history page needs a limit of at least 1, got \(limit)")
        }
        let before = try cursor.map(LedgerState.sequence(fromCursor:))
        guard Self.storable(userId) else {
            return LedgerPage(entries: [], nextCursor: nil)
        }
        return try await pool.run(retryingOnLostConnection: true) { connection in
            let size = String(Int64(limit) + 1)
            var entries = try Self.entries(
                before.map { try connection.execute(.historyBefore, [userId, String($0), size]) }
                    ?? connection.execute(.history, [userId, size])
            )
            let more = entries.count > limit
            if more {
                entries.removeLast()
            }
            let next = more ? entries.last.map { LedgerState.cursor(before: $0.sequence) } : nil
            return LedgerPage(entries: entries, nextCursor: next)
        }
    }

    /// Entries whose delivery is due, by `nextAttemptAt` (`nil` first) then `sequence`.
    ///
    /// Every instance may read the same due entries; the pipeline's claim (a compare-and-set
    /// ``replace(_:ifRevision:)``) decides which one delivers.
    ///
    /// - Parameters:
    ///   - instant: Now.
    ///   - limit: The most entries to return (at least 1).
    /// - Returns: The due entries.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a `limit` below 1, or if the database fails.
    public func dueDeliveries(at instant: Date, limit: Int) async throws -> [LedgerEntry] {
        guard limit >= 1 else {
            throw IAPError(.invalidArgument, "due deliveries need a limit of at least 1, got \(limit)")
        }
        return try await pool.run(retryingOnLostConnection: true) { connection in
            try Self.entries(connection.execute(.due, [Self.milliseconds(instant), String(limit)]))
        }
    }

    /// Entries parked for an unknown product, by sequence.
    ///
    /// - Parameter limit: The most entries to return (at least 1).
    /// - Returns: The parked entries, oldest first.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a `limit` below 1, or if the database fails.
    public func parkedEntries(limit: Int) async throws -> [LedgerEntry] {
        guard limit >= 1 else {
            throw IAPError(.invalidArgument, "parked entries need a limit of at least 1, got \(limit)")
        }
        return try await pool.run(retryingOnLostConnection: true) { connection in
            try Self.entries(connection.execute(.parked, [String(limit)]))
        }
    }

    // MARK: Keys

    /// Binds an appAccountToken (lowercased) to a user, once and for good.
    ///
    /// - Parameters:
    ///   - appAccountToken: The token.
    ///   - userId: The user.
    /// - Returns: Whether it was bound now, was already bound to this user, or belongs to another.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty token or user id, or if the database fails.
    public func bind(appAccountToken: String, to userId: String) async throws -> BindingOutcome {
        guard !appAccountToken.isEmpty, !userId.isEmpty else {
            throw IAPError(
                .invalidArgument,
                "binding needs a non-empty appAccountToken and userId, got \"\(appAccountToken)\" → \"\(userId)\""
            )
        }
        let token = appAccountToken.lowercased()
        return try await pool.run { connection in
            if try connection.execute(.bind, [token, userId]).count == 1 {
                return .bound
            }
            guard let existing = try connection.execute(.userForToken, [token]).string(0, 0) else {
                throw IAPError(.storageFailure, "appAccountToken \(token) was neither bound nor found; try again")
            }
            return existing.isSameUser(as: userId) ? .alreadyBound : .conflict(existingUserId: existing)
        }
    }

    /// The user an appAccountToken is bound to, or `nil`.
    ///
    /// - Parameter appAccountToken: The token (any case).
    /// - Returns: The user.
    /// - Throws: ``IAPError`` if the database fails.
    public func user(forAppAccountToken appAccountToken: String) async throws -> String? {
        let token = appAccountToken.lowercased()
        guard Self.storable(token) else {
            return nil
        }
        return try await pool.run(retryingOnLostConnection: true) { connection in
            try connection.execute(.userForToken, [token]).string(0, 0)
        }
    }

    /// Stores a subscription's renewal info if it is newer (by `signedDate`) than the stored one.
    ///
    /// - Parameter renewalInfo: The verified renewal info.
    /// - Returns: `true` if stored.
    /// - Throws: ``IAPError`` with code `invalidArgument` without an original transaction id, or if the
    ///   database fails.
    public func storeRenewalInfo(_ renewalInfo: RenewalInfoPayload) async throws -> Bool {
        guard let originalTransactionId = renewalInfo.originalTransactionId, !originalTransactionId.isEmpty else {
            throw IAPError(.invalidArgument, "renewal info without an originalTransactionId cannot be stored")
        }
        return try await pool.run { connection in
            let json = try Self.json(renewalInfo)
            let stored = try connection.execute(
                .storeRenewal,
                [originalTransactionId, renewalInfo.signedDate.map { String($0.millisecondsSince1970) }, json]
            )
            return stored.count == 1
        }
    }

    /// The latest renewal info of a subscription, or `nil`.
    ///
    /// - Parameter originalTransactionId: The subscription's original transaction id.
    /// - Returns: The renewal info.
    /// - Throws: ``IAPError`` if the database fails, `storageCorrupted` if the stored JSON does not decode.
    public func renewalInfo(originalTransactionId: String) async throws -> RenewalInfoPayload? {
        guard Self.storable(originalTransactionId) else {
            return nil
        }
        return try await pool.run(retryingOnLostConnection: true) { connection in
            guard let data = try connection.execute(.renewal, [originalTransactionId]).data(0, 0) else {
                return nil
            }
            return try Self.decode(RenewalInfoPayload.self, from: data, what: "renewal info \(originalTransactionId)")
        }
    }

    /// Records that a notification was processed.
    ///
    /// - Parameters:
    ///   - notificationUUID: The notification's UUID.
    ///   - instant: When it was processed.
    /// - Returns: `true` the first time for this UUID, `false` after.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty UUID, or if the database fails.
    public func markNotificationProcessed(_ notificationUUID: String, at instant: Date) async throws -> Bool {
        guard !notificationUUID.isEmpty else {
            throw IAPError(.invalidArgument, "a processed notification needs a notificationUUID")
        }
        return try await pool.run { connection in
            try connection.execute(.markNotification, [notificationUUID, Self.milliseconds(instant)]).count == 1
        }
    }

    /// Whether a notification was processed.
    ///
    /// - Parameter notificationUUID: The notification's UUID.
    /// - Returns: Whether it was recorded.
    /// - Throws: ``IAPError`` if the database fails.
    public func isNotificationProcessed(_ notificationUUID: String) async throws -> Bool {
        guard Self.storable(notificationUUID) else {
            return false
        }
        return try await pool.run(retryingOnLostConnection: true) { connection in
            try connection.execute(.notification, [notificationUUID]).count == 1
        }
    }

    /// Counts over the whole ledger (one aggregate query: it reads every row, so it is not for hot paths).
    ///
    /// - Returns: The counts.
    /// - Throws: ``IAPError`` if the database fails.
    public func statistics() async throws -> LedgerStatistics {
        try await pool.run(retryingOnLostConnection: true) { connection in
            let row = try connection.execute(.statistics)
            // One statement, so the counts and the environments are one snapshot; NULL when the ledger is empty.
            let environments = try row.data(0, 6).map {
                try Self.decode([String: Int].self, from: $0, what: "the environment counts")
            }
            return LedgerStatistics(
                transactions: Int(try row.int64(0, 0)),
                delivered: Int(try row.int64(0, 1)),
                pendingRetries: Int(try row.int64(0, 2)),
                deadLetters: Int(try row.int64(0, 3)),
                revoked: Int(try row.int64(0, 4)),
                users: Int(try row.int64(0, 5)),
                environments: environments ?? [:],
                unknownProduct: Int(try row.int64(0, 7)),
                givenUp: Int(try row.int64(0, 8))
            )
        }
    }

    /// One page of the distinct original transaction ids, in the order of each family's first entry; cursors are
    /// `f1:<sequence of the last family's first entry>`.
    ///
    /// Sequences are handed out before commit, so a family whose first insert commits after a concurrent walk
    /// passed its sequence is not in that walk; the next walk has it.
    ///
    /// - Parameters:
    ///   - cursor: `nil` for the first page, or the previous page's `nextCursor`.
    ///   - limit: The most ids to return (1 to 10000).
    /// - Returns: The page; its `nextCursor` is `nil` when the walk is complete.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a malformed cursor or a limit out of range, or if the
    ///   database fails.
    public func originalTransactionIds(cursor: String?, limit: Int) async throws -> OriginalTransactionIdPage {
        guard (1...10_000).contains(limit) else {
            throw IAPError(
                .invalidArgument,
                "a page of original transaction ids takes a limit from 1 to 10000, got \(limit)"
            )
        }
        var after: Int64 = 0
        if let cursor {
            let digits =
                cursor.hasPrefix(Self.familyCursorPrefix) ? cursor.dropFirst(Self.familyCursorPrefix.count) : ""
            guard let first = digits.first, first != "0", digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                let sequence = Int64(digits)
            else {
                throw IAPError(
                    .invalidArgument,
                    "malformed family cursor \"\(cursor)\": pass nil for the first page, then the nextCursor of the last page"
                )
            }
            after = sequence
        }
        let start = after
        return try await pool.run(retryingOnLostConnection: true) { connection in
            let rows = try connection.execute(.familiesAfter, [String(start), String(limit)])
            var ids: [String] = []
            var last = start
            for row in 0..<rows.count {
                last = try rows.int64(row, 0)
                ids.append(rows.string(row, 1) ?? "")
            }
            let next = ids.count == limit ? Self.familyCursorPrefix + String(last) : nil
            return OriginalTransactionIdPage(originalTransactionIds: ids, nextCursor: next)
        }
    }

    /// The version tag of family cursors.
    private static let familyCursorPrefix = "f1:"

    // MARK: Whole ledger

    /// Entries in insert order, a page at a time: those with a sequence above `sequence`.
    ///
    /// - Parameters:
    ///   - sequence: 0 for the first page, then the last sequence of the previous page.
    ///   - limit: The most entries to return (1 to 10000).
    /// - Returns: Up to `limit` entries by ascending sequence; fewer than `limit` at the end.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a limit out of range, or if the store fails.
    public func entries(afterSequence sequence: Int64, limit: Int) async throws -> [LedgerEntry] {
        guard (1...10_000).contains(limit) else {
            throw IAPError(.invalidArgument, "a page of entries takes a limit from 1 to 10000, got \(limit)")
        }
        return try await pool.run(retryingOnLostConnection: true) { connection in
            try Self.entries(connection.execute(.entriesAfter, [String(sequence), String(limit)]))
        }
    }

    /// Every entry, by ascending sequence (for exports and checks; it holds the whole ledger in memory).
    ///
    /// - Returns: The entries.
    /// - Throws: ``IAPError`` if the store fails.
    public func allEntries() async throws -> [LedgerEntry] {
        var all: [LedgerEntry] = []
        var last: Int64 = 0
        while true {
            let page = try await entries(afterSequence: last, limit: 5_000)
            all += page
            guard let end = page.last, page.count == 5_000 else {
                return all
            }
            last = end.sequence
        }
    }

    /// Inserts many new entries in one transaction, as ``insert(_:signedTransaction:)`` would one by one (an id already stored is
    /// skipped): for loading benchmark ledgers and imports, where a commit per entry is not needed.
    ///
    /// - Parameter entries: The entries; their `sequence` and `revision` are assigned by the store.
    /// - Returns: How many were inserted.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an entry without an id or user (nothing is
    ///   inserted then), or if the store fails.
    package func load(_ entries: [LedgerEntry]) async throws -> Int {
        for entry in entries where entry.transactionId.isEmpty || entry.userId.isEmpty {
            throw IAPError(
                .invalidArgument,
                "ledger entry \"\(entry.transactionId)\" needs a transactionId and a userId"
            )
        }
        return try await pool.run { connection in
            try connection.transaction {
                var inserted = 0
                for entry in entries where try Self.insert(entry, on: connection) != nil {
                    inserted += 1
                }
                return inserted
            }
        }
    }

    /// Drops the store's schema with every table in it, and closes the store.
    ///
    /// For tests and throw-away ledgers: the ledger is gone for every instance that uses the schema.
    ///
    /// - Throws: ``IAPError`` if the server refuses (the schema stays then).
    public func dropSchema() async throws {
        let schema = configuration.schema
        try await pool.run { connection in
            _ = try connection.execute(ddl: "DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE")
        }
        pool.close()
    }

    // MARK: Catalog

    /// The product catalog saved with the ledger (the JSON bytes as saved), or `nil`.
    ///
    /// - Returns: The catalog's JSON.
    /// - Throws: ``IAPError`` if the store fails.
    public func savedCatalog() async throws -> Data? {
        try await pool.run(retryingOnLostConnection: true) { connection in
            try connection.execute(.catalog).data(0, 0)
        }
    }

    /// Saves a product catalog with the ledger, replacing the saved one, so that every instance and later
    /// `iap ledger` commands use it.
    ///
    /// - Parameter json: The catalog's JSON (UTF-8); not checked here: parse it before saving.
    /// - Throws: ``IAPError`` with code `invalidArgument` when it is not UTF-8 text, or if the store fails.
    public func saveCatalog(_ json: Data) async throws {
        guard let text = String(validUTF8: json) else {
            throw IAPError(.invalidArgument, "a catalog must be UTF-8 JSON")
        }
        try await pool.run { connection in
            _ = try connection.execute(.saveCatalog, [text])
        }
    }

    // MARK: Rows and values

    /// Whether a key can be stored at all (PostgreSQL text holds no NUL): a key that cannot finds nothing.
    static func storable(_ key: String) -> Bool {
        !key.isEmpty && !key.utf8.contains(0)
    }

    /// Checks what ``insert(_:)`` refuses.
    static func validateNew(_ entry: LedgerEntry) throws {
        guard !entry.transactionId.isEmpty else {
            throw IAPError(.invalidArgument, "a ledger entry needs a transactionId")
        }
        guard !entry.userId.isEmpty else {
            throw IAPError(.invalidArgument, "ledger entry \(entry.transactionId) needs a userId")
        }
    }

    /// Inserts a new entry with ``PostgresStatement/insertEntry``.
    ///
    /// - Parameters:
    ///   - entry: The entry.
    ///   - signedTransaction: The compact JWS it was verified from, or `nil`.
    ///   - connection: The connection.
    /// - Returns: The stored entry (sequence assigned, revision 1), or `nil` when the id is taken.
    static func insert(
        _ entry: LedgerEntry,
        signedTransaction: String? = nil,
        on connection: PostgresConnection
    ) throws -> LedgerEntry? {
        var (stored, parameters) = try insertion(entry, signedTransaction)
        let inserted = try connection.execute(.insertEntry, parameters)
        guard inserted.count == 1 else {
            return nil
        }
        stored.sequence = try inserted.int64(0, 0)
        return stored
    }

    /// Opens a write (alone, or in its group's transaction) with the insert of a new entry.
    ///
    /// - Returns: `.inserted` with the entry as stored (its sequence assigned), or `.existing` with the entry already
    ///   recorded under its id.
    static func insert(
        _ entry: LedgerEntry,
        signedTransaction: String?,
        opening transaction: PostgresDeliveryTransaction
    ) throws -> InsertOutcome {
        let (stored, parameters) = try insertion(entry, signedTransaction)
        let inserted = try transaction.open(with: .insertEntry, parameters)
        guard inserted.count == 1 else {
            return .existing(try existing(entry.transactionId, on: transaction.connection))
        }
        var recorded = stored
        recorded.sequence = try inserted.int64(0, 0)
        return .inserted(recorded)
    }

    /// Opens a write (alone, or in its group's transaction) with a compare-and-set, keeping the signed transaction
    /// (`signed` is `nil`) or setting it.
    ///
    /// - Returns: Whether it took; `false` for another revision or no entry.
    /// - Throws: `invalidArgument` as ``refusal(of:on:)``, or as the database fails.
    static func replace(
        _ entry: LedgerEntry,
        ifRevision revision: Int64,
        signed: String??,
        opening transaction: PostgresDeliveryTransaction
    ) throws -> Bool {
        if !entry.userId.isEmpty {
            var parameters = try replaceParameters(entry, revision)
            if let signed {
                parameters.append(signed)
            }
            let statement: PostgresStatement = signed == nil ? .replaceEntry : .replaceEntrySigned
            if try transaction.open(with: statement, parameters).count == 1 {
                return true
            }
        }
        return try refusal(of: entry, on: transaction.connection)
    }

    /// The entry as ``PostgresStatement/insertEntry`` stores it (revision 1; the sequence comes from its result),
    /// and the statement's parameters.
    static func insertion(_ entry: LedgerEntry, _ signedTransaction: String?) throws -> (LedgerEntry, [String?]) {
        var stored = entry
        stored.revision = 1
        let json = try Self.json(stored)
        let parameters: [String?] = [
            entry.transactionId, entry.originalTransactionId, entry.userId,
            entry.transaction.appAccountToken?.lowercased(), entry.deliveryState.rawValue,
            milliseconds(entry.nextAttemptAt), milliseconds(entry.revokedAt), milliseconds(entry.recordedAt), json,
            signedTransaction,
        ]
        return (stored, parameters)
    }

    /// The entry stored under an id an insert found taken.
    static func existing(_ transactionId: String, on connection: PostgresConnection) throws -> LedgerEntry {
        guard let existing = try entries(connection.execute(.entryById, [transactionId])).first else {
            throw IAPError(
                .storageFailure,
                "transaction \(transactionId) was neither inserted nor found; try again",
                isRetryable: true
            )
        }
        return existing
    }

    /// The parameters of ``PostgresStatement/replaceEntry``: the entry's JSON carries the revision it will have.
    static func replaceParameters(_ entry: LedgerEntry, _ revision: Int64) throws -> [String?] {
        var stored = entry
        stored.revision = revision + 1
        return [
            entry.transactionId, String(revision), String(entry.sequence), milliseconds(entry.recordedAt),
            entry.userId, entry.originalTransactionId, entry.transaction.appAccountToken?.lowercased(),
            entry.deliveryState.rawValue, milliseconds(entry.nextAttemptAt), milliseconds(entry.revokedAt),
            try json(stored),
        ]
    }

    /// Why a compare-and-set did not take: `false` for another revision or no entry; `invalidArgument` for an entry
    /// that changes what never changes, as the contract orders its checks.
    static func refusal(of entry: LedgerEntry, on connection: PostgresConnection) throws -> Bool {
        // `sequence` and `recordedAt` never change, so reading them after the update cannot race with another
        // writer.
        let keys = try connection.execute(.keysById, [entry.transactionId])
        guard keys.count == 1 else {
            return false
        }
        let sequence = try keys.int64(0, 0)
        guard entry.sequence == sequence else {
            throw IAPError(
                .invalidArgument,
                "ledger entry \(entry.transactionId) has sequence \(sequence), which never changes; "
                    + "got \(entry.sequence)"
            )
        }
        let recordedAt = try keys.int64(0, 1)
        guard milliseconds(entry.recordedAt) == String(recordedAt) else {
            throw IAPError(
                .invalidArgument,
                "ledger entry \(entry.transactionId) was recorded at \(Date(millisecondsSince1970: recordedAt)), "
                    + "which never changes; got \(entry.recordedAt)"
            )
        }
        guard !entry.userId.isEmpty else {
            throw IAPError(.invalidArgument, "ledger entry \(entry.transactionId) needs a userId")
        }
        return false
    }

    private static func milliseconds(_ date: Date?) -> String? {
        date.map { String($0.millisecondsSince1970) }
    }

    private static func milliseconds(_ date: Date) -> String {
        String(date.millisecondsSince1970)
    }

    static func json(_ value: some Encodable) throws -> String {
        do {
            return String(decoding: try AppStoreJSON.makeEncoder().encode(value), as: UTF8.self)
        } catch {
            throw IAPError.wrapping(error, as: .storageFailure, "the value cannot be encoded for the ledger")
        }
    }

    private static func decode<Value: Decodable>(_ type: Value.Type, from data: Data, what: String) throws -> Value {
        do {
            return try AppStoreJSON.makeDecoder().decode(type, from: data)
        } catch {
            throw IAPError(.storageCorrupted, "\(what) in PostgreSQL does not decode: \(error)")
        }
    }

    /// The entries of rows of ``PostgresStatement/entryColumns``.
    static func entries(_ result: PostgresResult) throws -> [LedgerEntry] {
        var entries: [LedgerEntry] = []
        entries.reserveCapacity(result.count)
        let decoder = AppStoreJSON.makeDecoder()
        for row in 0..<result.count {
            let sequence = try result.int64(row, 0)
            guard let data = result.data(row, 2) else {
                throw IAPError(.storageCorrupted, "the ledger entry with sequence \(sequence) has no JSON")
            }
            var entry: LedgerEntry
            do {
                entry = try decoder.decode(LedgerEntry.self, from: data)
            } catch {
                throw IAPError(
                    .storageCorrupted,
                    "the ledger entry with sequence \(sequence) does not decode: \(error)"
                )
            }
            entry.sequence = sequence
            entry.revision = try result.int64(row, 1)
            entries.append(entry)
        }
        return entries
    }
}
