#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The durable ledger behind exactly-once delivery.
///
/// It keeps the verified transactions by id with their delivery and revocation state (which is also the
/// retry queue), the appAccountToken → user bindings, the latest renewal info per subscription, and
/// the ids of processed notifications. The delivery pipeline, the notification processor and the
/// reconciler build every guarantee of swift-iap on this contract, so a backend must keep it exactly.
///
/// ## Implementation requirements
/// - **Durable before it answers.** When a mutating call returns, its effect survives a crash of the
///   process (and, for a database, of the machine, as far as the database promises).
/// - **Atomic.** Each call applies entirely or not at all. A call that throws changed nothing; it throws
///   ``IAPError`` with code ``IAPError/Code/storageFailure`` (or `storageCorrupted` / `storageLocked`) when
///   the store fails, and ``IAPError/Code/invalidArgument`` when the input breaks a rule under *Validation*.
/// - **Faithful.** An entry reads back exactly as it was written, apart from the `sequence` and `revision`
///   the store assigns; dates keep at least millisecond precision.
/// - **Idempotent by key.** ``insert(_:signedTransaction:)`` is keyed by `transactionId`: of any number of concurrent
///   inserts of one id, from any number of tasks or processes, exactly one returns `.inserted`; all
///   others return `.existing` with the stored entry. ``bind(appAccountToken:to:)`` is keyed by the
///   token, compared case-insensitively: the first binding wins forever.
///   ``markNotificationProcessed(_:at:)`` is keyed by the notification UUID.
/// - **Exact keys.** User ids, transaction ids, original transaction ids and notification UUIDs compare
///   exactly: case and white space matter (a case-insensitive database collation breaks this); only
///   appAccountTokens ignore case. Whether two Unicode forms of one text (`é` composed or decomposed)
///   are one key may differ between backends, as Swift strings and byte-wise databases disagree: pass
///   user ids in one normalization form (NFC). The App Store's own ids are ASCII digits and UUIDs.
/// - **Compare-and-set.** ``insert(_:signedTransaction:)`` stores revision 1. ``replace(_:ifRevision:)`` stores the entry
///   only if the stored revision still equals the given one, then increments the revision; otherwise it
///   returns `false` and changes nothing. The `revision` inside the given entry is ignored. `sequence`,
///   `transactionId` and `recordedAt` never change after insert; `userId` and `originalTransactionId`
///   may, and the reads by user and by original transaction id follow.
/// - **Ordering.** `sequence` is assigned on insert, unique and increasing in insert order.
///   ``history(userId:cursor:limit:)`` returns a user's entries by descending `sequence`; a cursor stays
///   valid while entries are added, and paging never skips or repeats an entry. Entries added after a
///   walk began are newer than its cursor, so they do not appear in its later pages. A page's
///   `nextCursor` is `nil` exactly when no older entry of the user exists. Cursors are opaque, belong
///   to the user they were issued for, and are documented by each backend.
///   ``dueDeliveries(at:limit:)`` returns entries in state `retrying` with `nextAttemptAt <= at` (or
///   with no `nextAttemptAt`, so that a retry is never stranded), and `pending` entries whose claim
///   (`nextAttemptAt`) expired (`<= at`) or was never taken (`nil`), by `nextAttemptAt` (`nil` first)
///   then `sequence`. `delivered` and `deadLettered` entries are never due.
/// - **Renewal infos** are kept per `originalTransactionId`; ``storeRenewalInfo(_:)`` replaces the stored
///   one only when the new one's `signedDate` is later (App Store notifications arrive out of order). A
///   missing `signedDate` counts as earlier than any date.
/// - **Validation.** These calls throw ``IAPError/Code/invalidArgument`` and change nothing:
///   ``insert(_:signedTransaction:)`` with an empty `transactionId` or `userId`; ``replace(_:ifRevision:)`` of a stored
///   entry with an empty `userId`, or a `sequence` or `recordedAt` other than the stored ones;
///   ``history(userId:cursor:limit:)`` or ``dueDeliveries(at:limit:)`` with a `limit` below 1, or a
///   malformed cursor (the empty string is malformed: the first page is `nil`);
///   ``bind(appAccountToken:to:)`` with an empty token or user id; ``storeRenewalInfo(_:)`` without an
///   `originalTransactionId` (or with an empty one); ``markNotificationProcessed(_:at:)`` with an empty
///   UUID. Reads with an unknown or empty key find nothing and do not throw.
/// - **Signed transactions.** ``insert(_:signedTransaction:)`` keeps, beside a new entry, the compact JWS its
///   transaction was verified from, durably, so that the ledger can be verified again (`iap ledger check
///   --reverify`); ``signedTransaction(transactionId:)`` reads it back exactly. An insert that finds the id taken
///   leaves the stored one as it is. ``replace(_:ifRevision:)`` keeps it; ``replace(_:ifRevision:signedTransaction:)``
///   stores the given one in its place, or none for `nil` (the pipeline calls it when it records newer signed data
///   of a transaction), under the same compare-and-set. A signed transaction that is not a compact JWS (three
///   non-empty segments of unpadded base64url, at most 512 KiB) throws ``IAPError/Code/invalidArgument`` and
///   changes nothing. A store need not hold them in memory.
/// - Safe to call from many tasks at once.
///
/// `EntitlementStoreConformance` in `IAPConformance` checks all of this; every backend must pass it.
public protocol EntitlementStore: Sendable {
    /// Records a new transaction with the signed data it was verified from, or returns the one already recorded
    /// with its id.
    ///
    /// - Parameters:
    ///   - entry: The entry to record; its `sequence` and `revision` are assigned by the store.
    ///   - signedTransaction: The compact JWS the entry's transaction was verified from, kept durably beside it;
    ///     `nil` when there is none.
    /// - Returns: `.inserted` with the stored entry (revision 1), or `.existing` with the entry already
    ///   there, unchanged (its signed transaction too) even if the given entry differs from it.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty `transactionId` or `userId` or a signed
    ///   transaction that is not a compact JWS, or if the store fails; nothing was recorded.
    func insert(_ entry: LedgerEntry, signedTransaction: String?) async throws -> InsertOutcome

