import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPStoragePostgres
import IAPTestSupport
import IAPTesting
import Testing

/// A wallet in the ledger's database, granted in the ledger's transaction: the two agree whatever happens.
@Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
struct PostgresTransactionalFulfillmentTests {
    /// A wallet of coins per user in the ledger's schema, with no idempotency keys; it can be told to fail.
    struct Wallet: PostgresTransactionalFulfillmentHook {
        let schema: String
        /// What the hook does wrong, if anything.
        var fault: Fault = .none

        enum Fault: Sendable {
            case none
            /// Writes the wallet, then throws.
            case throwAfterWriting
            /// Runs a statement that fails, and returns as if nothing happened.
            case swallowFailedStatement
            /// Tries to commit on its own.
            case commitItself
            /// Violates a deferred constraint, which fails only at commit.
            case violateAtCommit
        }

        func grant(_ delivery: Delivery, on connection: PostgresTransactionConnection) throws {
            try connection.execute(
                """
                INSERT INTO \(schema).wallet AS w (user_id, coins) VALUES ($1, $2::bigint)
                ON CONFLICT (user_id) DO UPDATE SET coins = w.coins + excluded.coins
                """,
                [delivery.userId, String(delivery.units)]
            )
            switch fault {
            case .none:
                break
            case .throwAfterWriting:
                throw IAPError(.fulfillmentFailed, "the wallet refused")
            case .swallowFailedStatement:
                _ = try? connection.execute("SELECT 1 / 0")
            case .commitItself:
                try connection.execute("  /* done */ COMMIT")
            case .violateAtCommit:
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

    /// A ledger with its wallet tables.
    static func ledger(
        schema: String = PostgresTestServer.freshSchema(),
        fault: Wallet.Fault = .none,
        poolSize: Int = 4,
        groupCommit: PostgresGroupCommit? = nil
    ) async throws -> PostgresTransactionalFulfillmentStore {
        let store = try await PostgresTestServer.store(schema: schema, poolSize: poolSize)
        try PostgresTestServer.sql(
            """
            CREATE TABLE IF NOT EXISTS \(schema).wallet (user_id text PRIMARY KEY, coins bigint NOT NULL);
            CREATE TABLE IF NOT EXISTS \(schema).wallet_audit (
                user_id text REFERENCES \(schema).wallet (user_id) DEFERRABLE INITIALLY DEFERRED);
            """
        )
        let wallet = Wallet(schema: schema, fault: fault)
        if let groupCommit {
            return try PostgresTransactionalFulfillmentStore(store: store, hook: wallet, groupCommit: groupCommit)
        }
        return PostgresTransactionalFulfillmentStore(store: store, hook: wallet)
    }

    static func coins(_ schema: String) throws -> [String: Int64] {
        let rows = try PostgresTestServer.sql("SELECT user_id || '=' || coins FROM \(schema).wallet")
        var coins: [String: Int64] = [:]
        for row in rows {
            let parts = row.split(separator: "=")
            coins[String(parts[0])] = Int64(parts[1])
        }
        return coins
    }

    static let product = CatalogProduct(productId: "coins.100", kind: .consumable, unitsPerPurchase: 100)
    static let catalog = try! StaticProductCatalog(products: [product])

    static func delivered(_ id: String, user: String = "user-1") -> (LedgerEntry, Delivery) {
        var entry = PostgresEntitlementStoreTests.entry(id, user: user)
        entry.deliveryState = .delivered
        entry.deliveredAt = PostgresEntitlementStoreTests.epoch
        entry.grantAttempted = true
        entry.grantedUnits = 100
        let delivery = Delivery(
            action: .grant,
            idempotencyKey: id,
            transactionId: id,
            userId: user,
            product: product,
            transaction: entry.transaction,
            units: 100,
            orderId: nil
        )
        return (entry, delivery)
    }

    @Test func theEntryAndTheGrantCommitTogetherAndOnce() async throws {
        let ledger = try await Self.ledger()
        let schema = ledger.store.configuration.schema
        let (entry, delivery) = Self.delivered("7001")
        guard case .inserted(let stored) = try await ledger.insert(entry, signedTransaction: nil, fulfilling: delivery)
        else {
            Issue.record("a new id was not inserted")
            return
        }
        #expect(stored.revision == 1)
        #expect(try await ledger.entry(transactionId: "7001") == stored)
        #expect(try Self.coins(schema) == ["user-1": 100])

        // The id is taken: the hook does not run again.
        guard
            case .existing(let existing) = try await ledger.insert(entry, signedTransaction: nil, fulfilling: delivery)
        else {
            Issue.record("a taken id was inserted again")
            return
        }
        #expect(existing == stored)
        #expect(try Self.coins(schema) == ["user-1": 100])
        try await ledger.store.dropSchema()
    }

    @Test(arguments: [Wallet.Fault.throwAfterWriting, .swallowFailedStatement, .commitItself, .violateAtCommit])
    func aFulfillmentThatFailsLeavesNeitherTheEntryNorTheGrant(fault: Wallet.Fault) async throws {
        let ledger = try await Self.ledger(fault: fault, poolSize: 1)
        let schema = ledger.store.configuration.schema
        let (entry, delivery) = Self.delivered("7002")
        await #expect(throws: IAPError(.fulfillmentFailed)) {
            _ = try await ledger.insert(entry, signedTransaction: nil, fulfilling: delivery)
        }
        #expect(try await ledger.entry(transactionId: "7002") == nil)
        #expect(try Self.coins(schema).isEmpty)
        // The connection went back to the pool in a clean state: the next call works on it.
        guard case .inserted = try await ledger.store.insert(PostgresEntitlementStoreTests.entry("7003")) else {
            Issue.record("the store does not work after a failed fulfillment")
            return
        }
        #expect(try await ledger.store.statistics().transactions == 1)
        try await ledger.store.dropSchema()
    }

    @Test func aCompareAndSetThatLosesRunsNoHook() async throws {
        let ledger = try await Self.ledger()
        let schema = ledger.store.configuration.schema
        guard case .inserted(let pending) = try await ledger.insert(PostgresEntitlementStoreTests.entry("7004")) else {
            Issue.record("a new id was not inserted")
            return
        }
        let (_, delivery) = Self.delivered("7004")
        var delivered = pending
        delivered.deliveryState = .delivered
        delivered.deliveredAt = PostgresEntitlementStoreTests.epoch
        #expect(try await ledger.replace(delivered, ifRevision: 1, fulfilling: delivery))
        #expect(try await !ledger.replace(delivered, ifRevision: 1, fulfilling: delivery))
        #expect(try await ledger.entry(transactionId: "7004")?.revision == 2)
        #expect(try Self.coins(schema) == ["user-1": 100])
        var moved = delivered
        moved.recordedAt = PostgresEntitlementStoreTests.epoch.addingTimeInterval(1)
        await #expect(throws: IAPError(.invalidArgument)) {
            _ = try await ledger.replace(moved, ifRevision: 2, fulfilling: delivery)
        }
        #expect(try Self.coins(schema) == ["user-1": 100])
        try await ledger.store.dropSchema()
    }

