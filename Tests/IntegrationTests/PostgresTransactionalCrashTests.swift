import Foundation
import IAPCore
import IAPTestSupport
import Testing

/// Transactional fulfillment killed at every step: a process delivering (then refunding) purchases into a wallet
/// in the ledger's database is killed with SIGKILL between the ledger's write and the wallet's, between the wallet's
/// and the commit, and after the commit; at every moment, and after a restart has delivered everything, the wallet
/// holds exactly what the ledger says was granted. The child is `PostgresFulfillmentCrashHelper`, built with the
/// tests.
@Suite(
    "Transactional fulfillment killed at every step",
    .enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason)
)
struct PostgresTransactionalCrashTests {
    static func helper() throws -> URL {
        let iap = try EmulatorProcess.binary()
        let helper = iap.deletingLastPathComponent().appending(path: "PostgresFulfillmentCrashHelper")
        guard FileManager.default.isExecutableFile(atPath: helper.path) else {
            throw IAPError(
                .invalidConfiguration,
                "no PostgresFulfillmentCrashHelper next to \(iap.path); build the tests"
            )
        }
        return helper
    }

    /// Runs the helper; returns its exit status, or the signal that ended it (negated).
    static func run(_ arguments: [String]) async throws -> Int32 {
        let run = try await ChildProcess.run(try helper(), arguments)
        return run.endedBySignal ? -run.status : run.status
    }

    /// Per user: the coins in the wallet, and the units the ledger says were granted and not taken back.
    static func wallet(_ schema: String) throws -> [String: (wallet: Int64, ledger: Int64)] {
        let rows = try PostgresTestServer.sql(
            """
            SELECT coalesce(l.user_id, w.user_id) || ' ' || coalesce(w.coins, 0) || ' ' || coalesce(l.owed, 0)
            FROM (
                SELECT user_id, sum(CASE
                    WHEN entry->>'deliveredAt' IS NOT NULL
                        AND NOT (revoked_at IS NOT NULL AND (entry->>'revocationDelivered')::boolean)
                    THEN (entry->>'grantedUnits')::bigint ELSE 0 END) AS owed
                FROM \(schema).iap_ledger_entries GROUP BY user_id
            ) AS l
            FULL JOIN \(schema).wallet AS w ON w.user_id = l.user_id
            """
        )
        var found: [String: (Int64, Int64)] = [:]
        for row in rows {
            let fields = row.split(separator: " ")
            found[String(fields[0])] = (Int64(fields[1]) ?? -1, Int64(fields[2]) ?? -1)
        }
        return found
    }

    static func expectAgreement(_ schema: String, _ when: String) throws {
        for (user, coins) in try wallet(schema) {
            #expect(
                coins.wallet == coins.ledger,
                "\(when): \(user) holds \(coins.wallet), the ledger says \(coins.ledger)"
            )
        }
    }

    static func freshLedger() throws -> (url: String, schema: String) {
        let url = try PostgresTestServer.requireURL()
        let schema = PostgresTestServer.freshSchema()
        try PostgresTestServer.sql(
            """
            CREATE SCHEMA \(schema);
            CREATE TABLE \(schema).wallet (user_id text PRIMARY KEY, coins bigint NOT NULL);
            """
        )
        return (url, schema)
    }

    /// The helper's phase: one purchase after another, or all at once with group commit (several deliveries in
    /// each transaction).
    static func phase(_ phase: String, grouped: Bool) -> String {
        grouped ? "grouped-" + phase : phase
    }

    @Test(arguments: ["written", "granted", "committed"], [false, true])
    func killedWhileGrantingTheWalletAndTheLedgerAgree(step: String, grouped: Bool) async throws {
        let (url, schema) = try Self.freshLedger()
        let grant = Self.phase("grant", grouped: grouped)
        // Three crashes in a row, each a little further on (the first grant of every fourth purchase fails, so
        // some of them die while a retry is recorded or carried out).
        for occurrence in [1, 3, 5] {
            let status = try await Self.run([url, schema, grant, step, String(occurrence)])
            #expect(status == -SIGKILL, "the helper was to die at \(step) #\(occurrence), it ended with \(status)")
            try Self.expectAgreement(schema, "killed at \(step) #\(occurrence)")
        }
        #expect(try await Self.run([url, schema, grant]) == 0)
        try Self.expectAgreement(schema, "after the restart")
        let coins = try Self.wallet(schema)
        #expect(coins.mapValues(\.wallet) == ["user-0": 400, "user-1": 400, "user-2": 400])
        #expect(
            try PostgresTestServer.sql(
                "SELECT count(*) FROM \(schema).iap_ledger_entries WHERE delivery_state = 'delivered'"
            ) == ["12"]
        )
        try PostgresTestServer.sql("DROP SCHEMA \(schema) CASCADE")
    }

    @Test(arguments: ["written", "granted", "committed"], [false, true])
    func killedWhileTakingBackRefundsTheWalletAndTheLedgerAgree(step: String, grouped: Bool) async throws {
        let (url, schema) = try Self.freshLedger()
        let refund = Self.phase("refund", grouped: grouped)
        #expect(try await Self.run([url, schema, Self.phase("grant", grouped: grouped)]) == 0)
        for occurrence in [1, 3] {
            let status = try await Self.run([url, schema, refund, step, String(occurrence)])
            #expect(status == -SIGKILL, "the helper was to die at \(step) #\(occurrence), it ended with \(status)")
            try Self.expectAgreement(schema, "killed at \(step) #\(occurrence) of the refunds")
        }
        #expect(try await Self.run([url, schema, refund]) == 0)
        try Self.expectAgreement(schema, "after the restart")
        // Purchases 0 to 5 were refunded: two of each user's four.
        #expect(try Self.wallet(schema).mapValues(\.wallet) == ["user-0": 200, "user-1": 200, "user-2": 200])
        #expect(
            try PostgresTestServer.sql(
                "SELECT count(*) FROM \(schema).iap_ledger_entries WHERE (entry->>'revocationDelivered')::boolean"
            ) == ["6"]
        )
        try PostgresTestServer.sql("DROP SCHEMA \(schema) CASCADE")
    }
}
