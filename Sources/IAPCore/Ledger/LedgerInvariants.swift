/// The invariants every ledger keeps beyond its store's own checksums, checked on a whole ledger: what
/// `iap ledger check` reports.
///
/// ``check(_:)`` reads every entry and asks the store's indexes and statistics about them:
/// - one entry per transaction id, with a unique sequence of 1 or more and a revision of 1 or more, holding the
///   payload of its own transaction;
/// - a delivered entry was granted (or revoked), a revoked and settled one was taken back, one waiting for a retry
///   has the time of it;
/// - each user's history lists exactly that user's entries, newest first, and each original transaction id finds
///   exactly its family;
/// - ``EntitlementStore/statistics()`` counts what the entries count.
///
/// ```swift
/// let problems = try await LedgerInvariants.check(store)
/// for problem in problems {
///     print("storageCorrupted: \(problem)")
/// }
/// ```
public enum LedgerInvariants {
    /// Every broken invariant of a ledger, in words.
    ///
    /// - Parameter store: The ledger; it is only read.
    /// - Returns: One sentence per broken invariant, such as "transaction 42 is recorded twice"; empty when the
    ///   ledger is sound.
    /// - Throws: ``IAPError`` when the store cannot be read.
    public static func check(_ store: some ListableEntitlementStore) async throws -> [String] {
        let entries = try await store.allEntries()
        var problems = entryProblems(entries)
        problems += try await indexProblems(entries, store)
        let statistics = try await store.statistics()
        let expected = expectedStatistics(entries)
        if statistics != expected {
            problems.append("the statistics say \(statistics) but the entries count \(expected)")
        }
        return problems
    }

    /// The user ids of a ledger that differ in their bytes but are canonically equivalent in Unicode (an NFC and an
    /// NFD spelling of one name, `K` and KELVIN SIGN): two users, as the ledger compares user ids by their bytes, that
    /// versions comparing them as Swift strings treated as one. `iap ledger check` names them, for a person to look
    /// at their purchases and token bindings.
    ///
    /// - Parameter store: The ledger; it is only read.
    /// - Returns: Each group of such ids (two or more, each as stored), in a stable order; empty when there is none.
    /// - Throws: ``IAPError`` when the store cannot be read.
    public static func equivalentUserIds(_ store: some ListableEntitlementStore) async throws -> [[String]] {
        var byCanonical: [String: Set<UserKey>] = [:]
        try await store.forEachPage { page in
            for entry in page {
                byCanonical[entry.userId, default: []].insert(UserKey(entry.userId))
            }
        }
        return byCanonical.values.filter { $0.count > 1 }
            .map { group in group.map(\.id).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) } }
            .sorted { Array($0[0].utf8).lexicographicallyPrecedes(Array($1[0].utf8)) }
    }

    /// The prorated refunds of non-consumables and subscriptions recorded before the ledger kept the decision on
    /// their access (``LedgerEntry/refundAccessKept``): the prorated-refund policy in force decides them, so a change
    /// of policy changes what their customers have. `iap ledger check` counts them.
    ///
    /// - Parameter store: The ledger; it is only read.
    /// - Returns: Their transaction ids, by sequence.
    /// - Throws: ``IAPError`` when the store cannot be read.
    public static func undecidedProratedRefunds(_ store: some ListableEntitlementStore) async throws -> [String] {
        var found: [String] = []
        try await store.forEachPage { page in
            found += page.lazy
                .filter {
                    $0.revokedAt != nil && $0.refundAccessKept == nil && $0.transaction.isPartlyRefunded
                        && $0.transaction.type != .consumable
                }
                .map(\.transactionId)
        }
        return found
    }

    /// What is wrong with the entries themselves.
    private static func entryProblems(_ entries: [LedgerEntry]) -> [String] {
        var problems: [String] = []
        var byId: [String: LedgerEntry] = [:]
        var sequences: Set<Int64> = []
        for entry in entries {
            if byId.updateValue(entry, forKey: entry.transactionId) != nil {
                problems.append("transaction \(entry.transactionId) is recorded twice")
            }
            if !sequences.insert(entry.sequence).inserted || entry.sequence < 1 {
                problems.append(
                    "transaction \(entry.transactionId) has a duplicate or invalid sequence \(entry.sequence)"
                )
            }
            if entry.revision < 1 {
                problems.append("transaction \(entry.transactionId) has an invalid revision \(entry.revision)")
            }
            if entry.transaction.transactionId != entry.transactionId {
                problems.append("transaction \(entry.transactionId) holds the payload of another transaction")
            }
            if entry.deliveryState == .delivered, entry.deliveredAt == nil, entry.revokedAt == nil {
                problems.append("transaction \(entry.transactionId) is marked delivered but was never granted")
            }
            if entry.deliveryState == .delivered, entry.revokedAt != nil, entry.deliveredAt != nil,
                !entry.revocationDelivered
            {
                problems.append("transaction \(entry.transactionId) is revoked and settled, but was never taken back")
            }
            if entry.refundAccessKept != nil, entry.revokedAt == nil {
                problems.append(
                    "transaction \(entry.transactionId) records a decision on a prorated refund it does not have"
                )
            }
            if entry.deliveryState == .retrying, entry.nextAttemptAt == nil {
                problems.append("transaction \(entry.transactionId) waits for a retry that has no time")
            }
        }
        return problems
    }

    /// Whether the indexes find every entry exactly once.
    private static func indexProblems(
        _ entries: [LedgerEntry],
        _ store: some ListableEntitlementStore
    ) async throws -> [String] {
        var problems: [String] = []
        for (key, own) in Dictionary(grouping: entries, by: { UserKey($0.userId) }) {
            let user = key.id
            let listed = try await store.allHistory(userId: user)
            if listed.map(\.transactionId).sorted() != own.map(\.transactionId).sorted() {
                problems.append(
                    "the history of user \(user) lists \(listed.count) entries, the ledger holds \(own.count)"
                )
            }
            if listed.map(\.sequence) != listed.map(\.sequence).sorted(by: >) {
                problems.append("the history of user \(user) is not newest first")
            }
        }
        for (original, family) in Dictionary(grouping: entries, by: \.originalTransactionId) {
            let listed = try await store.entries(originalTransactionId: original)
            if Set(listed.map(\.transactionId)) != Set(family.map(\.transactionId)) {
                problems.append(
                    "original transaction \(original) lists \(listed.count) entries, the ledger holds \(family.count)"
                )
            }
        }
        return problems
    }

    /// The statistics the entries call for.
    private static func expectedStatistics(_ entries: [LedgerEntry]) -> LedgerStatistics {
        LedgerStatistics(
            transactions: entries.count,
            delivered: entries.filter { $0.deliveryState == .delivered }.count,
            pendingRetries: entries.filter { $0.deliveryState == .retrying }.count,
            deadLetters: entries.filter { $0.deliveryState == .deadLettered && $0.givenUpAt == nil }.count,
            revoked: entries.filter { $0.revokedAt != nil }.count,
            // Users are the real owners (LedgerEntry.owner), as the stores count them.
            users: Set(entries.compactMap(\.owner).map(UserKey.init)).count,
            environments: entries.reduce(into: [:]) { counts, entry in
                if let environment = entry.environment {
                    counts[environment.rawValue, default: 0] += 1
                }
            },
            unknownProduct: entries.filter { $0.deliveryState == .unknownProduct }.count,
            givenUp: entries.filter { $0.deliveryState == .deadLettered && $0.givenUpAt != nil }.count
        )
    }
}
