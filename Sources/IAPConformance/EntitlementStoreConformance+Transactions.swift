#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension EntitlementStoreConformance {
    /// The checks of `insert`, `entry(transactionId:)` and `replace`.
    static let transactionChecks: [ConformanceCheck] = [
        ConformanceCheck(
            name: "insertStoresEntry",
            requirement: "insert returns .inserted with the entry as given plus revision 1 and a sequence, and "
                + "entry(transactionId:) reads back exactly that entry",
            body: insertStoresEntry
        ),
        ConformanceCheck(
            name: "insertIsIdempotent",
            requirement: "a second insert of a stored transaction id returns .existing with the stored entry and "
                + "changes nothing, even when the new entry differs",
            body: insertIsIdempotent
        ),
        ConformanceCheck(
            name: "concurrentInsertsOfOneTransactionId",
            requirement: "of 1,000 concurrent inserts of one transaction id exactly one returns .inserted; all "
                + "others return .existing with that entry",
            body: concurrentInsertsOfOneTransactionId
        ),
        ConformanceCheck(
            name: "concurrentInsertsOfDistinctIds",
            requirement: "200 concurrent inserts of distinct transaction ids all return .inserted and leave 200 "
                + "entries with unique sequences",
            body: concurrentInsertsOfDistinctIds
        ),
        ConformanceCheck(
            name: "sequenceIncreasesInInsertOrder",
            requirement: "sequence is assigned on insert and increases in insert order",
            body: sequenceIncreasesInInsertOrder
        ),
        ConformanceCheck(
            name: "replaceWithCurrentRevision",
            requirement: "replace with the current revision stores the entry as given and sets the revision to "
                + "revision + 1, ignoring the revision inside the entry",
            body: replaceWithCurrentRevision
        ),
        ConformanceCheck(
            name: "replaceWithStaleRevision",
            requirement: "replace with a revision other than the stored one returns false and changes nothing",
            body: replaceWithStaleRevision
        ),
        ConformanceCheck(
            name: "replaceOfUnknownEntry",
            requirement: "replace of a transaction id that was never inserted returns false and creates nothing",
            body: replaceOfUnknownEntry
        ),
        ConformanceCheck(
            name: "concurrentReplacesOfOneRevision",
            requirement: "of 50 concurrent replaces of one entry with the same revision exactly one returns true, "
                + "and its entry is the one stored",
            body: concurrentReplacesOfOneRevision
        ),
        ConformanceCheck(
            name: "replaceUpdatesIndexes",
            requirement: "after a replace changes userId, originalTransactionId or the delivery state, history, "
                + "entries(originalTransactionId:), dueDeliveries and statistics follow",
            body: replaceUpdatesIndexes
        ),
    ]

    private typealias Fixtures = ConformanceFixtures

    @Sendable
    private static func insertStoresEntry(_ store: any EntitlementStore) async throws {
        let entry = Fixtures.entry("t-1", user: "user-1")
        let stored = try await Fixtures.insertNew(entry, into: store)
        try Fixtures.require(
            stored.revision == 1,
            "insert returned revision \(stored.revision); a new entry has revision 1"
        )
        var expected = entry
        expected.sequence = stored.sequence
        expected.revision = stored.revision
        let changed = Fixtures.differences(expected: expected, actual: stored)
        try Fixtures.require(
            changed.isEmpty,
            "insert returned an entry that differs from the one given:\n" + changed.joined(separator: "\n")
        )
        let read = try await store.entry(transactionId: "t-1")
        try Fixtures.require(
            read == stored,
            "entry(transactionId: \"t-1\") returned \(Fixtures.describe(read)), not the inserted "
                + "\(Fixtures.describe(stored))"
                + (read.map { "\n" + Fixtures.differences(expected: stored, actual: $0).joined(separator: "\n") } ?? "")
        )
        let unknown = try await store.entry(transactionId: "t-unknown")
        try Fixtures.require(
            unknown == nil,
            "entry(transactionId:) of an id never inserted returned \(Fixtures.describe(unknown)), not nil"
        )
    }

    @Sendable
    private static func insertIsIdempotent(_ store: any EntitlementStore) async throws {
        let first = try await Fixtures.insertNew(Fixtures.entry("t-1", user: "user-1"), into: store)
        var other = Fixtures.entry("t-1", user: "user-2", second: 60)
        other.orderId = "another-order"
        other.deliveryState = .delivered
        for (label, attempt) in [
            ("an identical entry", Fixtures.entry("t-1", user: "user-1")), ("a different entry", other),
        ] {
            switch try await store.insert(attempt) {
            case .inserted(let entry):
                throw ConformanceViolation(
                    "a second insert of t-1 (\(label)) returned .inserted(\(Fixtures.describe(entry))); "
                        + "it must return .existing with the stored entry"
                )
            case .existing(let entry):
                try Fixtures.require(
                    entry == first,
                    "a second insert of t-1 (\(label)) returned .existing with an entry other than the stored one:\n"
                        + Fixtures.differences(expected: first, actual: entry).joined(separator: "\n")
                )
            }
        }
        let read = try await store.entry(transactionId: "t-1")
        try Fixtures.require(
            read == first,
            "after a second insert of t-1, the stored entry is \(Fixtures.describe(read)), "
                + "not the first one \(Fixtures.describe(first))"
        )
        let statistics = try await store.statistics()
        try Fixtures.require(
            statistics.transactions == 1 && statistics.users == 1,
            "after inserting t-1 three times, statistics count \(statistics.transactions) transactions and "
                + "\(statistics.users) users; expected 1 and 1"
        )
        let page = try await store.history(userId: "user-2", cursor: nil, limit: 10)
        try Fixtures.require(
            page.entries.isEmpty,
            "the rejected second insert of t-1 for user-2 shows up in user-2's history: \(Fixtures.ids(page.entries))"
        )
    }

    @Sendable
    private static func concurrentInsertsOfOneTransactionId(_ store: any EntitlementStore) async throws {
        let attempts = 1_000
        let outcomes = try await withThrowingTaskGroup(of: InsertOutcome.self) { group in
            for index in 0..<attempts {
                group.addTask {
                    var entry = Fixtures.entry("t-contended", user: "user-1")
                    entry.orderId = "order-\(index)"
                    return try await store.insert(entry)
                }
            }
            var outcomes: [InsertOutcome] = []
            for try await outcome in group {
                outcomes.append(outcome)
            }
            return outcomes
        }
        var inserted: [LedgerEntry] = []
        var existing: [LedgerEntry] = []
        for outcome in outcomes {
            switch outcome {
            case .inserted(let entry):
                inserted.append(entry)
            case .existing(let entry):
                existing.append(entry)
            }
        }
        try Fixtures.require(
            inserted.count == 1,
            "\(attempts) concurrent inserts of transaction id t-contended returned .inserted \(inserted.count) "
                + "times; exactly one may (make the insert a single atomic check-and-write, such as "
                + "INSERT ... ON CONFLICT DO NOTHING, and report .inserted only if this call wrote the row)"
        )
        let winner = inserted[0]
        let mismatched = existing.filter { $0 != winner }
        try Fixtures.require(
            mismatched.isEmpty,
            "\(mismatched.count) of the \(existing.count) .existing answers carry an entry other than the one "
                + "inserted (\(Fixtures.describe(winner)), \(winner.orderId ?? "no order")); for example "
                + "\(Fixtures.describe(mismatched.first)) with \(mismatched.first?.orderId ?? "no order")"
        )
        let stored = try await store.entry(transactionId: "t-contended")
        try Fixtures.require(
            stored == winner,
            "after the concurrent inserts, the stored entry is \(Fixtures.describe(stored)) "
                + "(\(stored?.orderId ?? "no order")), not the one reported as inserted "
                + "(\(winner.orderId ?? "no order")): a later insert overwrote it"
        )
        let statistics = try await store.statistics()
        try Fixtures.require(
            statistics.transactions == 1,
            "after \(attempts) concurrent inserts of one id, statistics count \(statistics.transactions) transactions"
        )
    }

    @Sendable
    private static func concurrentInsertsOfDistinctIds(_ store: any EntitlementStore) async throws {
        let count = 200
        let outcomes = try await withThrowingTaskGroup(of: InsertOutcome.self) { group in
            for index in 0..<count {
                group.addTask {
                    try await store.insert(
                        Fixtures.entry("t-\(index)", user: "user-\(index % 5)", second: Int64(index))
                    )
                }
            }
            var outcomes: [InsertOutcome] = []
            for try await outcome in group {
                outcomes.append(outcome)
            }
            return outcomes
        }
        var inserted: [LedgerEntry] = []
        for outcome in outcomes {
            guard case .inserted(let entry) = outcome else {
                throw ConformanceViolation(
                    "a concurrent insert of a distinct new id returned \(Fixtures.describeValue(outcome))"
                )
            }
            inserted.append(entry)
        }
        let sequences = Set(inserted.map(\.sequence))
        try Fixtures.require(
            sequences.count == count,
            "\(count) concurrent inserts of distinct ids got only \(sequences.count) distinct sequences; "
                + "sequence must be unique"
        )
        for entry in inserted {
            let read = try await store.entry(transactionId: entry.transactionId)
            try Fixtures.require(
                read == entry,
                "after concurrent inserts, \(entry.transactionId) reads back as \(Fixtures.describe(read)), "
                    + "not as inserted (\(Fixtures.describe(entry)))"
            )
        }
        let statistics = try await store.statistics()
        try Fixtures.require(
            statistics.transactions == count && statistics.users == 5,
            "after \(count) concurrent inserts for 5 users, statistics count \(statistics.transactions) "
                + "transactions and \(statistics.users) users"
        )
        var total = 0
        for user in 0..<5 {
            let page = try await store.history(userId: "user-\(user)", cursor: nil, limit: count)
            total += page.entries.count
            let descending = zip(page.entries, page.entries.dropFirst()).allSatisfy { $0.sequence > $1.sequence }
            try Fixtures.require(
                descending,
                "history of user-\(user) after concurrent inserts is not in descending sequence order"
            )
        }
        try Fixtures.require(
            total == count,
            "the histories of the 5 users hold \(total) entries after \(count) concurrent inserts"
        )
    }

    @Sendable
    private static func sequenceIncreasesInInsertOrder(_ store: any EntitlementStore) async throws {
        var previous: LedgerEntry?
        for index in 0..<10 {
            // Ids sort differently from the insert order, so a sequence derived from the id is caught.
            let id = "t-\(9 - index)"
            let stored = try await Fixtures.insertNew(Fixtures.entry(id, user: "user-1"), into: store)
            if let previous {
                try Fixtures.require(
                    stored.sequence > previous.sequence,
                    "\(id), inserted after \(previous.transactionId), got sequence \(stored.sequence), "
                        + "not more than \(previous.sequence)"
                )
            }
            previous = stored
        }
    }

    @Sendable
    private static func replaceWithCurrentRevision(_ store: any EntitlementStore) async throws {
        let original = try await Fixtures.insertNew(Fixtures.entry("t-1", user: "user-1"), into: store)
        var delivered = original
        delivered.deliveryState = .delivered
        delivered.deliveryAttempts = 1
        delivered.deliveredAt = Fixtures.date(5)
        delivered.revision = 999  // must be ignored
        let first = try await Fixtures.replaceAccepted(delivered, ifRevision: original.revision, in: store)
        var expected = delivered
        expected.revision = original.revision + 1
        var changed = Fixtures.differences(expected: expected, actual: first)
        try Fixtures.require(
            changed.isEmpty,
            "after replace with revision \(original.revision), the stored entry differs from the one given "
                + "(with revision \(original.revision + 1)):\n" + changed.joined(separator: "\n")
        )
        var revoked = first
        revoked.revokedAt = Fixtures.date(50)
        revoked.lastError = "refunded"
        let second = try await Fixtures.replaceAccepted(revoked, ifRevision: first.revision, in: store)
        expected = revoked
        expected.revision = first.revision + 1
        changed = Fixtures.differences(expected: expected, actual: second)
        try Fixtures.require(
            changed.isEmpty,
            "after a second replace with revision \(first.revision), the stored entry differs from the one given:\n"
                + changed.joined(separator: "\n")
        )
    }

    @Sendable
    private static func replaceWithStaleRevision(_ store: any EntitlementStore) async throws {
        let original = try await Fixtures.insertNew(Fixtures.entry("t-1", user: "user-1"), into: store)
        var retrying = original
        retrying.deliveryState = .retrying
        retrying.nextAttemptAt = Fixtures.date(30)
        retrying.lastError = "hook timed out"
        let current = try await Fixtures.replaceAccepted(retrying, ifRevision: original.revision, in: store)
        var lateWriter = original
        lateWriter.deliveryState = .delivered
        lateWriter.deliveredAt = Fixtures.date(40)
        for stale in [original.revision, current.revision + 1, current.revision + 100] {
            let accepted = try await store.replace(lateWriter, ifRevision: stale)
            try Fixtures.require(
                !accepted,
                "replace with revision \(stale) returned true although the stored revision is \(current.revision)"
            )
            let read = try await store.entry(transactionId: "t-1")
            try Fixtures.require(
                read == current,
                "a replace with the wrong revision \(stale) changed the entry: "
                    + (read.map { Fixtures.differences(expected: current, actual: $0).joined(separator: "; ") }
                        ?? "it is gone")
            )
        }
    }

    @Sendable
    private static func replaceOfUnknownEntry(_ store: any EntitlementStore) async throws {
        let ghost = Fixtures.entry("t-ghost", user: "user-1")
        for revision: Int64 in [0, 1] {
            let accepted = try await store.replace(ghost, ifRevision: revision)
            try Fixtures.require(
                !accepted,
                "replace of t-ghost, which was never inserted, returned true (revision \(revision))"
            )
        }
        let read = try await store.entry(transactionId: "t-ghost")
        try Fixtures.require(
            read == nil,
            "replace of an id that was never inserted created it: \(Fixtures.describe(read)); replace never inserts"
        )
        let statistics = try await store.statistics()
        try Fixtures.require(
            statistics.transactions == 0,
            "after replace of an unknown id, statistics count \(statistics.transactions) transactions"
        )
    }

    @Sendable
    private static func concurrentReplacesOfOneRevision(_ store: any EntitlementStore) async throws {
        let original = try await Fixtures.insertNew(Fixtures.entry("t-1", user: "user-1"), into: store)
        let writers = 50
        let winners = try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<writers {
                group.addTask {
                    var entry = original
                    entry.deliveryState = .retrying
                    entry.deliveryAttempts = 1
                    entry.lastError = "writer-\(index)"
                    entry.nextAttemptAt = Fixtures.date(Int64(60 + index))
                    let accepted = try await store.replace(entry, ifRevision: original.revision)
                    return accepted ? "writer-\(index)" : nil
                }
            }
            var winners: [String] = []
            for try await winner in group {
                if let winner {
                    winners.append(winner)
                }
            }
            return winners
        }
        try Fixtures.require(
            winners.count == 1,
            "\(writers) concurrent replaces of t-1 with revision \(original.revision) returned true "
                + "\(winners.count) times; exactly one may (compare and write the revision in one atomic step, "
                + "such as UPDATE ... WHERE revision = $read)"
        )
        let stored = try await store.entry(transactionId: "t-1")
        try Fixtures.require(
            stored?.lastError == winners[0] && stored?.revision == original.revision + 1,
            "after the concurrent replaces, t-1 holds the write of \(stored?.lastError ?? "nobody") with revision "
                + "\(stored.map { String($0.revision) } ?? "none"); expected the write of the one that returned "
                + "true (\(winners[0])) with revision \(original.revision + 1)"
        )
    }

    @Sendable
    private static func replaceUpdatesIndexes(_ store: any EntitlementStore) async throws {
        let moved = try await Fixtures.insertNew(
            Fixtures.entry("t-1", user: "user-1", original: "family-a"),
            into: store
        )
        _ = try await Fixtures.insertNew(Fixtures.entry("t-2", user: "user-1", original: "family-a"), into: store)
        var changed = moved
        changed.userId = "user-2"
        changed.originalTransactionId = "family-b"
        changed.deliveryState = .delivered
        changed.deliveredAt = Fixtures.date(10)
        changed.revokedAt = Fixtures.date(20)
        let stored = try await Fixtures.replaceAccepted(changed, ifRevision: moved.revision, in: store)

        let oldUser = try await store.history(userId: "user-1", cursor: nil, limit: 10)
        try Fixtures.require(
            oldUser.entries.map(\.transactionId) == ["t-2"],
            "after t-1 moved from user-1 to user-2, user-1's history is \(Fixtures.ids(oldUser.entries)); "
                + "expected [t-2]"
        )
        let newUser = try await store.history(userId: "user-2", cursor: nil, limit: 10)
        try Fixtures.require(
            newUser.entries == [stored],
            "after t-1 moved to user-2, user-2's history is \(Fixtures.ids(newUser.entries)); expected the replaced t-1"
        )
        let oldFamily = try await store.entries(originalTransactionId: "family-a")
        let newFamily = try await store.entries(originalTransactionId: "family-b")
        try Fixtures.require(
            oldFamily.map(\.transactionId) == ["t-2"] && newFamily == [stored],
            "after t-1 moved from family-a to family-b, family-a holds \(Fixtures.ids(oldFamily)) and family-b "
                + "holds \(Fixtures.ids(newFamily)); expected [t-2] and [t-1]"
        )
        let due = try await store.dueDeliveries(at: Fixtures.date(1_000), limit: 10)
        try Fixtures.require(
            due.map(\.transactionId) == ["t-2"],
            "after t-1 was replaced as delivered, the due deliveries are \(Fixtures.ids(due)); expected [t-2]"
        )
        let statistics = try await store.statistics()
        let expected = LedgerStatistics(
            transactions: 2,
            delivered: 1,
            pendingRetries: 0,
            deadLetters: 0,
            revoked: 1,
            users: 2,
            environments: ["Sandbox": 2]
        )
        try Fixtures.require(
            statistics == expected,
            "after the replace, statistics are \(statistics); expected \(expected)"
        )
    }
}
