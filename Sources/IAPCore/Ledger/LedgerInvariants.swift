/// The invariants every ledger keeps beyond its store's own checksums, checked on a whole ledger: what
/// `iap ledger check` reports.
///
/// ``check(_:)`` walks the ledger a page at a time (memory for one page and a few bytes per user, whatever the
/// ledger's size), asks the store whether its lookups find every entry exactly once
/// (``ListableEntitlementStore/indexProblems()``) and compares its statistics with what the entries count:
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
    /// What one walk over a ledger finds: what ``check(_:)``, ``equivalentUserIds(_:)`` and
    /// ``undecidedProratedRefunds(_:)`` return, in one pass (`iap ledger check` runs it).
    public struct Findings: Sendable, Equatable {
        /// One sentence per broken invariant.
        public var problems: [String] = []
        /// Groups of user ids that differ in their bytes but are canonically equivalent.
        public var equivalentUserIds: [[String]] = []
        /// Prorated refunds recorded before the ledger kept the decision on their access.
        public var undecidedProratedRefunds: [String] = []
    }

    /// Every broken invariant of a ledger, in words.
    ///
    /// - Parameter store: The ledger; it is only read.
    /// - Returns: One sentence per broken invariant, such as "transaction 42 is recorded twice"; empty when the
    ///   ledger is sound.
    /// - Throws: ``IAPError`` when the store cannot be read.
    public static func check(_ store: some ListableEntitlementStore) async throws -> [String] {
        try await examine(store).problems
    }

    /// The invariants, the canonically equivalent user ids and the undecided prorated refunds of a ledger, from one
    /// walk a page at a time (two more only when two owners' ids may be canonically equivalent).
    ///
    /// The statistics are compared with what the entries count only when they did not change during the walk: a
    /// ledger written to while it is checked (by a running server) is not taken for a corrupted one.
    ///
    /// - Parameter store: The ledger; it is only read.
    /// - Returns: What the walk found.
    /// - Throws: ``IAPError`` when the store cannot be read.
    public static func examine(_ store: some ListableEntitlementStore) async throws -> Findings {
        let before = try await store.statistics()
        var walk = Walk()
        try await store.forEachPage { page in
            for entry in page {
                walk.add(entry)
            }
        }
        var findings = Findings()
        findings.problems = walk.problems
        findings.problems += try await store.indexProblems()
        let after = try await store.statistics()
        if before == after, after != walk.statistics {
            findings.problems.append("the statistics say \(after) but the entries count \(walk.statistics)")
        }
        if walk.equivalence.mayHaveEquivalents {
            findings.equivalentUserIds = try await equivalentGroups(store)
        }
        findings.undecidedProratedRefunds = walk.undecided
        return findings
    }

    /// The user ids of a ledger's owners (``LedgerEntry/owner``) that differ in their bytes but are canonically
    /// equivalent in Unicode (an NFC and an NFD spelling of one name, `K` and KELVIN SIGN): two users, as the ledger compares user ids by their bytes, that
    /// versions comparing them as Swift strings treated as one. `iap ledger check` names them, for a person to look
    /// at their purchases and token bindings.
    ///
    /// - Parameter store: The ledger; it is only read.
    /// - Returns: Each group of such ids (two or more, each as stored), in a stable order; empty when there is none.
    /// - Throws: ``IAPError`` when the store cannot be read.
    public static func equivalentUserIds(_ store: some ListableEntitlementStore) async throws -> [[String]] {
        var equivalence = Equivalence()
        try await store.forEachPage { page in
            for owner in page.lazy.compactMap(\.owner) {
                equivalence.add(owner)
            }
        }
        return equivalence.mayHaveEquivalents ? try await equivalentGroups(store) : []
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
            found += page.lazy.filter(isUndecidedProratedRefund).map(\.transactionId)
        }
        return found
    }

    static func isUndecidedProratedRefund(_ entry: LedgerEntry) -> Bool {
        entry.revokedAt != nil && entry.refundAccessKept == nil && entry.transaction.isPartlyRefunded
            && entry.transaction.type != .consumable
    }

    /// What a walk over the entries keeps: the problems found so far, the counts the statistics should show, and a
    /// hash of each user, never the entries.
    struct Walk {
        var problems: [String] = []
        var lastSequence: Int64 = 0
        var transactions = 0
        var delivered = 0
        var pendingRetries = 0
        var deadLetters = 0
        var revoked = 0
        var unknownProduct = 0
        var givenUp = 0
        var environments: [String: Int] = [:]
        /// The owners, by hashes: a few bytes per user.
        var equivalence = Equivalence()
        var undecided: [String] = []

        mutating func add(_ entry: LedgerEntry) {
            let id = entry.transactionId
            if entry.sequence < 1 || entry.sequence <= lastSequence {
                problems.append("transaction \(id) has a duplicate or invalid sequence \(entry.sequence)")
            }
            lastSequence = max(lastSequence, entry.sequence)
            if entry.revision < 1 {
                problems.append("transaction \(id) has an invalid revision \(entry.revision)")
            }
            if entry.transaction.transactionId != id {
                problems.append("transaction \(id) holds the payload of another transaction")
            }
            if entry.deliveryState == .delivered, entry.deliveredAt == nil, entry.revokedAt == nil {
                problems.append("transaction \(id) is marked delivered but was never granted")
            }
            if entry.deliveryState == .delivered, entry.revokedAt != nil, entry.deliveredAt != nil,
                !entry.revocationDelivered
            {
                problems.append("transaction \(id) is revoked and settled, but was never taken back")
            }
            if entry.refundAccessKept != nil, entry.revokedAt == nil {
                problems.append("transaction \(id) records a decision on a prorated refund it does not have")
            }
            if entry.deliveryState == .retrying, entry.nextAttemptAt == nil {
                problems.append("transaction \(id) waits for a retry that has no time")
            }
            count(entry)
            if isUndecidedProratedRefund(entry) {
                undecided.append(id)
            }
        }

        private mutating func count(_ entry: LedgerEntry) {
            transactions += 1
            switch entry.deliveryState {
            case .delivered: delivered += 1
            case .retrying: pendingRetries += 1
            case .deadLettered:
                if entry.givenUpAt == nil { deadLetters += 1 } else { givenUp += 1 }
            case .unknownProduct: unknownProduct += 1
            case .pending, .awaitingOwner: break
            }
            if entry.revokedAt != nil {
                revoked += 1
            }
            // Users are the real owners (LedgerEntry.owner), as the stores count them.
            if let owner = entry.owner {
                equivalence.add(owner)
            }
            if let environment = entry.environment {
                environments[environment.rawValue, default: 0] += 1
            }
        }

        /// The statistics the entries call for.
        var statistics: LedgerStatistics {
            LedgerStatistics(
                transactions: transactions,
                delivered: delivered,
                pendingRetries: pendingRetries,
                deadLetters: deadLetters,
                revoked: revoked,
                users: equivalence.users,
                environments: environments,
                unknownProduct: unknownProduct,
                givenUp: givenUp
            )
        }
    }

    /// The owners seen, by two hashes of each: of its bytes (how the ledger tells users apart) and of its canonical
    /// form (`String`'s own hash, which follows canonical equivalence); 8 bytes per user in each set. More byte hashes
    /// than canonical ones means two spellings of one canonical form may be among them, which ``equivalentGroups(_:)``
    /// confirms on the ids themselves. Two owners whose byte hashes collide (about one chance in 10^8 with a million
    /// users) would be counted as one, and the check would say the statistics differ: it errs towards a false alarm,
    /// never towards silence.
    struct Equivalence {
        private var bytes: Set<Int> = []
        private var canonical: Set<Int> = []

        mutating func add(_ userId: String) {
            bytes.insert(UserKey(userId).hashValue)
            canonical.insert(userId.hashValue)
        }

        /// The distinct owners.
        var users: Int { bytes.count }

        /// Whether two owners may differ in their bytes only.
        var mayHaveEquivalents: Bool { bytes.count > canonical.count }
    }

    /// The groups of canonically equivalent owner ids: a walk that finds the canonical hashes under which different
    /// bytes were seen, then one that compares the ids under those (so a hash collision is never reported). Only run
    /// when ``Equivalence/mayHaveEquivalents``; 16 bytes per user.
    private static func equivalentGroups(_ store: some ListableEntitlementStore) async throws -> [[String]] {
        var firstBytes: [Int: Int] = [:]
        var suspects: Set<Int> = []
        try await store.forEachPage { page in
            for owner in page.lazy.compactMap(\.owner) {
                let canonical = owner.hashValue
                let bytes = UserKey(owner).hashValue
                if let first = firstBytes[canonical] {
                    if first != bytes {
                        suspects.insert(canonical)
                    }
                } else {
                    firstBytes[canonical] = bytes
                }
            }
        }
        firstBytes = [:]
        guard !suspects.isEmpty else {
            return []
        }
        var byCanonical: [String: Set<UserKey>] = [:]
        try await store.forEachPage { page in
            for owner in page.lazy.compactMap(\.owner) where suspects.contains(owner.hashValue) {
                byCanonical[owner, default: []].insert(UserKey(owner))
            }
        }
        return byCanonical.values.filter { $0.count > 1 }
            .map { group in group.map(\.id).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) } }
            .sorted { Array($0[0].utf8).lexicographicallyPrecedes(Array($1[0].utf8)) }
    }
}
