#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension EntitlementStoreConformance {
    /// The checks of `dueDeliveries(at:limit:)`.
    static let deliveryChecks: [ConformanceCheck] = [
        ConformanceCheck(
            name: "dueDeliveriesFollowClaims",
            requirement: "due are: pending entries never claimed or whose claim (nextAttemptAt) is at or before "
                + "the instant, and retrying entries whose nextAttemptAt is at or before it (or missing); "
                + "delivered and deadLettered entries never are",
            body: dueDeliveriesFollowClaims
        ),
        ConformanceCheck(
            name: "dueDeliveriesOrder",
            requirement: "due deliveries come by nextAttemptAt, entries without one first, then by sequence",
            body: dueDeliveriesOrder
        ),
        ConformanceCheck(
            name: "insertedClaimIsHeld",
            requirement: "an entry inserted already claimed (pending, a future nextAttemptAt, one attempt, a grant "
                + "attempted), as the delivery pipeline records a new purchase, reads back as written, is not due "
                + "before its claim expires and is due from then; of two compare-and-sets of its revision 1, the "
                + "first is stored and the second refused",
            body: insertedClaimIsHeld
        ),
        ConformanceCheck(
            name: "dueDeliveriesLimit",
            requirement: "dueDeliveries returns at most limit entries, the first ones in order, and throws "
                + "IAPError(.invalidArgument) for a limit below 1",
            body: dueDeliveriesLimit
        ),
        ConformanceCheck(
            name: "parkedEntriesAreListedNeverDue",
            requirement:
                "unknownProduct entries are never due, are listed by parkedEntries by sequence (at most limit; "
                + "IAPError(.invalidArgument) below 1), are counted in statistics().unknownProduct, and leave the list "
                + "once replaced into another state",
            body: parkedEntriesAreListedNeverDue
        ),
    ]

    private typealias Fixtures = ConformanceFixtures

    /// Inserts an entry, then replaces it into the given delivery state; returns it as stored.
    @discardableResult
    static func insertEntry(
        _ transactionId: String,
        user: String = "user-1",
        state: DeliveryState,
        nextAttemptAt: Date?,
        environment: AppStoreEnvironment? = nil,
        into store: any EntitlementStore
    ) async throws -> LedgerEntry {
        var new = Fixtures.entry(transactionId, user: user)
        if let environment {
            new.transaction.environment = environment
        }
        let inserted = try await Fixtures.insertNew(new, into: store)
        guard state != .pending || nextAttemptAt != nil else {
            return inserted
        }
        var entry = inserted
        entry.deliveryState = state
        entry.nextAttemptAt = nextAttemptAt
        entry.deliveryAttempts = state == .pending ? 0 : 1
        if state == .delivered {
            entry.deliveredAt = Fixtures.date(1)
        }
        return try await Fixtures.replaceAccepted(entry, ifRevision: inserted.revision, in: store)
    }

    @Sendable
    private static func dueDeliveriesFollowClaims(_ store: any EntitlementStore) async throws {
        let past = Fixtures.date(-100)
        try await insertEntry("pending-unclaimed", state: .pending, nextAttemptAt: nil, into: store)
        try await insertEntry(
            "pending-claimed-until-60",
            state: .pending,
            nextAttemptAt: Fixtures.date(60),
            into: store
        )
        try await insertEntry("retrying-at-30", state: .retrying, nextAttemptAt: Fixtures.date(30), into: store)
        try await insertEntry("retrying-at-minus-10", state: .retrying, nextAttemptAt: Fixtures.date(-10), into: store)
        try await insertEntry("retrying-without-time", state: .retrying, nextAttemptAt: nil, into: store)
        try await insertEntry("delivered", state: .delivered, nextAttemptAt: past, into: store)
        try await insertEntry("delivered-without-time", state: .delivered, nextAttemptAt: nil, into: store)
        try await insertEntry("dead-lettered", state: .deadLettered, nextAttemptAt: past, into: store)
        try await insertEntry("dead-lettered-without-time", state: .deadLettered, nextAttemptAt: nil, into: store)

        let early = ["pending-unclaimed", "retrying-without-time", "retrying-at-minus-10"]
        let expectations: [(second: Int64, ids: [String], note: String)] = [
            (-1_000, ["pending-unclaimed", "retrying-without-time"], "before every nextAttemptAt"),
            (0, early, "the claim until +60 s and the retry at +30 s are not due yet"),
            (29, early, "one second before the retry at +30 s"),
            (30, early + ["retrying-at-30"], "exactly at the retry's nextAttemptAt, it is due"),
            (59, early + ["retrying-at-30"], "one second before the claim expires"),
            (60, early + ["retrying-at-30", "pending-claimed-until-60"], "exactly when the claim expires"),
            (86_400, early + ["retrying-at-30", "pending-claimed-until-60"], "a day later"),
        ]
        var problems: [String] = []
        for expectation in expectations {
            let due = try await store.dueDeliveries(at: Fixtures.date(expectation.second), limit: 100)
            let ids = due.map(\.transactionId)
            if ids != expectation.ids {
                problems.append(
                    "at \(expectation.second >= 0 ? "+" : "")\(expectation.second) s (\(expectation.note)) "
                        + "dueDeliveries returned [\(ids.joined(separator: ", "))]; "
                        + "expected [\(expectation.ids.joined(separator: ", "))]"
                )
            }
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func parkedEntriesAreListedNeverDue(_ store: any EntitlementStore) async throws {
        try await insertEntry("parked-b", state: .unknownProduct, nextAttemptAt: nil, into: store)
        try await insertEntry("pending-c", state: .pending, nextAttemptAt: nil, into: store)
        let second = try await insertEntry("parked-a", state: .unknownProduct, nextAttemptAt: nil, into: store)
        var problems: [String] = []
        let due = try await store.dueDeliveries(at: Fixtures.date(86_400), limit: 100).map(\.transactionId)
        if due != ["pending-c"] {
            problems.append("dueDeliveries returned [\(due.joined(separator: ", "))]; parked entries must never be due")
        }
        let parked = try await store.parkedEntries(limit: 100).map(\.transactionId)
        if parked != ["parked-b", "parked-a"] {
            problems.append("parkedEntries returned [\(parked.joined(separator: ", "))]; expected [parked-b, parked-a]")
        }
        let first = try await store.parkedEntries(limit: 1).map(\.transactionId)
        if first != ["parked-b"] {
            problems.append("parkedEntries(limit: 1) returned [\(first.joined(separator: ", "))]; expected [parked-b]")
        }
        if try await store.statistics().unknownProduct != 2 {
            problems.append("statistics().unknownProduct is not 2 with two parked entries")
        }
        var unparked = second
        unparked.deliveryState = .pending
        _ = try await Fixtures.replaceAccepted(unparked, ifRevision: second.revision, in: store)
        let after = try await store.parkedEntries(limit: 100).map(\.transactionId)
        if after != ["parked-b"] {
            problems.append(
                "after parked-a was replaced as pending, parkedEntries returned [\(after.joined(separator: ", "))]"
            )
        }
        do {
            _ = try await store.parkedEntries(limit: 0)
            problems.append("parkedEntries(limit: 0) did not throw")
        } catch let error as IAPError where error.code == .invalidArgument {
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func dueDeliveriesOrder(_ store: any EntitlementStore) async throws {
        // Inserted in an order that neither the ids nor the times follow.
        try await insertEntry("c-retrying-20", state: .retrying, nextAttemptAt: Fixtures.date(20), into: store)
        try await insertEntry("a-pending-new", state: .pending, nextAttemptAt: nil, into: store)
        try await insertEntry("d-claim-expired-10", state: .pending, nextAttemptAt: Fixtures.date(10), into: store)
        try await insertEntry("b-retrying-10", state: .retrying, nextAttemptAt: Fixtures.date(10), into: store)
        try await insertEntry("e-retrying-5", state: .retrying, nextAttemptAt: Fixtures.date(5), into: store)
        try await insertEntry("f-pending-new", state: .pending, nextAttemptAt: nil, into: store)
        let expected = [
            "a-pending-new", "f-pending-new", "e-retrying-5", "d-claim-expired-10", "b-retrying-10", "c-retrying-20",
        ]
        let due = try await store.dueDeliveries(at: Fixtures.date(100), limit: 100)
        let ids = due.map(\.transactionId)
        try Fixtures.require(
            ids == expected,
            "dueDeliveries returned [\(ids.joined(separator: ", "))]; expected [\(expected.joined(separator: ", "))] "
                + "(nil nextAttemptAt first, then by nextAttemptAt, ties by sequence)"
        )
        for entry in due {
            let stored = try await store.entry(transactionId: entry.transactionId)
            try Fixtures.require(
                stored == entry,
                "dueDeliveries returned \(Fixtures.describe(entry)), which differs from the stored "
                    + "\(Fixtures.describe(stored))"
            )
        }
    }

    @Sendable
    private static func insertedClaimIsHeld(_ store: any EntitlementStore) async throws {
        var claimed = Fixtures.entry("claimed-on-insert", user: "user-1")
        claimed.deliveryState = .pending
        claimed.nextAttemptAt = Fixtures.date(120)
        claimed.deliveryAttempts = 1
        claimed.grantAttempted = true
        let inserted = try await Fixtures.insertNew(claimed, into: store)
        try await insertEntry("unclaimed", state: .pending, nextAttemptAt: nil, into: store)
        var problems: [String] = []
        guard let stored = try await store.entry(transactionId: claimed.transactionId) else {
            throw ConformanceViolation("entry claimed-on-insert is missing after its insert returned .inserted")
        }
        var expected = claimed
        expected.sequence = inserted.sequence
        expected.revision = 1
        let differences = Fixtures.differences(expected: expected, actual: stored)
        if !differences.isEmpty || !stored.grantAttempted || inserted.revision != 1 {
            problems.append(
                "the entry inserted claimed reads back differently: "
                    + (differences + (stored.grantAttempted ? [] : ["grantAttempted: expected true, got false"]))
                    .joined(separator: "; ") + " (revision returned by insert: \(inserted.revision))"
            )
        }
        for (second, expectedIds) in [
            (0, ["unclaimed"]), (119, ["unclaimed"]), (120, ["unclaimed", "claimed-on-insert"]),
        ] {
            let due = try await store.dueDeliveries(at: Fixtures.date(Int64(second)), limit: 10).map(\.transactionId)
            if due != expectedIds {
                problems.append(
                    "at +\(second) s dueDeliveries returned [\(due.joined(separator: ", "))]; expected "
                        + "[\(expectedIds.joined(separator: ", "))] (the claim inserted with the entry holds until +120 s)"
                )
            }
        }
        var delivered = inserted
        delivered.deliveryState = .delivered
        delivered.nextAttemptAt = nil
        delivered.deliveryAttempts = 0
        delivered.deliveredAt = Fixtures.date(1)
        delivered.grantedUnits = 1
        let first = try await store.replace(delivered, ifRevision: 1)
        var again = inserted
        again.lastError = "a second deliverer"
        let second = try await store.replace(again, ifRevision: 1)
        let after = try await store.entry(transactionId: claimed.transactionId)
        if !first || second || after?.deliveryState != .delivered || after?.revision != 2 {
            problems.append(
                "marking the claimed entry delivered with revision 1 returned \(first), a second replace with revision 1 "
                    + "returned \(second) (expected true, then false); stored now: \(Fixtures.describe(after))"
            )
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func dueDeliveriesLimit(_ store: any EntitlementStore) async throws {
        try await insertEntry("retrying-3", state: .retrying, nextAttemptAt: Fixtures.date(3), into: store)
        try await insertEntry("retrying-1", state: .retrying, nextAttemptAt: Fixtures.date(1), into: store)
        try await insertEntry("pending-1", state: .pending, nextAttemptAt: nil, into: store)
        try await insertEntry("retrying-2", state: .retrying, nextAttemptAt: Fixtures.date(2), into: store)
        try await insertEntry("pending-2", state: .pending, nextAttemptAt: nil, into: store)
        let all = ["pending-1", "pending-2", "retrying-1", "retrying-2", "retrying-3"]
        var problems: [String] = []
        for limit in [1, 2, 4, 5, 1_000] {
            let due = try await store.dueDeliveries(at: Fixtures.date(10), limit: limit)
            let expected = Array(all.prefix(limit))
            if due.map(\.transactionId) != expected {
                problems.append(
                    "dueDeliveries with limit \(limit) returned \(Fixtures.ids(due)); expected "
                        + "[\(expected.joined(separator: ", "))]"
                )
            }
        }
        for limit in [0, -5] {
            let problem = await Fixtures.invalidArgumentProblem("dueDeliveries with limit \(limit)") {
                try await store.dueDeliveries(at: Fixtures.date(10), limit: limit)
            }
            problems += problem.map { [$0] } ?? []
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }
}