    @Test func aConnectionKeptPastItsCallAndStatementsThatWouldEndTheTransactionAreRefused() async throws {
        final class Keeper: PostgresTransactionalFulfillmentHook, @unchecked Sendable {
            let kept = LockedValue<[String]>([])
            var connection: PostgresTransactionConnection?

            func grant(_ delivery: Delivery, on connection: PostgresTransactionConnection) throws {
                self.connection = connection
                for statement in [
                    "commit", "ROLLBACK", "-- a comment\nSAVEPOINT s", "SET search_path TO public", "RESET ALL",
                    "DISCARD ALL", "begin", "END",
                ] {
                    do {
                        try connection.execute(statement)
                    } catch let error as IAPError where error.code == .invalidArgument {
                        kept.withLock { $0.append(statement) }
                    }
                }
                // What a hook may do: settings that end with the transaction, and reading.
                try connection.execute("SET LOCAL statement_timeout = '5s'")
                let rows = try connection.execute("SELECT $1::text AS who, 2 + 2 AS four", [delivery.userId])
                guard rows.value(0, "who") == delivery.userId, rows.value(0, "four") == "4", rows.affectedRows == 1
                else {
                    throw IAPError(.internalError, "unexpected rows \(rows)")
                }
            }

            func revoke(_ delivery: Delivery, on connection: PostgresTransactionConnection) throws {}
        }
        let keeper = Keeper()
        let store = try await PostgresTestServer.store(poolSize: 1)
        let ledger = PostgresTransactionalFulfillmentStore(store: store, hook: keeper)
        let (entry, delivery) = Self.delivered("7005")
        guard case .inserted = try await ledger.insert(entry, signedTransaction: nil, fulfilling: delivery) else {
            Issue.record("a new id was not inserted")
            return
        }
        #expect(keeper.kept.withLock { $0 }.count == 8)
        #expect(throws: IAPError(.invalidArgument)) {
            try keeper.connection?.execute("SELECT 1")
        }
        #expect(try await ledger.statistics().delivered == 1)
        try await store.dropSchema()
    }

