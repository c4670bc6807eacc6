import Foundation
import IAPCore
import IAPStoragePostgres
import IAPTestSupport
import IAPTesting
import Testing

@Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
struct PostgresEntitlementStoreTests {
    static let epoch = Date(millisecondsSince1970: 1_767_225_600_000)

    static func entry(_ id: String, user: String = "user-1") -> LedgerEntry {
        let payload = TransactionPayload(
            originalTransactionId: id,
            transactionId: id,
            bundleId: "com.example.app",
            productId: "coins.100",
            purchaseDate: epoch,
            quantity: 1,
            type: .consumable,
            appAccountToken: "6F1C2B7E-3D4A-4F8E-9B2C-1A5D7E9F0C3B",
            environment: .production
        )
        return LedgerEntry(
            transaction: payload,
            transactionId: id,
            originalTransactionId: id,
            userId: user,
            productId: "coins.100",
            recordedAt: epoch
        )
    }

    /// The URL of the test server with one more query parameter.
    static func url(adding parameter: String) throws -> String {
        let url = try PostgresTestServer.requireURL()
        return url + (url.contains("?") ? "&" : "?") + parameter
    }

    @Test func aReopenedLedgerKeepsItsEntriesAndRecordsItsMigrations() async throws {
        let first = try await PostgresTestServer.store()
        let schema = first.configuration.schema
        #expect(first.foundSchemaVersion == 0)
        guard case .inserted(let stored) = try await first.insert(Self.entry("1001")) else {
            Issue.record("a new id was not inserted")
            return
        }
        await first.close()

        let second = try await PostgresTestServer.store(schema: schema)
        #expect(second.foundSchemaVersion == PostgresEntitlementStore.schemaVersion)
        #expect(try await second.entry(transactionId: "1001") == stored)
        let versions = try PostgresTestServer.sql(
            "SELECT version FROM \(schema).iap_schema_migrations ORDER BY version"
        )
        #expect(versions == (1...PostgresEntitlementStore.schemaVersion).map(String.init))
        try await second.dropSchema()
    }

