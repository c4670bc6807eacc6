import Dispatch
import Foundation
import IAPCore
import IAPStoragePostgres
import IAPTestSupport
import Testing

/// Group commit of transactional fulfillment: deliveries that wait at the same moment share one transaction, each
/// under its own savepoint, and every one still gets its own answer.
@Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
struct PostgresGroupCommitTests {
    /// A wallet that records the transaction each grant ran in, holds the first grant of `gate-` ids until told,
    /// and fails as the transaction id says: `throw-` writes then throws, `swallow-` leaves a failed statement
    /// behind, `defer-` breaks a constraint checked only at commit.
    final class Wallet: PostgresTransactionalFulfillmentHook {
        let schema: String
        /// The server's transaction id of each grant, by transaction id.
        let transactions = LockedValue<[String: String]>([:])
        /// Whether a gated grant is waiting.
        let gated = LockedValue(false)
        let gate = DispatchSemaphore(value: 0)

        init(schema: String) {
            self.schema = schema
        }

        func grant(_ delivery: Delivery, on connection: PostgresTransactionConnection) throws {
            let id = delivery.transactionId
            try connection.execute(
                """
                INSERT INTO \(schema).wallet AS w (user_id, coins) VALUES ($1, $2::bigint)
                ON CONFLICT (user_id) DO UPDATE SET coins = w.coins + excluded.coins
                """,
                [delivery.userId, String(delivery.units)]
            )
            let current = try connection.execute("SELECT txid_current()::text AS id").value(0, "id")
            transactions.withLock { $0[id] = current }
            if id.hasPrefix("gate-") {
                gated.withLock { $0 = true }
                // Bounded: a test that never opens the gate fails on its own deadline instead of holding the group for ever.
                _ = gate.wait(timeout: .now() + 120)
            } else if id.hasPrefix("throw-") {
                throw IAPError(.fulfillmentFailed, "the wallet refused \(id)")
            } else if id.hasPrefix("swallow-") {
                _ = try? connection.execute("SELECT 1 / 0")
            } else if id.hasPrefix("defer-") {
                try connection.execute("INSERT INTO \(schema).wallet_audit (user_id) VALUES ($1)", ["nobody"])
            }
        }

        func revoke(_ delivery: Delivery, on connection: PostgresTransactionConnection) throws {
            try connection.execute(
                "UPDATE \(schema).wallet SET coins = coins - $2::bigint WHERE user_id = $1",
                [delivery.userId, String(delivery.units)]
            )
        }
    }

    /// A grouped ledger with one group open at a time, its wallet tables, and the wallet.
    static func ledger(poolSize: Int = 2) async throws -> (PostgresTransactionalFulfillmentStore, Wallet) {
        let schema = PostgresTestServer.freshSchema()
        let store = try await PostgresTestServer.store(schema: schema, poolSize: poolSize)
        try PostgresTestServer.sql(
            """
            CREATE TABLE IF NOT EXISTS \(schema).wallet (user_id text PRIMARY KEY, coins bigint NOT NULL);
            CREATE TABLE IF NOT EXISTS \(schema).wallet_audit (
                user_id text REFERENCES \(schema).wallet (user_id) DEFERRABLE INITIALLY DEFERRED);
            """
        )
        let wallet = Wallet(schema: schema)
        let ledger = try PostgresTransactionalFulfillmentStore(
            store: store,
            hook: wallet,
            groupCommit: .init(maximumDeliveries: 32, concurrentGroups: 1)
        )
        return (ledger, wallet)
    }