    /// With and without group commit (two groups of up to 8 deliveries open at once in each store).
    @Test(arguments: [nil, PostgresGroupCommit(maximumDeliveries: 8, concurrentGroups: 2)])
    func pipelinesOnTwoStoresDeliverEachPurchaseOnceAndTakeBackRefundsOnce(groupCommit: PostgresGroupCommit?)
        async throws
    {
        let first = try await Self.ledger(groupCommit: groupCommit)
        let schema = first.store.configuration.schema
        let second = try await Self.ledger(schema: schema, groupCommit: groupCommit)
        let clock = ManualClock(now: PostgresEntitlementStoreTests.epoch)
        // Verified payloads go straight to deliver(_:userId:); the verifier trusts a root nobody else has.
        let pki = try TestPKI.generate(
            TestPKI.Options(
                notBefore: Date(millisecondsSince1970: 1_704_067_200_000),
                notAfter: Date(millisecondsSince1970: 1_893_456_000_000)
            )
        )
        let verifier = try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [pki.root],
                bundleId: "com.example.app",
                environment: .production,
                appAppleId: 1_234_567_890
            )
        )
        let pipelines = [first, second, first].map {
            DeliveryPipeline(
                verifier: verifier,
                catalog: Self.catalog,
                store: $0,
                clock: clock
            )
        }
        let purchases = (0..<40).map { index in
            var purchase = PostgresEntitlementStoreTests.entry(String(8_000 + index)).transaction
            purchase.appAccountToken = nil
            purchase.signedDate = PostgresEntitlementStoreTests.epoch
            return purchase
        }
        let outcomes = await withTaskGroup(of: DeliveryOutcome.self) { group in
            for (index, purchase) in (purchases + purchases + purchases).enumerated() {
                let user = "user-\(Int(purchase.transactionId ?? "0").map { $0 % 4 } ?? 0)"
                group.addTask { await pipelines[index % 3].deliver(purchase, userId: user) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.allSatisfy { $0.isDelivered || $0.isAlreadyDelivered || $0.isPending }, "\(outcomes)")
        #expect(outcomes.filter(\.isDelivered).count == purchases.count)
        #expect(try Self.coins(schema) == ["user-0": 1_000, "user-1": 1_000, "user-2": 1_000, "user-3": 1_000])

        clock.advance(by: .seconds(60))
        let refunds = purchases.prefix(8).map { purchase in
            var refunded = purchase
            refunded.revocationDate = clock.now
            refunded.signedDate = clock.now
            return refunded
        }
        let revoked = await withTaskGroup(of: DeliveryOutcome?.self) { group in
            for (index, refund) in (refunds + refunds).enumerated() {
                group.addTask { await pipelines[index % 3].apply(refund) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(revoked.allSatisfy { $0?.isRevoked == true || $0?.isPending == true }, "\(revoked)")
        for pipeline in pipelines {
            _ = await pipeline.drainDueRetries()
        }
        #expect(try Self.coins(schema) == ["user-0": 800, "user-1": 800, "user-2": 800, "user-3": 800])
        let statistics = try await first.statistics()
        #expect(statistics.delivered == purchases.count && statistics.revoked == refunds.count)
        await second.close()
        try await first.store.dropSchema()
    }
}
