#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// The whole ledger in memory, with its indexes and the contract's rules: what `InMemoryEntitlementStore` and
/// `FileEntitlementStore` both answer from, so the two backends share one implementation of the contract.
///
/// It is a value type, so a copy for a snapshot is free until the store writes again. Entries live once, packed
/// (``PackedEntry``: pooled strings, numeric ids, 8-byte dates; about a quarter of an entry's size), at
/// `sequence - 1` (sequences start at 1 and grow by 1 per insert, and entries are never removed); every index
/// holds positions into that array, never a second copy of an entry. Reads unpack the entries they return.
///
/// Mutations are split in two steps so that a write can be undone when its journal record fails to reach
/// the disk: each mutating method returns the ``Undo`` that restores the state before it.
package struct LedgerState: Sendable {
    /// Every entry, packed, at `sequence - 1`.
    private var packed: [PackedEntry] = []
    /// The strings entries share (products, bundle ids, storefronts, tokens, text transaction ids, …).
    private var pool = StringPool()
    /// The user ids.
    private var users = StringPool()
    /// Transaction id → position in ``packed``.
    private var positionById: [PackedID: UInt32] = [:]
    /// User (by its number in ``users``) → positions of the user's entries, ascending (that is, by sequence).
    private var positionsByUser: [[UInt32]] = [[]]
    /// Original transaction id → positions of the family's entries, ascending.
    private var positionsByOriginal: [PackedID: Positions] = [:]
    /// App transaction id (an Apple Account's, per app; by its number in ``pool``) → positions of the entries whose
    /// transaction carries it, ascending.
    private var positionsByAppTransaction: [UInt32: Positions] = [:]
    /// Positions of `pending` and `retrying` entries: the only ones that can be due.
    private var undelivered: Set<UInt32> = []
    /// User (by its number in ``users``) → how many of the user's entries have a real owner (not one waiting for its
    /// owner, not `unowned:<id>`); and how many users have at least one: what ``statistics`` counts.
    private var ownedEntriesByUser: [UInt32] = [0]
    private var owners = 0
    /// Positions of `unknownProduct` entries: parked until the catalog names their product.
    private var parked: Set<UInt32> = []
    /// appAccountToken (lowercased) → user id.
    package private(set) var bindings: [String: String] = [:]
    /// The latest renewal info per original transaction id.
    package private(set) var renewalInfos: [String: RenewalInfoPayload] = [:]
    /// Processed notification UUIDs and when they were processed.
    package private(set) var notifications: [String: Date] = [:]
    /// The support audit's head as the ledger last recorded it, or `nil` when it never recorded one.
    package private(set) var auditHead: AuditHead?
    /// Counts kept current on every write (`users` is computed on read).
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
    package var lastSequence: Int64 { Int64(packed.count) }

    /// Every entry, by ascending sequence, unpacked as it is read.
    package var entries: Entries { Entries(state: self) }

    /// The entries of a ledger state, by position (`sequence - 1`), each unpacked when read.
    package struct Entries: RandomAccessCollection, Sendable {
        fileprivate let state: LedgerState

        package var startIndex: Int { 0 }
        package var endIndex: Int { state.packed.count }

        package subscript(position: Int) -> LedgerEntry {
            state.entry(at: position)
        }
    }

    // MARK: Reads

    /// The entry at a position (`sequence - 1`).
    private func entry(at position: Int) -> LedgerEntry {
        packed[position].unpacked(sequence: Int64(position) + 1, pool: pool, users: users)
    }

    private func entry(at position: UInt32) -> LedgerEntry {
        entry(at: Int(position))
    }

    /// The entry's transaction id at a position, without unpacking the rest.
    package func transactionId(at position: Int) -> String {
        packed[position].transactionId.unpacked(pool) ?? ""
    }

    /// The position of a transaction id, or `nil`.
    private func position(of transactionId: String) -> UInt32? {
        PackedID.existing(transactionId, in: pool).flatMap { positionById[$0] }
    }

    /// The entry for a transaction id, or `nil`.
    package func entry(transactionId: String) -> LedgerEntry? {
        position(of: transactionId).map { entry(at: $0) }
    }

    /// Every entry of a purchase family, by ascending sequence.
    package func entries(originalTransactionId: String) -> [LedgerEntry] {
        let positions = PackedID.existing(originalTransactionId, in: pool).flatMap { positionsByOriginal[$0] }
        return (positions?.list ?? []).map { entry(at: $0) }
    }

    /// Every entry whose transaction carries an app transaction id, by ascending sequence.
    package func entries(appTransactionId: String) -> [LedgerEntry] {
        let positions = pool.number(of: appTransactionId).flatMap { positionsByAppTransaction[$0] }
        return (positions?.list ?? []).map { entry(at: $0) }
    }

    /// Up to `limit` of a user's entries with a sequence below `before` (all when `nil`), newest first,
    /// and whether older ones remain.
    package func history(userId: String, before: Int64?, limit: Int) -> (entries: [LedgerEntry], more: Bool) {
        let positions = users.number(of: userId).map { positionsByUser[Int($0)] } ?? []
        var end = positions.endIndex
        if let before {
            // Positions are sequence - 1: the first position at or above `before - 1` ends the page.
            end = Self.firstIndex(in: positions, atLeast: UInt32(clamping: before - 1))
        }
        let start = max(positions.startIndex, end - limit)
        return (positions[start..<end].reversed().map { entry(at: $0) }, start > positions.startIndex)
    }

    /// Due entries at `instant`, by `nextAttemptAt` (`nil` first) then sequence.
    package func dueDeliveries(at instant: Date, limit: Int) -> [LedgerEntry] {
        let due = undelivered.sorted().map { entry(at: $0) }.filter { Self.isDue($0, at: instant) }
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

    /// The claimed entries at `instant`, from the index of undelivered entries (the only ones that can be claimed).
    package func claims(at instant: Date) -> ClaimCounts {
        var counts = ClaimCounts()
        for position in undelivered {
            counts.count(entry(at: position), at: instant)
        }
        return counts
    }

    /// Up to `limit` entries parked for an unknown product, by sequence.
    package func parkedEntries(limit: Int) -> [LedgerEntry] {
        Array(parked.sorted().prefix(max(0, limit)).map { entry(at: $0) })
    }

    /// The position of the first entry of a purchase family, or `nil` when the ledger has none.
    package func firstPosition(ofFamily originalTransactionId: String) -> Int? {
        PackedID.existing(originalTransactionId, in: pool).flatMap { firstPosition(ofFamily: $0) }
    }

    private func firstPosition(ofFamily original: PackedID) -> Int? {
        switch positionsByOriginal[original] {
        case .one(let position): Int(position)
        case .many(let positions): positions.first.map(Int.init)
        case nil: nil
        }
    }

    /// The original transaction id of the entry at `position` if that entry is its family's first, else `nil`:
    /// what a page of families reads, without unpacking the entries.
    package func familyStart(at position: Int) -> String? {
        let original = packed[position].originalTransactionId
        guard firstPosition(ofFamily: original) == position else {
            return nil
        }
        return original.unpacked(pool)
    }

    /// The user a token is bound to, or `nil`.
    package func user(forAppAccountToken token: String) -> String? {
        bindings[token.lowercased()]
    }

    /// Counts over the whole ledger.
    package var statistics: LedgerStatistics {
        var statistics = counts
        statistics.users = owners
        return statistics
    }

    // MARK: Mutations

    /// Makes room for `count` entries, so that loading a large ledger grows its storage once.
    package mutating func reserveCapacity(_ count: Int) {
        packed.reserveCapacity(count)
        positionById.reserveCapacity(count)
        positionsByOriginal.reserveCapacity(count)
    }

    /// Appends an entry whose `sequence` is ``lastSequence`` + 1 and whose id is new.
    ///
    /// - Returns: `nil` if the entry does not fit (a taken id or a sequence out of order).
    package mutating func insert(_ entry: LedgerEntry) -> Undo? {
        guard entry.sequence == lastSequence + 1, packed.count < Int(UInt32.max) else {
            return nil
        }
        let position = UInt32(packed.count)
        let record = PackedEntry(entry, pool: &pool, users: &users)
        // One lookup of the id: a taken one is put back as it was.
        if let taken = positionById.updateValue(position, forKey: record.transactionId) {
            positionById[record.transactionId] = taken
            return nil
        }
        growUsers(to: record.userId)
        Self.add(position, to: &positionsByUser[Int(record.userId)])
        Self.add(position, to: &positionsByOriginal, under: record.originalTransactionId)
        if record.appTransactionId != 0 {
            Self.add(position, to: &positionsByAppTransaction, under: record.appTransactionId)
        }
        counts.transactions += 1
        index(entry, user: record.userId, at: position, by: 1)
        packed.append(record)
        return .insert
    }

    /// Replaces a stored entry with a new state of it (same id, sequence and recordedAt).
    ///
    /// - Returns: `nil` if no entry with that id, sequence and recordedAt exists.
    package mutating func replace(with entry: LedgerEntry) -> Undo? {
        guard let position = position(of: entry.transactionId) else {
            return nil
        }
        let previous = self.entry(at: position)
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
            guard let record = packed.last else {
                return
            }
            let position = UInt32(packed.count - 1)
            index(entry(at: position), user: record.userId, at: position, by: -1)
            counts.transactions -= 1
            Self.remove(position, from: &positionsByUser[Int(record.userId)])
            Self.remove(position, from: &positionsByOriginal, under: record.originalTransactionId)
            if record.appTransactionId != 0 {
                Self.remove(position, from: &positionsByAppTransaction, under: record.appTransactionId)
            }
            positionById[record.transactionId] = nil
            packed.removeLast()
        case .replace(let previous):
            guard let position = position(of: previous.transactionId) else {
                return
            }
            put(previous, at: position, replacing: entry(at: position))
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

    private mutating func put(_ entry: LedgerEntry, at position: UInt32, replacing previous: LedgerEntry) {
        let old = packed[Int(position)]
        let record = PackedEntry(entry, pool: &pool, users: &users)
        index(previous, user: old.userId, at: position, by: -1)
        packed[Int(position)] = record
        if record.userId != old.userId {
            growUsers(to: record.userId)
            Self.remove(position, from: &positionsByUser[Int(old.userId)])
            Self.add(position, to: &positionsByUser[Int(record.userId)])
        }
        if record.originalTransactionId != old.originalTransactionId {
            Self.remove(position, from: &positionsByOriginal, under: old.originalTransactionId)
            Self.add(position, to: &positionsByOriginal, under: record.originalTransactionId)
        }
        if record.appTransactionId != old.appTransactionId {
            if old.appTransactionId != 0 {
                Self.remove(position, from: &positionsByAppTransaction, under: old.appTransactionId)
            }
            if record.appTransactionId != 0 {
                Self.add(position, to: &positionsByAppTransaction, under: record.appTransactionId)
            }
        }
        index(entry, user: record.userId, at: position, by: 1)
    }

    /// Makes the per-user indexes long enough for a user's number.
    private mutating func growUsers(to user: UInt32) {
        while positionsByUser.count <= Int(user) {
            positionsByUser.append([])
            ownedEntriesByUser.append(0)
        }
    }

    /// Adds (`delta` 1) or removes (`delta` -1) an entry's contribution to the counts and the due index; `user` is
    /// the number of its user id.
    private mutating func index(_ entry: LedgerEntry, user: UInt32, at position: UInt32, by delta: Int) {
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
        if entry.owner != nil {
            // The owner is the entry's user id.
            let before = ownedEntriesByUser[Int(user)]
            let after = UInt32(Int(before) + delta)
            ownedEntriesByUser[Int(user)] = after
            if before == 0 && after > 0 {
                owners += 1
            } else if before > 0 && after == 0 {
                owners -= 1
            }
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
        case one(UInt32)
        case many([UInt32])

        var list: [UInt32] {
            switch self {
            case .one(let position): [position]
            case .many(let positions): positions
            }
        }
    }

    private static func add<Key: Hashable>(_ position: UInt32, to index: inout [Key: Positions], under key: Key) {
        // One lookup of the key: a new one starts as an empty list (never stored otherwise), changed in place.
        insert(position, into: &index[key, default: .many([])])
    }

    private static func insert(_ position: UInt32, into positions: inout Positions) {
        var list: [UInt32]
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
        add(position, to: &list)
        positions = .many(list)
    }

    private static func remove<Key: Hashable>(_ position: UInt32, from index: inout [Key: Positions], under key: Key) {
        guard let existing = index.removeValue(forKey: key) else {
            return
        }
        var positions = existing.list
        remove(position, from: &positions)
        switch positions.count {
        case 0: break
        case 1: index[key] = .one(positions[0])
        default: index[key] = .many(positions)
        }
    }

    /// Inserts `position` into a sorted list.
    private static func add(_ position: UInt32, to positions: inout [UInt32]) {
        if let last = positions.last, last > position {
            positions.insert(position, at: firstIndex(in: positions, atLeast: position))
        } else {
            positions.append(position)
        }
    }

    /// Removes `position` from a sorted list.
    private static func remove(_ position: UInt32, from positions: inout [UInt32]) {
        let found = firstIndex(in: positions, atLeast: position)
        if found < positions.endIndex, positions[found] == position {
            positions.remove(at: found)
        }
    }

    /// The index of the first element that is at least `value` (binary search).
    private static func firstIndex(in positions: [UInt32], atLeast value: UInt32) -> Int {
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