    /// Waits (a bounded while) until `condition` holds.
    static func wait(for what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<2_000 {
            if condition() {
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw IAPError(.internalError, "gave up waiting for \(what)")
    }

    /// What one delivery of a group asks for.
    enum Request: Sendable {
        case insert(String, user: String)
        case replace(LedgerEntry, revision: Int64)
    }

    /// What one delivery of a group got.
    enum Answer: Sendable, Hashable {
        case inserted
        case existing
        case replaced(Bool)
        case failed(IAPError.Code)
    }

    /// Holds a first delivery in its grant, queues `requests` behind it (so they form the next group), lets the
    /// first one go, and returns each request's answer.
    static func group(
        _ requests: [Request],
        on ledger: PostgresTransactionalFulfillmentStore,
        wallet: Wallet,
        gate: String = "gate-0"
    ) async throws -> [Answer] {
        let (first, firstDelivery) = PostgresTransactionalFulfillmentTests.delivered(gate, user: "gatekeeper")
        let held = Task { try await ledger.insert(first, signedTransaction: nil, fulfilling: firstDelivery) }
        try await wait(for: "the first grant") { wallet.gated.withLock { $0 } }
        let answers = Task {
            await withTaskGroup(of: (Int, Answer).self) { group in
                for (index, request) in requests.enumerated() {
                    group.addTask {
                        do {
                            switch request {
                            case .insert(let id, let user):
                                let (entry, delivery) = PostgresTransactionalFulfillmentTests.delivered(id, user: user)
                                let outcome = try await ledger.insert(
                                    entry,
                                    signedTransaction: nil,
                                    fulfilling: delivery
                                )
                                if case .inserted = outcome {
                                    return (index, .inserted)
                                }
                                return (index, .existing)
                            case .replace(let entry, let revision):
                                let (_, delivery) = PostgresTransactionalFulfillmentTests.delivered(
                                    entry.transactionId,
                                    user: entry.userId
                                )
                                let stored = try await ledger.replace(entry, ifRevision: revision, fulfilling: delivery)
                                return (index, .replaced(stored))
                            }
                        } catch let error as IAPError {
                            return (index, .failed(error.code))
                        } catch {
                            return (index, .failed(.internalError))
                        }
                    }
                }
                var answers = [Answer](repeating: .failed(.internalError), count: requests.count)
                for await (index, answer) in group {
                    answers[index] = answer
                }
                return answers
            }
        }
        try await wait(for: "\(requests.count) queued deliveries") { ledger.queuedDeliveries == requests.count }
        wallet.gate.signal()
        guard case .inserted = try await held.value else {
            throw IAPError(.internalError, "the gated delivery was not inserted")
        }
        return await answers.value
    }

    static func delivered(_ entry: LedgerEntry) -> LedgerEntry {
        var delivered = entry
        delivered.deliveryState = .delivered
        delivered.deliveredAt = PostgresEntitlementStoreTests.epoch
        delivered.grantAttempted = true
        delivered.grantedUnits = 100
        return delivered
    }

    @Test func concurrentDeliveriesShareOneTransactionAndEachGetsItsOwnAnswer() async throws {
        let (ledger, wallet) = try await Self.ledger()
        let schema = ledger.store.configuration.schema
        // Already recorded: one delivered (its id is taken), one pending twice over (to be delivered by a
        // compare-and-set, one with the current revision, one with a stale one).
        let (taken, takenDelivery) = PostgresTransactionalFulfillmentTests.delivered("taken-1", user: "user-t")
        _ = try await ledger.insert(taken, signedTransaction: nil, fulfilling: takenDelivery)
        guard case .inserted(let pending) = try await ledger.store.insert(PostgresEntitlementStoreTests.entry("due-1"))
        else {
            Issue.record("a new id was not inserted")
            return
        }
        guard case .inserted(let other) = try await ledger.store.insert(PostgresEntitlementStoreTests.entry("due-2"))
        else {
            Issue.record("a new id was not inserted")
            return
        }
        let answers = try await Self.group(
            [
                .insert("new-1", user: "user-a"),
                .insert("new-2", user: "user-b"),
                .insert("taken-1", user: "user-t"),
                .insert("twice-1", user: "user-c"),
                .insert("twice-1", user: "user-c"),
                .insert("throw-1", user: "user-d"),
                .insert("swallow-1", user: "user-e"),
                .replace(Self.delivered(pending), revision: pending.revision),
                .replace(Self.delivered(other), revision: other.revision + 5),
                .insert("new-3", user: "user-a"),
            ],
            on: ledger,
            wallet: wallet
        )
        #expect(answers[0] == .inserted && answers[1] == .inserted && answers[9] == .inserted)
        #expect(answers[2] == .existing)
        #expect(Set([answers[3], answers[4]]) == [.inserted, .existing])
        #expect(answers[5] == .failed(.fulfillmentFailed))
        #expect(answers[6] == .failed(.fulfillmentFailed))
        #expect(answers[7] == .replaced(true))
        #expect(answers[8] == .replaced(false))

        // The deliveries that ran a grant did so in one transaction, another than the first delivery's.
        let transactions = wallet.transactions.withLock { $0 }
        let grouped = Set(
            ["new-1", "new-2", "twice-1", "throw-1", "swallow-1", "due-1", "new-3"].map { transactions[$0] }
        )
        #expect(grouped.count == 1)
        #expect(!grouped.contains(transactions["gate-0"]))

        // What succeeded is kept, what failed left nothing.
        #expect(
            try PostgresTransactionalFulfillmentTests.coins(schema) == [
                "gatekeeper": 100, "user-t": 100, "user-a": 200, "user-b": 100, "user-c": 100, "user-1": 100,
            ]
        )
        for id in ["new-1", "new-2", "new-3", "twice-1", "gate-0"] {
            #expect(try await ledger.entry(transactionId: id)?.deliveryState == .delivered, "\(id)")
        }
        #expect(try await ledger.entry(transactionId: "throw-1") == nil)
        #expect(try await ledger.entry(transactionId: "swallow-1") == nil)
        #expect(try await ledger.entry(transactionId: "due-1")?.revision == 2)
        #expect(try await ledger.entry(transactionId: "due-2") == other)
        #expect(try await ledger.statistics().delivered == 7)
        try await ledger.store.dropSchema()
    }

    @Test func aCommitThatFailsFailsTheWholeGroupAndKeepsNothingOfIt() async throws {
        let (ledger, wallet) = try await Self.ledger()
        let schema = ledger.store.configuration.schema
        let answers = try await Self.group(
            [
                .insert("new-1", user: "user-a"),
                .insert("defer-1", user: "user-b"),
                .insert("new-2", user: "user-c"),
                .insert("throw-1", user: "user-d"),
            ],
            on: ledger,
            wallet: wallet
        )
        #expect(answers == Array(repeating: .failed(.fulfillmentFailed), count: 4))
        #expect(try PostgresTransactionalFulfillmentTests.coins(schema) == ["gatekeeper": 100])
        #expect(try await ledger.statistics().transactions == 1)

        // Alone, the deliveries that were not at fault go through; the one that was still fails, alone.
        for id in ["new-1", "new-2"] {
            let (entry, delivery) = PostgresTransactionalFulfillmentTests.delivered(id, user: "user-a")
            guard case .inserted = try await ledger.insert(entry, signedTransaction: nil, fulfilling: delivery) else {
                Issue.record("\(id) was not inserted")
                return
            }
        }
        let (faulty, faultyDelivery) = PostgresTransactionalFulfillmentTests.delivered("defer-1", user: "user-b")
        await #expect(throws: IAPError(.fulfillmentFailed)) {
            _ = try await ledger.insert(faulty, signedTransaction: nil, fulfilling: faultyDelivery)
        }
        #expect(try PostgresTransactionalFulfillmentTests.coins(schema) == ["gatekeeper": 100, "user-a": 200])
        #expect(try await ledger.statistics().transactions == 3)
        try await ledger.store.dropSchema()
    }