    /// The entry for a transaction id, or `nil`.
    ///
    /// - Throws: ``IAPError`` if the store fails.
    func entry(transactionId: String) async throws -> LedgerEntry?

    /// Replaces an entry if nobody changed it since it was read.
    ///
    /// - Parameters:
    ///   - entry: The new state of the entry (same `transactionId`, `sequence` and `recordedAt`; its
    ///     `revision` is ignored).
    ///   - revision: The revision the caller read.
    /// - Returns: `true` if stored (the stored revision is now `revision + 1`), `false` if the stored
    ///   revision differs or the entry does not exist.
    /// - Throws: ``IAPError`` with code `invalidArgument` if the entry changes its `sequence` or
    ///   `recordedAt` or has an empty `userId`, or if the store fails; nothing changed.
    func replace(_ entry: LedgerEntry, ifRevision revision: Int64) async throws -> Bool

    /// Replaces an entry and its signed transaction if nobody changed the entry since it was read: for an entry
    /// whose `transaction` is replaced by newer signed data.
    ///
    /// - Parameters:
    ///   - entry: The new state of the entry, as for ``replace(_:ifRevision:)``.
    ///   - revision: The revision the caller read.
    ///   - signedTransaction: The compact JWS of the entry's new `transaction`, or `nil` to keep none.
    /// - Returns: `true` if stored, `false` if the stored revision differs or the entry does not exist (nothing
    ///   changed then, the signed transaction neither).
    /// - Throws: As ``replace(_:ifRevision:)``, and ``IAPError`` with code `invalidArgument` for a signed
    ///   transaction that is not a compact JWS.
    func replace(_ entry: LedgerEntry, ifRevision revision: Int64, signedTransaction: String?) async throws -> Bool

    /// The signed transaction kept with an entry: the JWS it was recorded from, or the one of the newer data that
    /// last replaced its transaction.
    ///
    /// - Parameter transactionId: The transaction id.
    /// - Returns: The compact JWS, or `nil` when the entry has none (it was recorded without one, or by a version
    ///   that kept none) or does not exist.
    /// - Throws: ``IAPError`` if the store fails.
    func signedTransaction(transactionId: String) async throws -> String?

    /// Every entry of a subscription or purchase family, by ascending `sequence`.
    ///
    /// - Parameter originalTransactionId: The original transaction id.
    /// - Throws: ``IAPError`` if the store fails.
    func entries(originalTransactionId: String) async throws -> [LedgerEntry]

    /// Every entry whose transaction carries an app transaction id (``TransactionPayload/appTransactionId``: stable
    /// per Apple Account and app), by ascending `sequence`: everything one Apple Account bought, whoever the app's
    /// users were. It compares exactly.
    ///
    /// The default throws `unsupportedOperation`: a store that keeps no such index says so rather than scan. The
    /// stores of this package index it.
    ///
    /// - Parameter appTransactionId: The app transaction id.
    /// - Throws: ``IAPError`` if the store fails, or `unsupportedOperation` for a store without the index.
    func entries(appTransactionId: String) async throws -> [LedgerEntry]

    /// One page of a user's entries, newest first.
    ///
    /// - Parameters:
    ///   - userId: The user.
    ///   - cursor: `nil` for the first page, or the previous page's `nextCursor`.
    ///   - limit: The most entries to return (at least 1).
    /// - Returns: The page; its `nextCursor` is `nil` when no older entry exists.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a malformed cursor or a `limit` below 1, or if
    ///   the store fails.
    func history(userId: String, cursor: String?, limit: Int) async throws -> LedgerPage

