#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension EntitlementStoreConformance {
    /// The checks of statistics and of invalid input.
    static let integrityChecks: [ConformanceCheck] = [
        ConformanceCheck(
            name: "statisticsCount",
            requirement: "statistics count transactions, delivered, retrying (pendingRetries), dead-lettered and "
                + "revoked entries, distinct users and transactions per environment (of the signed transaction; an "
                + "environment only when it has one), and follow every write",
            body: statisticsCount
        ),
        ConformanceCheck(
            name: "entriesReadBackExactly",
            requirement: "an entry reads back exactly as written: every field, dates to the millisecond, ids compared "
                + "exactly (case and white space included), an awaitingOwner entry never due",
            body: entriesReadBackExactly
        ),
        ConformanceCheck(
            name: "failedWritesChangeNothing",
            requirement: "every call the contract rejects throws IAPError(.invalidArgument) and leaves every public "
                + "read exactly as before",
            body: failedWritesChangeNothing
        ),
    ]

    private typealias Fixtures = ConformanceFixtures

    @Sendable
    private static func entriesReadBackExactly(_ store: any EntitlementStore) async throws {
        var problems: [String] = []
        var entry = Fixtures.entry("exact-1", user: "user-exact")
        let odd = Date(millisecondsSince1970: Fixtures.epochMilliseconds + 123)
        entry.transaction.purchaseDate = odd
        entry.transaction.signedDate = Date(millisecondsSince1970: Fixtures.epochMilliseconds + 987)
        entry.transaction.price = 12_345
        entry.transaction.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        entry.transaction.environment = AppStoreEnvironment(rawValue: "SomethingNew")
        entry.recordedAt = Date(millisecondsSince1970: Fixtures.epochMilliseconds + 1)
        entry.deliveredAt = Date(millisecondsSince1970: Fixtures.epochMilliseconds + 4_999)
        entry.deliveryState = .delivered
        entry.deliveryAttempts = 3
        entry.lastError = "an error with \"quotes\", a newline\nand ünïcödé"
        entry.orderId = "MXYZ123456"
        entry.grantGeneration = 2
        entry.grantAttempted = true
        entry.grantedUnits = 300
        entry.revokedAt = Date(millisecondsSince1970: Fixtures.epochMilliseconds + 7_777)
        entry.revocationDelivered = true
        entry.refundAccessKept = true
        entry.givenUpAt = Date(millisecondsSince1970: Fixtures.epochMilliseconds + 8_888)
        entry.consentRescindedAt = Date(millisecondsSince1970: Fixtures.epochMilliseconds + 9_999)
        guard case .inserted(let inserted) = try await store.insert(entry) else {
            throw ConformanceViolation("inserting exact-1 into an empty store did not return .inserted")
        }
        if let stored = try await store.entry(transactionId: "exact-1") {
            var expected = entry
            expected.sequence = stored.sequence
            expected.revision = stored.revision
            if stored != expected {
                problems.append("exact-1 reads back as \(stored); expected \(expected)")
            }
            if stored != inserted {
                problems.append("exact-1 reads back differently from what insert returned")
            }
        } else {
            problems.append("exact-1 cannot be read back")
        }

        // Ids are compared exactly: a case difference or extra white space is another transaction.
        for variant in ["EXACT-1", "exact-1 ", " exact-1", "Exact-1"] {
            if case .existing = try await store.insert(Fixtures.entry(variant, user: "user-exact")) {
                problems.append("inserting '\(variant)' returned .existing; ids must be compared exactly")
            }
        }
        var waiting = Fixtures.entry("awaiting-1", user: "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        waiting.deliveryState = .awaitingOwner
        _ = try await store.insert(waiting)
        let due = try await store.dueDeliveries(at: Fixtures.date(1_000_000), limit: 100)
        if due.contains(where: { $0.transactionId == "awaiting-1" }) {
            problems.append("an awaitingOwner entry was returned as due; it must never be due")
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func statisticsCount(_ store: any EntitlementStore) async throws {
        var problems: [String] = []
        func expect(_ label: String, _ expected: LedgerStatistics) async throws {
            let statistics = try await store.statistics()
            if statistics != expected {
                problems.append("\(label): statistics are \(statistics); expected \(expected)")
            }
        }
        try await expect(
            "an empty store",
            LedgerStatistics(transactions: 0, delivered: 0, pendingRetries: 0, deadLetters: 0, revoked: 0, users: 0)
        )
        try await insertEntry("pending-1", user: "user-1", state: .pending, nextAttemptAt: nil, into: store)
        try await insertEntry(
            "pending-2",
            user: "user-2",
            state: .pending,
            nextAttemptAt: Fixtures.date(5),
            into: store
        )
        let delivered = try await insertEntry(
            "delivered-1",
            user: "user-1",
            state: .delivered,
            nextAttemptAt: nil,
            into: store
        )
        try await insertEntry(
            "delivered-2",
            user: "user-3",
            state: .delivered,
            nextAttemptAt: nil,
            environment: .production,
            into: store
        )
        try await insertEntry(
            "retrying-1",
            user: "user-2",
            state: .retrying,
            nextAttemptAt: Fixtures.date(9),
            into: store
        )
        try await insertEntry(
            "dead-1",
            user: "user-3",
            state: .deadLettered,
            nextAttemptAt: nil,
            environment: .production,
            into: store
        )
        // Six entries of three users, two of them Production, one dead letter throughout (given up at the end).
        func counts(delivered: Int, pendingRetries: Int, revoked: Int, givenUp: Bool = false) -> LedgerStatistics {
            LedgerStatistics(
                transactions: 6,
                delivered: delivered,
                pendingRetries: pendingRetries,
                deadLetters: givenUp ? 0 : 1,
                revoked: revoked,
                users: 3,
                environments: ["Sandbox": 4, "Production": 2],
                givenUp: givenUp ? 1 : 0
            )
        }
        try await expect(
            "after inserting 2 pending, 2 delivered, 1 retrying and 1 dead-lettered entry for 3 users, 2 of them "
                + "Production",
            counts(delivered: 2, pendingRetries: 1, revoked: 0)
        )

        var revoked = delivered
        revoked.revokedAt = Fixtures.date(100)
        let afterRevoke = try await Fixtures.replaceAccepted(revoked, ifRevision: delivered.revision, in: store)
        try await expect("after revoking delivered-1", counts(delivered: 2, pendingRetries: 1, revoked: 1))

        if let retrying = try await store.entry(transactionId: "retrying-1") {
            var done = retrying
            done.deliveryState = .delivered
            done.nextAttemptAt = nil
            done.deliveredAt = Fixtures.date(10)
            _ = try await Fixtures.replaceAccepted(done, ifRevision: retrying.revision, in: store)
        }
        var revocationDelivered = afterRevoke
        revocationDelivered.revocationDelivered = true
        _ = try await Fixtures.replaceAccepted(revocationDelivered, ifRevision: afterRevoke.revision, in: store)
        try await expect(
            "after retrying-1 was delivered and delivered-1's revocation confirmed",
            counts(delivered: 3, pendingRetries: 0, revoked: 1)
        )

        _ = try await store.insert(Fixtures.entry("pending-1", user: "user-9"))
        _ = try await store.replace(Fixtures.entry("ghost", user: "user-9"), ifRevision: 1)
        try await expect(
            "after a duplicate insert and a replace of an unknown id",
            counts(delivered: 3, pendingRetries: 0, revoked: 1)
        )
        if let dead = try await store.entry(transactionId: "dead-1") {
            var givenUp = dead
            givenUp.givenUpAt = Fixtures.date(11)
            _ = try await Fixtures.replaceAccepted(givenUp, ifRevision: dead.revision, in: store)
        }
        try await expect(
            "after an operator gave dead-1 up (givenUpAt set): a dead letter no more, one given up",
            counts(delivered: 3, pendingRetries: 0, revoked: 1, givenUp: true)
        )
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func failedWritesChangeNothing(_ store: any EntitlementStore) async throws {
        let token = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
        let uuid = "5f8c1e1a-0000-4000-8000-00000000abcd"
        let pending = try await insertEntry(
            "t-pending",
            user: "user-1",
            state: .pending,
            nextAttemptAt: nil,
            into: store
        )
        try await insertEntry(
            "t-retrying",
            user: "user-1",
            state: .retrying,
            nextAttemptAt: Fixtures.date(30),
            into: store
        )
        try await insertEntry("t-delivered", user: "user-2", state: .delivered, nextAttemptAt: nil, into: store)
        _ = try await store.bind(appAccountToken: token, to: "user-1")
        _ = try await store.storeRenewalInfo(Fixtures.renewalInfo("t-pending", signedAt: 100, productId: "monthly"))
        _ = try await store.markNotificationProcessed(uuid, at: Fixtures.date(0))

        let keys = StoreSnapshot.Keys(
            transactionIds: ["t-pending", "t-retrying", "t-delivered", "t-new", ""],
            userIds: ["user-1", "user-2", ""],
            originalTransactionIds: ["t-pending", "t-retrying", "t-delivered", "t-new", ""],
            appAccountTokens: [token, token.uppercased(), ""],
            notificationUUIDs: [uuid, ""]
        )
        let before = try await StoreSnapshot.take(of: store, keys: keys)

        var noTransactionId = Fixtures.entry("t-new", user: "user-1")
        noTransactionId.transactionId = ""
        var movedSequence = pending
        movedSequence.sequence += 1_000
        movedSequence.deliveryState = .delivered
        var movedRecordedAt = pending
        movedRecordedAt.recordedAt = Fixtures.date(-3_600)
        movedRecordedAt.deliveryState = .delivered
        var noUser = pending
        noUser.userId = ""

        let attempts: [(String, () async throws -> Any)] = [
            ("insert of an entry with an empty transactionId", { try await store.insert(noTransactionId) }),
            ("insert of an entry with an empty userId", { try await store.insert(Fixtures.entry("t-new", user: "")) }),
            (
                "replace (with the current revision) of t-pending with another sequence",
                { try await store.replace(movedSequence, ifRevision: pending.revision) }
            ),
            (
                "replace (with the current revision) of t-pending with another recordedAt",
                { try await store.replace(movedRecordedAt, ifRevision: pending.revision) }
            ),
            (
                "replace (with the current revision) of t-pending with an empty userId",
                { try await store.replace(noUser, ifRevision: pending.revision) }
            ),
            ("bind of an empty appAccountToken", { try await store.bind(appAccountToken: "", to: "user-2") }),
            ("bind of a token to an empty userId", { try await store.bind(appAccountToken: token, to: "") }),
            (
                "storeRenewalInfo without an originalTransactionId",
                { try await store.storeRenewalInfo(Fixtures.renewalInfo(nil, signedAt: 500, productId: "yearly")) }
            ),
            (
                "storeRenewalInfo with an empty originalTransactionId",
                { try await store.storeRenewalInfo(Fixtures.renewalInfo("", signedAt: 500, productId: "yearly")) }
            ),
            (
                "markNotificationProcessed of an empty UUID",
                { try await store.markNotificationProcessed("", at: Fixtures.date(1)) }
            ),
            ("history with a malformed cursor", { try await store.history(userId: "user-1", cursor: "", limit: 10) }),
            ("history with limit 0", { try await store.history(userId: "user-1", cursor: nil, limit: 0) }),
            ("dueDeliveries with limit 0", { try await store.dueDeliveries(at: Fixtures.date(0), limit: 0) }),
        ]
        var problems: [String] = []
        for (operation, attempt) in attempts {
            if let problem = await Fixtures.invalidArgumentProblem(operation, attempt) {
                problems.append(problem)
            }
            let after = try await StoreSnapshot.take(of: store, keys: keys)
            let changes = before.changes(to: after)
            if !changes.isEmpty {
                problems.append(
                    "the rejected \(operation) changed the store: " + changes.joined(separator: "; ")
                )
                break
            }
        }
        let stillReplaceable = try await store.replace(pending, ifRevision: pending.revision)
        if !stillReplaceable {
            problems.append(
                "after the rejected replaces, replace of t-pending with its revision \(pending.revision) returned "
                    + "false: a rejected replace bumped the revision"
            )
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }
}