    @Test func aVersionOneLedgerIsMigratedToKeepOnlyTheIndexesItsQueriesUse() async throws {
        let store = try await PostgresTestServer.store()
        let schema = store.configuration.schema
        _ = try await store.insert(Self.entry("1002"))
        await store.close()
        // The migration is found by what it does, not by its number: back to the version before it, with the
        // indexes an older swift-iap created.
        let version = try #require(
            try PostgresTestServer.sql(
                "SELECT version FROM \(schema).iap_schema_migrations "
                    + "WHERE description LIKE 'drop the indexes no query uses%'"
            ).first.flatMap { Int($0) }
        )
        try PostgresTestServer.sql(
            """
            CREATE INDEX iap_ledger_entries_token ON \(schema).iap_ledger_entries (app_account_token)
                WHERE app_account_token IS NOT NULL;
            CREATE INDEX iap_ledger_entries_revoked ON \(schema).iap_ledger_entries (revoked_at)
                WHERE revoked_at IS NOT NULL;
            DELETE FROM \(schema).iap_schema_migrations WHERE version >= \(version);
            """
        )
        let migrated = try await PostgresTestServer.store(schema: schema)
        #expect(migrated.foundSchemaVersion == version - 1)
        let indexes = try PostgresTestServer.sql(
            "SELECT indexname FROM pg_indexes WHERE schemaname = '\(schema)' AND tablename = 'iap_ledger_entries' "
                + "ORDER BY indexname"
        )
        #expect(
            indexes == [
                "iap_ledger_entries_app_transaction", "iap_ledger_entries_due", "iap_ledger_entries_original",
                "iap_ledger_entries_pkey", "iap_ledger_entries_transaction_id_key", "iap_ledger_entries_user",
            ]
        )
        #expect(try await migrated.entry(transactionId: "1002")?.transactionId == "1002")
        try await migrated.dropSchema()
    }

    @Test func aLedgerMigratedByANewerVersionIsRefused() async throws {
        let store = try await PostgresTestServer.store()
        let schema = store.configuration.schema
        await store.close()
        try PostgresTestServer.sql(
            "INSERT INTO \(schema).iap_schema_migrations (version, description) VALUES (999, 'from the future')"
        )
        await #expect(throws: IAPError(.storageSchemaTooNew)) {
            _ = try await PostgresTestServer.store(schema: schema)
        }
        try PostgresTestServer.sql("DROP SCHEMA \(schema) CASCADE")
    }

    @Test func aMissingLedgerIsNotCreatedWhenTheCallerOnlyReads() async throws {
        let schema = PostgresTestServer.freshSchema()
        let configuration = PostgresEntitlementStore.Configuration(
            url: try PostgresTestServer.requireURL(),
            schema: schema,
            createIfMissing: false
        )
        await #expect(throws: IAPError(.notFound)) {
            _ = try await PostgresEntitlementStore(configuration: configuration)
        }
        #expect(try PostgresTestServer.sql("SELECT count(*) FROM pg_namespace WHERE nspname = '\(schema)'") == ["0"])
    }

    @Test func connectionProblemsNameTheirCause() async throws {
        let url = try PostgresTestServer.requireURL()
        guard let parts = URLComponents(string: url), let host = parts.host, let port = parts.port else {
            Issue.record("IAP_TEST_POSTGRES_URL is not a URL with a host and a port: \(url)")
            return
        }
        let user = parts.user ?? "postgres"
        let wrongPassword = "postgres://\(user):not-the-password@\(host):\(port)\(parts.path)"
        await #expect(throws: IAPError(.storageAuthenticationFailed)) {
            _ = try await PostgresEntitlementStore(configuration: .init(url: wrongPassword))
        }
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        await #expect(throws: IAPError(.storageUnavailable)) {
            _ = try await PostgresEntitlementStore(configuration: .init(url: "postgres://\(user)@127.0.0.1:1/postgres"))
        }
        await #expect(throws: IAPError(.invalidConfiguration)) {
            _ = try await PostgresEntitlementStore(configuration: .init(url: "postgres://%zz@localhost/db"))
        }
        for schema in ["Public", "x; DROP TABLE y", "", "1abc", "pg_catalog", String(repeating: "a", count: 64)] {
            await #expect(throws: IAPError(.invalidConfiguration)) {
                _ = try await PostgresEntitlementStore(configuration: .init(url: url, schema: schema))
            }
        }
        await #expect(throws: IAPError(.invalidConfiguration)) {
            _ = try await PostgresEntitlementStore(configuration: .init(url: url, poolSize: 0))
        }
    }

    @Test func aStatementWaitingLongerThanTheStatementTimeoutIsCancelled() async throws {
        let url = try PostgresTestServer.requireURL()
        let schema = PostgresTestServer.freshSchema()
        // Another connection holds the lock every opening store takes to migrate its schema.
        let holder = try PostgresTestServer.HeldConnection(url: url)
        try holder.run("SELECT pg_advisory_lock(hashtext('swift-iap schema \(schema)'))")
        let configuration = PostgresEntitlementStore.Configuration(
            url: url,
            schema: schema,
            statementTimeout: .milliseconds(300)
        )
        let began = ContinuousClock.now
        let error = await #expect(throws: IAPError.self) {
            _ = try await PostgresEntitlementStore(configuration: configuration)
        }
        #expect(error?.code == .storageFailure)
        #expect(error?.message.contains("statement_timeout") == true, "\(String(describing: error))")
        #expect(ContinuousClock.now - began < .seconds(30))  // bounded, with room for a loaded machine
        try holder.run("SELECT pg_advisory_unlock_all()")
        // Once the lock is free, the schema opens as new: the cancelled migration left nothing behind. (With the
        // default timeout: parallel tests change the catalog too, and a migration may wait for them.)
        let store = try await PostgresEntitlementStore(configuration: .init(url: url, schema: schema))
        #expect(store.foundSchemaVersion == 0)
        try await store.dropSchema()
    }

    @Test func aServerThatDoesNotAnswerIsUnavailableAfterTheConnectTimeout() async throws {
        // A TEST-NET-1 address (RFC 5737): nothing answers there; connecting gives up after the timeout (or at
        // once when the network says it is unreachable).
        let configuration = PostgresEntitlementStore.Configuration(
            url: "postgres://iap@192.0.2.1:5432/postgres",
            connectTimeout: .seconds(2)
        )
        let began = ContinuousClock.now
        await #expect(throws: IAPError(.storageUnavailable)) {
            _ = try await PostgresEntitlementStore(configuration: configuration)
        }
        #expect(ContinuousClock.now - began < .seconds(30))  // bounded, with room for a loaded machine
    }

    @Test func theStoreReconnectsAfterTheServerDropsItsConnections() async throws {
        let name = "iap_reconnect_" + PostgresTestServer.freshSchema()
        let store = try await PostgresEntitlementStore(
            configuration: .init(
                url: try Self.url(adding: "application_name=\(name)"),
                schema: PostgresTestServer.freshSchema()
            )
        )
        _ = try await store.insert(Self.entry("2001"))
        let terminated = try PostgresTestServer.sql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(name)'"
        )
        #expect(!terminated.isEmpty)
        // Both a read and a write go through on new connections.
        #expect(try await store.entry(transactionId: "2001")?.transactionId == "2001")
        guard case .inserted = try await store.insert(Self.entry("2002")) else {
            Issue.record("an insert after the server dropped the connections did not go through")
            return
        }
        #expect(try await store.statistics().transactions == 2)
        try await store.dropSchema()
    }

    @Test func twoInstancesOnOneLedgerRecordAndClaimEachTransactionOnce() async throws {
        // Two stores with their own pools are what two processes of a backend are to the database.
        let first = try await PostgresTestServer.store(poolSize: 4)
        let second = try await PostgresTestServer.store(schema: first.configuration.schema, poolSize: 4)
        let ids = (0..<200).map { String(3_000_000 + $0) }
        let outcomes = try await withThrowingTaskGroup(of: (String, Bool, Bool).self) { group in
            for id in ids {
                for store in [first, second] {
                    group.addTask {
                        let outcome = try await store.insert(Self.entry(id, user: "user-\(id.suffix(1))"))
                        let stored: LedgerEntry
                        let inserted: Bool
                        switch outcome {
                        case .inserted(let entry): (stored, inserted) = (entry, true)
                        case .existing(let entry): (stored, inserted) = (entry, false)
                        }
                        // Each instance tries to claim the delivery, as the pipeline does, from revision 1.
                        var claim = stored
                        claim.deliveryAttempts = 1
                        claim.nextAttemptAt = Self.epoch.addingTimeInterval(120)
                        let claimed = try await store.replace(claim, ifRevision: 1)
                        return (id, inserted, claimed)
                    }
                }
            }
            var all: [(String, Bool, Bool)] = []
            for try await outcome in group {
                all.append(outcome)
            }
            return all
        }
        for id in ids {
            let mine = outcomes.filter { $0.0 == id }
            #expect(mine.filter(\.1).count == 1, "transaction \(id) was inserted \(mine.filter(\.1).count) times")
            #expect(mine.filter(\.2).count == 1, "transaction \(id) was claimed \(mine.filter(\.2).count) times")
        }
        let statistics = try await second.statistics()
        #expect(statistics.transactions == ids.count)
        #expect(try await first.entry(transactionId: ids[0])?.revision == 2)
        await second.close()
        try await first.dropSchema()
    }

    @Test func theCatalogIsSavedWithTheLedger() async throws {
        let store = try await PostgresTestServer.store()
        #expect(try await store.savedCatalog() == nil)
        let catalog = Data(#"{"products":[{"productId":"coins.100","type":"consumable","units":100}]}"#.utf8)
        try await store.saveCatalog(catalog)
        let replacement = Data(#"{"products":[]}"#.utf8)
        let other = try await PostgresTestServer.store(schema: store.configuration.schema)
        #expect(try await other.savedCatalog() == catalog)
        try await other.saveCatalog(replacement)
        #expect(try await store.savedCatalog() == replacement)
        await other.close()
        try await store.dropSchema()
    }

    @Test func keysPostgreSQLCannotHoldAreRefusedOnWriteAndFindNothingOnRead() async throws {
        let store = try await PostgresTestServer.store()
        await #expect(throws: IAPError(.invalidArgument)) {
            _ = try await store.insert(Self.entry("40\u{0}01"))
        }
        var withNul = Self.entry("4002")
        withNul.orderId = "order\u{0}1"
        await #expect(throws: IAPError(.invalidArgument)) {
            _ = try await store.insert(withNul)
        }
        #expect(try await store.entry(transactionId: "40\u{0}01") == nil)
        #expect(try await store.history(userId: "user\u{0}", cursor: nil, limit: 10).entries.isEmpty)
        #expect(try await store.statistics().transactions == 0)
        try await store.dropSchema()
    }

    @Test func allEntriesListsTheLedgerInInsertOrderAcrossPages() async throws {
        let store = try await PostgresTestServer.store()
        for index in 0..<12 {
            _ = try await store.insert(Self.entry(String(9_000 - index)))
        }
        let page = try await store.entries(afterSequence: 0, limit: 5)
        #expect(page.map(\.transactionId) == (0..<5).map { String(9_000 - $0) })
        let rest = try await store.entries(afterSequence: page.last?.sequence ?? 0, limit: 100)
        #expect(rest.count == 7)
        #expect(try await store.allEntries().map(\.transactionId) == (0..<12).map { String(9_000 - $0) })
        try await store.dropSchema()
    }

    @Test func aLookupColumnThatDisagreesWithItsEntryIsNamedByTheCheck() async throws {
        let store = try await PostgresTestServer.store()
        let schema = store.configuration.schema
        for index in 0..<5 {
            var entry = Self.entry(String(7_000 + index), user: "user-\(index % 2)")
            entry.deliveryState = .delivered
            entry.deliveredAt = Self.epoch
            _ = try await store.insert(entry)
        }
        // What the store wrote agrees with itself.
        #expect(try await store.indexProblems() == [])
        #expect(try await LedgerInvariants.check(store) == [])
        // A row whose user column says another user: the history of the entry's own user would miss it.
        _ = try PostgresTestServer.sql(
            "UPDATE \(schema).iap_ledger_entries SET user_id = 'mallory' WHERE transaction_id = '7003'"
        )
        _ = try PostgresTestServer.sql(
            "UPDATE \(schema).iap_ledger_entries SET original_transaction_id = '7000' WHERE transaction_id = '7001'"
        )
        let problems = try await store.indexProblems()
        #expect(
            problems == [
                "transaction 7001: its original_transaction_id column disagrees with the entry it holds",
                "transaction 7003: its user_id column disagrees with the entry it holds",
            ]
        )
        // The check adds them to what it finds in the entries (and the users it counts: mallory is one more).
        let findings = try await LedgerInvariants.examine(store)
        #expect(findings.problems.prefix(2) == problems[...])
        #expect(findings.problems.count == 3)
        #expect(findings.problems.last?.hasPrefix("the statistics say") == true)
        try await store.dropSchema()
    }

    @Test func claimsThatHoldAndClaimsWhoseDelivererStoppedAreCounted() async throws {
        let store = try await PostgresTestServer.store()
        let now = Self.epoch.addingTimeInterval(1_000)
        for (id, state, next) in [
            ("8001", DeliveryState.pending, now.addingTimeInterval(60)),
            ("8002", .pending, now.addingTimeInterval(-30)),
            ("8003", .pending, now.addingTimeInterval(-90)),
            ("8004", .retrying, now.addingTimeInterval(-10)),
            ("8005", .pending, nil),
        ] as [(String, DeliveryState, Date?)] {
            var entry = Self.entry(id)
            entry.deliveryState = state
            entry.nextAttemptAt = next
            entry.deliveryAttempts = next == nil ? 0 : 1
            _ = try await store.insert(entry)
        }
        let counts = try await store.claims(at: now)
        #expect(
            counts
                == ClaimCounts(
                    claimed: 1,
                    staleClaims: 2,
                    oldestStaleSince: now.addingTimeInterval(-90),
                    claimsHoldUntil: now.addingTimeInterval(60)
                )
        )
        #expect(
            try await store.claims(at: now.addingTimeInterval(-1_000))
                == ClaimCounts(claimed: 3, claimsHoldUntil: now.addingTimeInterval(60))
        )
        try await store.dropSchema()
    }
}