    /// Entries whose delivery is due: retries whose time came, and pending entries not held by a deliverer.
    ///
    /// - Parameters:
    ///   - instant: Now.
    ///   - limit: The most entries to return (at least 1).
    /// - Returns: The due entries, by `nextAttemptAt` (`nil` first) then `sequence`.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a `limit` below 1, or if the store fails.
    func dueDeliveries(at instant: Date, limit: Int) async throws -> [LedgerEntry]

    /// Entries parked because the catalog did not know their product (``DeliveryState/unknownProduct``), by
    /// ascending `sequence`: what ``DeliveryPipeline/releaseParked(limit:)`` looks at once the catalog changed.
    ///
    /// - Parameter limit: The most entries to return (at least 1).
    /// - Returns: The parked entries, oldest first.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a `limit` below 1, or if the store fails.
    func parkedEntries(limit: Int) async throws -> [LedgerEntry]

    /// Binds an appAccountToken to a user, once and for good.
    ///
    /// - Parameters:
    ///   - appAccountToken: The token (a UUID string; compared case-insensitively).
    ///   - userId: The user.
    /// - Returns: Whether it was bound now, was already bound to this user, or belongs to another.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty token or user id, or if the store fails.
    func bind(appAccountToken: String, to userId: String) async throws -> BindingOutcome

    /// The user an appAccountToken is bound to, or `nil`.
    ///
    /// - Throws: ``IAPError`` if the store fails.
    func user(forAppAccountToken appAccountToken: String) async throws -> String?

    /// Stores a subscription's renewal info if it is newer than the stored one.
    ///
    /// - Parameter renewalInfo: The verified renewal info (it must have an `originalTransactionId`).
    /// - Returns: `true` if stored, `false` if an equally new or newer one was already there.
    /// - Throws: ``IAPError`` with code `invalidArgument` without an original transaction id, or if the store fails.
    func storeRenewalInfo(_ renewalInfo: RenewalInfoPayload) async throws -> Bool

    /// The latest renewal info of a subscription, or `nil`.
    ///
    /// - Throws: ``IAPError`` if the store fails.
    func renewalInfo(originalTransactionId: String) async throws -> RenewalInfoPayload?

    /// Records that a notification was processed.
    ///
    /// - Parameters:
    ///   - notificationUUID: The notification's `notificationUUID`.
    ///   - instant: When it was processed.
    /// - Returns: `true` the first time for this UUID, `false` after.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty UUID, or if the store fails.
    func markNotificationProcessed(_ notificationUUID: String, at instant: Date) async throws -> Bool

    /// Whether a notification was processed.
    ///
    /// - Throws: ``IAPError`` if the store fails.
    func isNotificationProcessed(_ notificationUUID: String) async throws -> Bool

    /// Counts over the whole ledger.
    ///
    /// - Throws: ``IAPError`` if the store fails.
    func statistics() async throws -> LedgerStatistics

    /// One page of the distinct original transaction ids the ledger knows, for walking every customer (a
    /// whole-ledger reconciliation).
    ///
    /// Families come in the order of their first entry's `sequence`; a cursor stays valid while entries are added
    /// (new families come after it), and a walk never repeats a family. A page may hold fewer than `limit` ids, even
    /// none, while `nextCursor` is not `nil`. A whole-ledger reconciliation (`Reconciler.reconcileLedger(progress:)`
    /// in IAPServerAPI) walks the ledger with it.
    ///
    /// - Parameters:
    ///   - cursor: `nil` for the first page, or the previous page's `nextCursor`.
    ///   - limit: The most ids to return (at least 1).
    /// - Returns: The page; its `nextCursor` is `nil` when the walk is complete.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a malformed cursor or a `limit` below 1, or if the
    ///   store fails.
    func originalTransactionIds(cursor: String?, limit: Int) async throws -> OriginalTransactionIdPage
}

extension EntitlementStore {
    /// Records a new transaction without signed data: ``insert(_:signedTransaction:)`` with `nil`.
    ///
    /// - Parameter entry: The entry to record; its `sequence` and `revision` are assigned by the store.
    /// - Returns: `.inserted` with the stored entry, or `.existing` with the entry already there.
    /// - Throws: As ``insert(_:signedTransaction:)``.
    public func insert(_ entry: LedgerEntry) async throws -> InsertOutcome {
        try await insert(entry, signedTransaction: nil)
    }
}

extension EntitlementStore {
    /// Throws `unsupportedOperation`: this store keeps no index of app transaction ids.
    public func entries(appTransactionId: String) async throws -> [LedgerEntry] {
        throw IAPError(
            .unsupportedOperation,
            "\(type(of: self)) keeps no index of app transaction ids: look purchases up by user or transaction"
        )
    }
}