    @Test func manyConcurrentDeliveriesAreEachGrantedOnce() async throws {
        let (ledger, _) = try await Self.ledger(poolSize: 4)
        let schema = ledger.store.configuration.schema
        let grouped = try PostgresTransactionalFulfillmentStore(
            store: ledger.store,
            hook: Wallet(schema: schema),
            groupCommit: .init(maximumDeliveries: 8, concurrentGroups: 3)
        )
        // 200 purchases, each submitted twice at once, every fifth one's grant failing.
        let answers = await withTaskGroup(of: (String, Answer).self) { group in
            for index in 0..<400 {
                let id = (index / 2) % 5 == 0 ? "throw-\(index / 2)" : "p-\(index / 2)"
                group.addTask {
                    let (entry, delivery) = PostgresTransactionalFulfillmentTests.delivered(
                        id,
                        user: "u-\(index / 2 % 7)"
                    )
                    do {
                        if case .inserted = try await grouped.insert(
                            entry,
                            signedTransaction: nil,
                            fulfilling: delivery
                        ) {
                            return (id, .inserted)
                        }
                        return (id, .existing)
                    } catch let error as IAPError {
                        return (id, .failed(error.code))
                    } catch {
                        return (id, .failed(.internalError))
                    }
                }
            }
            return await group.reduce(into: [String: [Answer]]()) { $0[$1.0, default: []].append($1.1) }
        }
        for (id, got) in answers {
            if id.hasPrefix("throw-") {
                #expect(got == [.failed(.fulfillmentFailed), .failed(.fulfillmentFailed)], "\(id)")
            } else {
                #expect(got.sorted { "\($0)" < "\($1)" } == [.existing, .inserted], "\(id): \(got)")
            }
        }
        let statistics = try await grouped.statistics()
        #expect(statistics.transactions == 160 && statistics.delivered == 160)
        let coins = try PostgresTransactionalFulfillmentTests.coins(schema)
        #expect(coins.values.reduce(0, +) == 16_000)
        try await ledger.store.dropSchema()
    }

    @Test func limitsOutOfRangeAreRefused() async throws {
        let store = try await PostgresTestServer.store(poolSize: 2)
        let wallet = Wallet(schema: store.configuration.schema)
        for limits in [
            PostgresGroupCommit(maximumDeliveries: 1), PostgresGroupCommit(maximumDeliveries: 65),
            PostgresGroupCommit(concurrentGroups: 0), PostgresGroupCommit(concurrentGroups: 3),
        ] {
            #expect(throws: IAPError(.invalidConfiguration), "\(limits)") {
                _ = try PostgresTransactionalFulfillmentStore(store: store, hook: wallet, groupCommit: limits)
            }
        }
        let grouped = try PostgresTransactionalFulfillmentStore(
            store: store,
            hook: wallet,
            groupCommit: .init(maximumDeliveries: 64, concurrentGroups: 2)
        )
        #expect(grouped.groupCommit == PostgresGroupCommit(maximumDeliveries: 64, concurrentGroups: 2))
        try await store.dropSchema()
    }
}
