#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// The whole ledger in memory, with its indexes and the contract's rules: what `InMemoryEntitlementStore` and
/// `FileEntitlementStore` both answer from, so the two backends share one implementation of the contract.
///
/// It is a value type, so a copy for a snapshot is free until the store writes again. Entries live once,
/// in ``entries``, at `sequence - 1` (sequences start at 1 and grow by 1 per insert, and entries are never
/// removed); every index holds positions into that array, never a second copy of an entry.
///
/// Mutations are split in two steps so that a write can be undone when its journal record fails to reach
/// the disk: each mutating method returns the ``Undo`` that restores the state before it.
package struct LedgerState: Sendable {
    /// Every entry, at `sequence - 1`.
    package private(set) var entries: [LedgerEntry] = []
    /// Transaction id → position in ``entries``.
    private var positionById: [String: Int] = [:]
    /// User id (by its bytes) → positions of the user's entries, ascending (that is, by sequence).
    private var positionsByUser: [UserKey: [Int]] = [:]
    /// Original transaction id → positions of the family's entries, ascending.
    private var positionsByOriginal: [String: Positions] = [:]
    /// App transaction id (an Apple Account's, per app) → positions of the entries whose transaction carries it,
    /// ascending.
    private var positionsByAppTransaction: [String: Positions] = [:]
    /// Positions of `pending` and `retrying` entries: the only ones that can be due.
    private var undelivered: Set<Int> = []
    /// User id → how many of the user's entries have a real owner (not one waiting for its owner, not
    /// `unowned:<id>`): the users that ``statistics`` counts.
    private var ownedEntriesByUser: [UserKey: Int] = [:]
    /// Positions of `unknownProduct` entries: parked until the catalog names their product.
    private var parked: Set<Int> = []
    /// appAccountToken (lowercased) → user id.
    package private(set) var bindings: [String: String] = [:]
    /// The latest renewal info per original transaction id.
    package private(set) var renewalInfos: [String: RenewalInfoPayload] = [:]
    /// Processed notification UUIDs and when they were processed.
    package private(set) var notifications: [String: Date] = [:]
    /// The support audit's head as the ledger last recorded it, or `nil` when it never recorded one.
    package private(set) var auditHead: AuditHead?
    /// Counts kept current on every write (`users` is computed on read, from `ownedEntriesByUser`).
    private var counts = LedgerStatistics(
        transactions: 0,
        delivered: 0,
        pendingRetries: 0,
        deadLetters: 0,
        revoked: 0,
        users: 0
    )

    /// An empty ledger.
    package init() {}

    /// How to take back one mutation.
    package enum Undo: Sendable {
        /// Remove the last inserted entry.
        case insert
        /// Put back the entry as it was.
        case replace(previous: LedgerEntry)
        /// Remove a binding (by lowercased token).
        case bind(token: String)
        /// Put back the renewal info that was stored before (or none).
        case renewal(originalTransactionId: String, previous: RenewalInfoPayload?)
        /// Forget a processed notification.
        case notification(uuid: String)
        /// Put back the support audit's head that was recorded before (or none).
        case auditHead(previous: AuditHead?)
    }

    /// The head of the ledger's support audit: how many entries, and the last one's SHA-256 (lowercase hexadecimal).
    package struct AuditHead: Sendable, Hashable, Codable {
        package var entries: Int
        package var lastHash: String

        package init(entries: Int, lastHash: String) {
            self.entries = entries
            self.lastHash = lastHash
        }
    }

    /// The sequence of the last insert (0 when empty).
    package var lastSequence: Int64 { Int64(entries.count) }

    // MARK: Reads

    /// The entry for a transaction id, or `nil`.
    package func entry(transactionId: String) -> LedgerEntry? {
        positionById[transactionId].map { entries[$0] }
    }

    /// Every entry of a purchase family, by ascending sequence.
    package func entries(originalTransactionId: String) -> [LedgerEntry] {
        (positionsByOriginal[originalTransactionId]?.list ?? []).map { entries[$0] }
    }

    /// Every entry whose transaction carries an app transaction id, by ascending sequence.
    package func entries(appTransactionId: String) -> [LedgerEntry] {
        (positionsByAppTransaction[appTransactionId]?.list ?? []).map { entries[$0] }
    }

    /// Up to `limit` of a user's entries with a sequence below `before` (all when `nil`), newest first,
    /// and whether older ones remain.
    package func history(userId: String, before: Int64?, limit: Int) -> (entries: [LedgerEntry], more: Bool) {
        let positions = positionsByUser[UserKey(userId)] ?? []
        var end = positions.endIndex
        if let before {
            // Positions are sequence - 1: the first position at or above `before - 1` ends the page.
            end = Self.firstIndex(in: positions, atLeast: Int(clamping: before - 1))
        }
        let start = max(positions.startIndex, end - limit)
        return (positions[start..<end].reversed().map { entries[$0] }, start > positions.startIndex)
    }

    /// Due entries at `instant`, by `nextAttemptAt` (`nil` first) then sequence.
    package func dueDeliveries(at instant: Date, limit: Int) -> [LedgerEntry] {
        let due = undelivered.sorted().map { entries[$0] }.filter { Self.isDue($0, at: instant) }
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

    /// Up to `limit` entries parked for an unknown product, by sequence.
    package func parkedEntries(limit: Int) -> [LedgerEntry] {
        Array(parked.sorted().prefix(max(0, limit)).map { entries[$0] })
    }

    /// The position of the first entry of a purchase family, or `nil` when the ledger has none.
    package func firstPosition(ofFamily originalTransactionId: String) -> Int? {
        switch positionsByOriginal[originalTransactionId] {
        case .one(let position): position
        case .many(let positions): positions.first
        case nil: nil
        }
    }

    /// The user a token is bound to, or `nil`.
    package func user(forAppAccountToken token: String) -> String? {
        bindings[token.lowercased()]
    }

    /// Counts over the whole ledger.
    package var statistics: LedgerStatistics {
        var statistics = counts
        statistics.users = ownedEntriesByUser.count
        return statistics
    }

    // MARK: Mutations

    /// Makes room for `count` entries, so that loading a large ledger grows its storage once.
    package mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
        positionById.reserveCapacity(count)
    }

    /// Appends an entry whose `sequence` is ``lastSequence`` + 1 and whose id is new.
    ///
    /// Takes the entry over: a caller that passes its last use moves it in without copying its fields.
    ///
    /// - Returns: `nil` if the entry does not fit (a taken id or a sequence out of order).
    package mutating func insert(_ entry: consuming LedgerEntry) -> Undo? {
        guard entry.sequence == lastSequence + 1 else {
            return nil
        }
        let position = entries.count
        // One lookup of the id: a taken one is put back as it was.
        if let taken = positionById.updateValue(position, forKey: entry.transactionId) {
            positionById[entry.transactionId] = taken
            return nil
        }
        positionsByUser[UserKey(entry.userId), default: []].append(position)
        Self.add(position, to: &positionsByOriginal, under: entry.originalTransactionId)
        if let appTransactionId = entry.transaction.appTransactionId {
            Self.add(position, to: &positionsByAppTransaction, under: appTransactionId)
        }
        counts.transactions += 1
        index(entry, at: position, by: 1)
        entries.append(consume entry)
        return .insert
    }

    /// Replaces a stored entry with a new state of it (same id, sequence and recordedAt).
    ///
    /// - Returns: `nil` if no entry with that id, sequence and recordedAt exists.
    package mutating func replace(with entry: LedgerEntry) -> Undo? {
        guard let position = positionById[entry.transactionId] else {
            return nil
        }
        let previous = entries[position]
        guard previous.sequence == entry.sequence, previous.recordedAt == entry.recordedAt else {
            return nil
        }
        put(entry, at: position, replacing: previous)
        return .replace(previous: previous)
    }

    /// Binds a lowercased token that is not bound yet.
    package mutating func bind(token: String, to userId: String) -> Undo? {
        guard bindings[token] == nil else {
            return nil
        }
        bindings[token] = userId
        return .bind(token: token)
    }

    /// Stores a renewal info under its original transaction id, whatever was there.
    package mutating func storeRenewalInfo(_ info: RenewalInfoPayload, for originalTransactionId: String) -> Undo {
        let previous = renewalInfos.updateValue(info, forKey: originalTransactionId)
        return .renewal(originalTransactionId: originalTransactionId, previous: previous)
    }

    /// Records a notification UUID that is not recorded yet.
    package mutating func markNotification(_ uuid: String, at instant: Date) -> Undo? {
        guard notifications[uuid] == nil else {
            return nil
        }
        notifications[uuid] = instant
        return .notification(uuid: uuid)
    }

    /// Records the support audit's head, whatever was recorded before.
    package mutating func recordAuditHead(_ head: AuditHead) -> Undo {
        defer { auditHead = head }
        return .auditHead(previous: auditHead)
    }

    /// Takes back one mutation; undos must be applied newest first.
    package mutating func undo(_ undo: Undo) {
        switch undo {
        case .insert:
            guard let entry = entries.last else {
                return
            }
            let position = entries.count - 1
            index(entry, at: position, by: -1)
            counts.transactions -= 1
            Self.remove(position, from: &positionsByUser, under: UserKey(entry.userId))
            Self.remove(position, from: &positionsByOriginal, under: entry.originalTransactionId)
            if let appTransactionId = entry.transaction.appTransactionId {
                Self.remove(position, from: &positionsByAppTransaction, under: appTransactionId)
            }
            positionById[entry.transactionId] = nil
            entries.removeLast()
        case .replace(let previous):
            guard let position = positionById[previous.transactionId] else {
                return
            }
            put(previous, at: position, replacing: entries[position])
        case .bind(let token):
            bindings[token] = nil
        case .renewal(let originalTransactionId, let previous):
            renewalInfos[originalTransactionId] = previous
        case .notification(let uuid):
            notifications[uuid] = nil
        case .auditHead(let previous):
            auditHead = previous
        }
    }

    // MARK: Internals

    private mutating func put(_ entry: LedgerEntry, at position: Int, replacing previous: LedgerEntry) {
        index(previous, at: position, by: -1)
        entries[position] = entry
        if !entry.userId.isSameUser(as: previous.userId) {
            Self.remove(position, from: &positionsByUser, under: UserKey(previous.userId))
            Self.add(position, to: &positionsByUser, under: UserKey(entry.userId))
        }
        if entry.originalTransactionId != previous.originalTransactionId {
            Self.remove(position, from: &positionsByOriginal, under: previous.originalTransactionId)
            Self.add(position, to: &positionsByOriginal, under: entry.originalTransactionId)
        }
        let appTransactionId = entry.transaction.appTransactionId
        if appTransactionId != previous.transaction.appTransactionId {
            if let earlier = previous.transaction.appTransactionId {
                Self.remove(position, from: &positionsByAppTransaction, under: earlier)
            }
            if let appTransactionId {
                Self.add(position, to: &positionsByAppTransaction, under: appTransactionId)
            }
        }
        index(entry, at: position, by: 1)
    }

    /// Adds (`delta` 1) or removes (`delta` -1) an entry's contribution to the counts and the due index.
    private mutating func index(_ entry: LedgerEntry, at position: Int, by delta: Int) {
        switch entry.deliveryState {
        case .delivered:
            counts.delivered += delta
        case .retrying:
            counts.pendingRetries += delta
        case .deadLettered where entry.givenUpAt != nil:
            counts.givenUp += delta
        case .deadLettered:
            counts.deadLetters += delta
        case .unknownProduct:
            counts.unknownProduct += delta
            if delta > 0 {
                parked.insert(position)
            } else {
                parked.remove(position)
            }
        case .pending, .awaitingOwner:
            break
        }
        if entry.revokedAt != nil {
            counts.revoked += delta
        }
        if let owner = entry.owner {
            let owned = (ownedEntriesByUser[UserKey(owner)] ?? 0) + delta
            ownedEntriesByUser[UserKey(owner)] = owned > 0 ? owned : nil
        }
        if let environment = entry.transaction.environment?.rawValue {
            if delta > 0 {
                counts.environments[environment, default: 0] += delta
            } else {
                let count = (counts.environments[environment] ?? 0) + delta
                counts.environments[environment] = count > 0 ? count : nil
            }
        }
        switch entry.deliveryState {
        case .pending, .retrying:
            if delta > 0 {
                undelivered.insert(position)
            } else {
                undelivered.remove(position)
            }
        case .delivered, .deadLettered, .awaitingOwner, .unknownProduct:
            break
        }
    }

    /// Whether an undelivered entry is due at `instant`.
    private static func isDue(_ entry: LedgerEntry, at instant: Date) -> Bool {
        switch entry.deliveryState {
        case .retrying, .pending:
            // A retry without a time is due at once rather than stranded; a pending entry without a claim
            // was never taken.
            guard let next = entry.nextAttemptAt else {
                return true
            }
            return next <= instant
        case .delivered, .deadLettered, .awaitingOwner, .unknownProduct:
            return false
        }
    }

    /// Positions of one purchase family: most families hold one transaction, kept inline without an array.
    private enum Positions: Sendable {
        case one(Int)
        case many([Int])

        var list: [Int] {
            switch self {
            case .one(let position): [position]
            case .many(let positions): positions
            }
        }
    }

    private static func add(_ position: Int, to index: inout [String: Positions], under key: String) {
        // One lookup of the key: a new one starts as an empty list (never stored otherwise), changed in place.
        insert(position, into: &index[key, default: .many([])])
    }

    private static func insert(_ position: Int, into positions: inout Positions) {
        var list: [Int]
        switch positions {
        case .one(let only):
            list = [only]
        case .many(let existing):
            guard !existing.isEmpty else {
                positions = .one(position)
                return
            }
            list = existing
        }
        // Let go of the stored list first, so that the insertion changes it without a copy.
        positions = .one(position)
        list.insert(position, at: firstIndex(in: list, atLeast: position))
        positions = .many(list)
    }

    private static func remove(_ position: Int, from index: inout [String: Positions], under key: String) {
        guard let existing = index.removeValue(forKey: key) else {
            return
        }
        var positions = existing.list
        let found = firstIndex(in: positions, atLeast: position)
        if found < positions.endIndex, positions[found] == position {
            positions.remove(at: found)
        }
        switch positions.count {
        case 0: break
        case 1: index[key] = .one(positions[0])
        default: index[key] = .many(positions)
        }
    }

    /// Inserts `position` into the sorted list under `key`.
    private static func add<Key: Hashable>(_ position: Int, to index: inout [Key: [Int]], under key: Key) {
        var positions = index.removeValue(forKey: key) ?? []
        if let last = positions.last, last > position {
            positions.insert(position, at: firstIndex(in: positions, atLeast: position))
        } else {
            positions.append(position)
        }
        index[key] = positions
    }

    /// Removes `position` from the sorted list under `key`, dropping the list when it becomes empty.
    private static func remove<Key: Hashable>(_ position: Int, from index: inout [Key: [Int]], under key: Key) {
        guard var positions = index.removeValue(forKey: key) else {
            return
        }
        let found = firstIndex(in: positions, atLeast: position)
        if found < positions.endIndex, positions[found] == position {
            positions.remove(at: found)
        }
        if !positions.isEmpty {
            index[key] = positions
        }
    }

    /// The index of the first element that is at least `value` (binary search).
    private static func firstIndex(in positions: [Int], atLeast value: Int) -> Int {
        var low = positions.startIndex
        var high = positions.endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if positions[middle] < value {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }
}
