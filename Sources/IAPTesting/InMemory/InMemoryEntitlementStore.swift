#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// An ``EntitlementStore`` that keeps the ledger in the memory of one process.
///
/// It keeps the whole contract of ``EntitlementStore`` except durability: its contents are gone when the
/// instance is released. That makes it a complete backend for previews, command-line tools, tests and
/// single-process servers that can afford to start empty, and the reference the conformance suite is
/// written against. Every call is atomic because the store is an actor that never suspends inside one.
///
/// Entries are indexed by transaction id, by user (for ``history(userId:cursor:limit:)``), by original
/// transaction id, and by delivery state (so ``dueDeliveries(at:limit:)`` only looks at undelivered
/// entries). `sequence` starts at 1 and grows by 1 per insert; `revision` is 1 after insert and grows by 1
/// per successful ``replace(_:ifRevision:)``. Statistics are kept up to date on every write.
///
/// ## History cursors
/// A cursor is `v1:` followed by the `sequence` of the last entry of the previous page, in decimal without
/// sign or leading zeros (for example `v1:42`); the next page holds the user's entries with a smaller
/// sequence. Any other string, including the empty one, is malformed and throws ``IAPError`` with code
/// `invalidArgument`. Treat cursors as opaque: the format may change with its version tag.
///
/// ```swift
/// let store = InMemoryEntitlementStore()
/// let outcome = try await store.insert(entry)
/// let page = try await store.history(userId: "user-1", cursor: nil, limit: 20)
/// ```
public actor InMemoryEntitlementStore: EntitlementStore {
    /// Every entry, by transaction id.
    private var entriesById: [String: LedgerEntry] = [:]
    /// Each user's entries as (sequence, transaction id), by ascending sequence.
    private var idsByUser: [String: [SequencedId]] = [:]
    /// Each purchase family's entries as (sequence, transaction id), by ascending sequence.
    private var idsByOriginal: [String: [SequencedId]] = [:]
    /// The ids of entries that are `pending` or `retrying`: the only ones that can be due.
    private var undeliveredIds: Set<String> = []
    /// appAccountToken (lowercased) → user id.
    private var bindings: [String: String] = [:]
    /// The latest renewal info per original transaction id.
    private var renewalInfos: [String: RenewalInfoPayload] = [:]
    /// Processed notification UUIDs and when they were processed.
    private var processedNotifications: [String: Date] = [:]
    /// The sequence of the last insert.
    private var lastSequence: Int64 = 0
    /// Counts kept current on every write.
    private var counts = LedgerStatistics(
        transactions: 0,
        delivered: 0,
        pendingRetries: 0,
        deadLetters: 0,
        revoked: 0,
        users: 0
    )

    /// The version tag that starts every cursor this store issues.
    private static let cursorPrefix = "v1:"

    /// Creates an empty store.
    public init() {}

    // MARK: Transactions

    /// Records a new transaction, or returns the one already recorded with its id.
    ///
    /// - Parameter entry: The entry to record; its `sequence` and `revision` are assigned here.
    /// - Returns: `.inserted` with the stored entry, or `.existing` with the entry already there.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty `transactionId` or `userId`.
    public func insert(_ entry: LedgerEntry) throws -> InsertOutcome {
        guard !entry.transactionId.isEmpty else {
            throw IAPError(.invalidArgument, "a ledger entry needs a transactionId")
        }
        guard !entry.userId.isEmpty else {
            throw IAPError(.invalidArgument, "ledger entry \(entry.transactionId) needs a userId")
        }
        if let existing = entriesById[entry.transactionId] {
            return .existing(existing)
        }
        lastSequence += 1
        var stored = entry
        stored.sequence = lastSequence
        stored.revision = 1
        entriesById[stored.transactionId] = stored
        let key = SequencedId(sequence: stored.sequence, transactionId: stored.transactionId)
        Self.add(key, to: &idsByUser, under: stored.userId)
        Self.add(key, to: &idsByOriginal, under: stored.originalTransactionId)
        updateIndexes(removing: nil, adding: stored)
        return .inserted(stored)
    }

    /// The entry for a transaction id, or `nil`.
    public func entry(transactionId: String) -> LedgerEntry? {
        entriesById[transactionId]
    }

    /// Replaces an entry if its stored revision still equals `revision`.
    ///
    /// - Parameters:
    ///   - entry: The new state of the entry.
    ///   - revision: The revision the caller read.
    /// - Returns: `true` if stored, `false` if the revision differs or the entry does not exist.
    /// - Throws: ``IAPError`` with code `invalidArgument` if the entry changes its `sequence` or
    ///   `recordedAt`, or has an empty `userId`.
    public func replace(_ entry: LedgerEntry, ifRevision revision: Int64) throws -> Bool {
        guard let current = entriesById[entry.transactionId] else {
            return false
        }
        guard entry.sequence == current.sequence else {
            throw IAPError(
                .invalidArgument,
                "ledger entry \(entry.transactionId) has sequence \(current.sequence), which never changes; "
                    + "got \(entry.sequence)"
            )
        }
        guard entry.recordedAt == current.recordedAt else {
            throw IAPError(
                .invalidArgument,
                "ledger entry \(entry.transactionId) was recorded at \(current.recordedAt), which never changes; "
                    + "got \(entry.recordedAt)"
            )
        }
        guard !entry.userId.isEmpty else {
            throw IAPError(.invalidArgument, "ledger entry \(entry.transactionId) needs a userId")
        }
        guard current.revision == revision else {
            return false
        }
        var stored = entry
        stored.revision = current.revision + 1
        entriesById[stored.transactionId] = stored
        let key = SequencedId(sequence: stored.sequence, transactionId: stored.transactionId)
        if stored.userId != current.userId {
            Self.remove(key, from: &idsByUser, under: current.userId)
            Self.add(key, to: &idsByUser, under: stored.userId)
        }
        if stored.originalTransactionId != current.originalTransactionId {
            Self.remove(key, from: &idsByOriginal, under: current.originalTransactionId)
            Self.add(key, to: &idsByOriginal, under: stored.originalTransactionId)
        }
        updateIndexes(removing: current, adding: stored)
        return true
    }

    /// Every entry of a purchase family, by ascending `sequence`.
    public func entries(originalTransactionId: String) -> [LedgerEntry] {
        (idsByOriginal[originalTransactionId] ?? []).compactMap { entriesById[$0.transactionId] }
    }

    /// One page of a user's entries, newest first.
    ///
    /// - Parameters:
    ///   - userId: The user.
    ///   - cursor: `nil` for the first page, or the previous page's `nextCursor` (see *History cursors*).
    ///   - limit: The most entries to return (at least 1).
    /// - Returns: The page; `nextCursor` is `nil` when no older entry exists.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a malformed cursor or a `limit` below 1.
    public func history(userId: String, cursor: String?, limit: Int) throws -> LedgerPage {
        guard limit >= 1 else {
            throw IAPError(.invalidArgument, "a history page needs a limit of at least 1, got \(limit)")
        }
        let ids = idsByUser[userId] ?? []
        // `end` is one past the newest entry older than the cursor.
        var end = ids.endIndex
        if let cursor {
            let before = try Self.sequence(fromCursor: cursor)
            end = Self.firstIndex(in: ids, withSequenceAtLeast: before)
        }
        let start = max(ids.startIndex, end - limit)
        let page = ids[start..<end].reversed().compactMap { entriesById[$0.transactionId] }
        let nextCursor: String?
        if start > ids.startIndex, let last = page.last {
            nextCursor = Self.cursorPrefix + String(last.sequence)
        } else {
            nextCursor = nil
        }
        return LedgerPage(entries: page, nextCursor: nextCursor)
    }

    /// Entries whose delivery is due at `instant`.
    ///
    /// - Parameters:
    ///   - instant: Now.
    ///   - limit: The most entries to return (at least 1).
    /// - Returns: `retrying` entries with `nextAttemptAt <= instant` (or none) and `pending` entries whose claim
    ///   expired or was never taken, by `nextAttemptAt` (`nil` first) then `sequence`.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a `limit` below 1.
    public func dueDeliveries(at instant: Date, limit: Int) throws -> [LedgerEntry] {
        guard limit >= 1 else {
            throw IAPError(.invalidArgument, "due deliveries need a limit of at least 1, got \(limit)")
        }
        let due = undeliveredIds.compactMap { entriesById[$0] }.filter { Self.isDue($0, at: instant) }
        let ordered = due.sorted { lhs, rhs in
            switch (lhs.nextAttemptAt, rhs.nextAttemptAt) {
            case (nil, nil):
                return lhs.sequence < rhs.sequence
            case (nil, _):
                return true
            case (_, nil):
                return false
            case (let left?, let right?):
                return left == right ? lhs.sequence < rhs.sequence : left < right
            }
        }
        return Array(ordered.prefix(limit))
    }

    // MARK: Bindings

    /// Binds an appAccountToken to a user, once and for good.
    ///
    /// - Parameters:
    ///   - appAccountToken: The token, compared case-insensitively.
    ///   - userId: The user.
    /// - Returns: `.bound`, `.alreadyBound`, or `.conflict` with the user the token belongs to.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty token or user id.
    public func bind(appAccountToken: String, to userId: String) throws -> BindingOutcome {
        guard !appAccountToken.isEmpty, !userId.isEmpty else {
            throw IAPError(
                .invalidArgument,
                "binding needs a non-empty appAccountToken and userId, got \"\(appAccountToken)\" → \"\(userId)\""
            )
        }
        let token = appAccountToken.lowercased()
        if let existing = bindings[token] {
            return existing == userId ? .alreadyBound : .conflict(existingUserId: existing)
        }
        bindings[token] = userId
        return .bound
    }

    /// The user an appAccountToken is bound to, or `nil`.
    public func user(forAppAccountToken appAccountToken: String) -> String? {
        bindings[appAccountToken.lowercased()]
    }

    // MARK: Renewal infos

    /// Stores a subscription's renewal info if its `signedDate` is later than the stored one's.
    ///
    /// - Parameter renewalInfo: The verified renewal info.
    /// - Returns: `true` if stored, `false` if an equally new or newer one was already there.
    /// - Throws: ``IAPError`` with code `invalidArgument` without an original transaction id.
    public func storeRenewalInfo(_ renewalInfo: RenewalInfoPayload) throws -> Bool {
        guard let originalTransactionId = renewalInfo.originalTransactionId, !originalTransactionId.isEmpty else {
            throw IAPError(.invalidArgument, "renewal info without an originalTransactionId cannot be stored")
        }
        if let stored = renewalInfos[originalTransactionId] {
            let storedDate = stored.signedDate ?? .distantPast
            let newDate = renewalInfo.signedDate ?? .distantPast
            guard newDate > storedDate else {
                return false
            }
        }
        renewalInfos[originalTransactionId] = renewalInfo
        return true
    }

    /// The latest renewal info of a subscription, or `nil`.
    public func renewalInfo(originalTransactionId: String) -> RenewalInfoPayload? {
        renewalInfos[originalTransactionId]
    }

    // MARK: Notifications

    /// Records that a notification was processed.
    ///
    /// - Parameters:
    ///   - notificationUUID: The notification's `notificationUUID`.
    ///   - instant: When it was processed.
    /// - Returns: `true` the first time for this UUID, `false` after.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty UUID.
    public func markNotificationProcessed(_ notificationUUID: String, at instant: Date) throws -> Bool {
        guard !notificationUUID.isEmpty else {
            throw IAPError(.invalidArgument, "a processed notification needs a notificationUUID")
        }
        guard processedNotifications[notificationUUID] == nil else {
            return false
        }
        processedNotifications[notificationUUID] = instant
        return true
    }

    /// Whether a notification was processed.
    public func isNotificationProcessed(_ notificationUUID: String) -> Bool {
        processedNotifications[notificationUUID] != nil
    }

    // MARK: Statistics

    /// Counts over the whole ledger.
    public func statistics() -> LedgerStatistics {
        var statistics = counts
        statistics.users = idsByUser.count
        return statistics
    }

    // MARK: Internals

    /// Moves the delivery-state index and the counts from `old` (if any) to `new`.
    private func updateIndexes(removing old: LedgerEntry?, adding new: LedgerEntry) {
        if let old {
            count(old, by: -1)
        } else {
            counts.transactions += 1
        }
        count(new, by: 1)
        switch new.deliveryState {
        case .pending, .retrying:
            undeliveredIds.insert(new.transactionId)
        case .delivered, .deadLettered, .awaitingOwner:
            undeliveredIds.remove(new.transactionId)
        }
    }

    /// Adds `delta` to the counts an entry contributes to (all but `transactions` and `users`).
    private func count(_ entry: LedgerEntry, by delta: Int) {
        switch entry.deliveryState {
        case .delivered:
            counts.delivered += delta
        case .retrying:
            counts.pendingRetries += delta
        case .deadLettered:
            counts.deadLetters += delta
        case .pending, .awaitingOwner:
            break
        }
        if entry.revokedAt != nil {
            counts.revoked += delta
        }
    }

    /// Whether an undelivered entry is due at `instant`.
    private static func isDue(_ entry: LedgerEntry, at instant: Date) -> Bool {
        switch entry.deliveryState {
        case .retrying:
            // A retry without a time is due at once rather than stranded.
            guard let next = entry.nextAttemptAt else {
                return true
            }
            return next <= instant
        case .pending:
            guard let claimedUntil = entry.nextAttemptAt else {
                return true
            }
            return claimedUntil <= instant
        case .delivered, .deadLettered, .awaitingOwner:
            return false
        }
    }

    /// Inserts `id` into the list under `key`, keeping the list sorted by sequence.
    private static func add(_ id: SequencedId, to index: inout [String: [SequencedId]], under key: String) {
        var ids = index[key, default: []]
        let position = firstIndex(in: ids, withSequenceAtLeast: id.sequence)
        ids.insert(id, at: position)
        index[key] = ids
    }

    /// Removes `id` from the list under `key`, and drops the list when it becomes empty.
    private static func remove(_ id: SequencedId, from index: inout [String: [SequencedId]], under key: String) {
        guard var ids = index[key] else {
            return
        }
        let position = firstIndex(in: ids, withSequenceAtLeast: id.sequence)
        if position < ids.endIndex, ids[position] == id {
            ids.remove(at: position)
        }
        index[key] = ids.isEmpty ? nil : ids
    }

    /// The index of the first element whose sequence is at least `sequence` (binary search).
    private static func firstIndex(in ids: [SequencedId], withSequenceAtLeast sequence: Int64) -> Int {
        var low = ids.startIndex
        var high = ids.endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if ids[middle].sequence < sequence {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    /// The sequence a cursor points before.
    private static func sequence(fromCursor cursor: String) throws -> Int64 {
        guard cursor.hasPrefix(cursorPrefix) else {
            throw malformedCursor(cursor)
        }
        let digits = cursor.dropFirst(cursorPrefix.count)
        guard let first = digits.first, first != "0",
            digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let sequence = Int64(digits)
        else {
            throw malformedCursor(cursor)
        }
        return sequence
    }

    private static func malformedCursor(_ cursor: String) -> IAPError {
        IAPError(
            .invalidArgument,
            "malformed history cursor \"\(cursor)\": pass nil for the first page, then the nextCursor of the last page"
        )
    }
}

/// A position in an index: an entry's sequence and transaction id.
private struct SequencedId: Hashable, Sendable {
    var sequence: Int64
    var transactionId: String
}
