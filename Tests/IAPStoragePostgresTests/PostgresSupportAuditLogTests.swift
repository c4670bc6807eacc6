import Foundation
import IAPCore
import IAPServerAPI
import IAPStoragePostgres
import IAPTestSupport
import Testing

/// The support audit in the ledger's schema: anchored to the ledger's identity, serialized across processes so the
/// chain never forks, and every change made outside the store found.
@Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
struct PostgresSupportAuditLogTests {
    static func entry(_ index: Int, actor: String = "agent-7") -> SupportAuditEntry {
        SupportAuditEntry(
            at: Date(millisecondsSince1970: 1_767_225_600_000 + Int64(index)),
            actor: actor,
            action: "lookup",
            orderId: "ORDER\(index)",
            userId: nil,
            outcomes: [.init(transactionId: "\(2_000_000_000_000_000 + index)", outcome: "shown")]
        )
    }

    /// A ledger on a fresh schema with `count` audit entries.
    static func audited(_ count: Int) async throws -> (PostgresEntitlementStore, PostgresSupportAuditLog) {
        let store = try await PostgresTestServer.store()
        let audit = try await PostgresSupportAuditLog(store: store)
        for index in 0..<count {
            try await audit.append(entry(index + 1))
        }
        return (store, audit)
    }

    @Test func theChainStartsFromTheLedgersIdentityWhichStaysFixed() async throws {
        let (store, audit) = try await Self.audited(3)
        let schema = store.configuration.schema
        let identity = try await store.ledgerIdentity()
        #expect(identity.count == 32 && identity.allSatisfy(\.isHexDigit))
        let entries = try await audit.entries()
        #expect(entries.map(\.sequence) == [1, 2, 3])
        #expect(entries.first?.previousHash == SupportAuditChain.anchor(ledgerId: identity))
        #expect(entries.allSatisfy { $0.osUser == SupportAuditChain.osUser && $0.actor == "agent-7" })
        let result = try await audit.verify()
        #expect(result.isIntact, "\(result.problems)")
        #expect(result.entryCount == 3 && result.recordedHead == result.head)
        await store.close()

        let reopened = try await PostgresTestServer.store(schema: schema)
        #expect(try await reopened.ledgerIdentity() == identity)
        let other = try await PostgresTestServer.store()
        #expect(try await other.ledgerIdentity() != identity)
        try await other.dropSchema()
        try await reopened.dropSchema()
    }

    /// Two processes appending at once: the advisory lock serializes them, so every entry follows exactly one.
    @Test func appendsFromTwoInstancesAtOnceNeverForkTheChain() async throws {
        let (first, firstAudit) = try await Self.audited(0)
        let second = try await PostgresTestServer.store(schema: first.configuration.schema)
        let secondAudit = try await PostgresSupportAuditLog(store: second)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (name, audit) in [("first", firstAudit), ("second", secondAudit)] {
                for index in 0..<20 {
                    group.addTask { try await audit.append(Self.entry(index, actor: name)) }
                }
            }
            try await group.waitForAll()
        }
        let result = try await secondAudit.verify()
        #expect(result.isIntact, "\(result.problems)")
        #expect(result.entryCount == 40)
        #expect(try await firstAudit.entries().map(\.sequence) == Array(1...40))
        await second.close()
        try await first.dropSchema()
    }

    @Test func everyChangeMadeOutsideTheStoreIsFoundAndTheHeadRefusesTheNextAppend() async throws {
        let cases: [(String, (String) -> String, [Int?], Bool)] = [
            (
                "an edited entry",
                { "UPDATE \($0).iap_support_audit SET entry = replace(entry, 'ORDER2', 'ORDER9') WHERE sequence = 2" },
                [3], false
            ),
            (
                "an edited last entry",
                { "UPDATE \($0).iap_support_audit SET entry = replace(entry, 'ORDER4', 'ORDER9') WHERE sequence = 4" },
                [4], true
            ),
            ("a deleted entry", { "DELETE FROM \($0).iap_support_audit WHERE sequence = 2" }, [2, 2, 3, nil], true),
            (
                "reordered entries",
                {
                    "UPDATE \($0).iap_support_audit SET sequence = 100 WHERE sequence = 2; "
                        + "UPDATE \($0).iap_support_audit SET sequence = 2 WHERE sequence = 3; "
                        + "UPDATE \($0).iap_support_audit SET sequence = 3 WHERE sequence = 100"
                },
                [2, 2, 3, 3, 4], false
            ),
            ("the end cut off", { "DELETE FROM \($0).iap_support_audit WHERE sequence > 2" }, [nil], true),
            ("an emptied log", { "DELETE FROM \($0).iap_support_audit" }, [nil], true),
        ]
        for (name, damage, entries, refused) in cases {
            let (store, audit) = try await Self.audited(4)
            try PostgresTestServer.sql(damage(store.configuration.schema))
            let result = try await audit.verify()
            #expect(result.problems.map(\.entry) == entries, "\(name): \(result.problems)")
            #expect(result.problems.allSatisfy { $0.entry == nil || $0.location.hasPrefix("row ") }, "\(name)")
            if refused {
                await #expect(throws: IAPError(.storageCorrupted), "\(name)") { try await audit.append(Self.entry(9)) }
            } else {
                #expect(try await audit.append(Self.entry(9)).sequence == 5, "\(name)")
            }
            try await store.dropSchema()
        }
    }

    /// A ledger made before the audit's migration: the migration (found by its description, whatever its number)
    /// gives it an identity, and its audit starts empty and intact.
    @Test func aLedgerFromBeforeTheAuditsMigrationGetsItsIdentityWhenMigrated() async throws {
        let store = try await PostgresTestServer.store()
        let schema = store.configuration.schema
        await store.close()
        let audit = "description LIKE 'the ledger''s identity and the chained support audit%'"
        let version = try #require(
            try PostgresTestServer.sql("SELECT version FROM \(schema).iap_schema_migrations WHERE \(audit)").first
        )
        try PostgresTestServer.sql(
            "DROP TABLE \(schema).iap_ledger_identity, \(schema).iap_support_audit, \(schema).iap_support_audit_head; "
                + "DELETE FROM \(schema).iap_schema_migrations WHERE \(audit)"
        )
        let migrated = try await PostgresTestServer.store(schema: schema)
        #expect(
            try PostgresTestServer.sql("SELECT version FROM \(schema).iap_schema_migrations WHERE \(audit)") == [
                version
            ]
        )
        #expect(try await migrated.ledgerIdentity().count == 32)
        #expect(try await PostgresSupportAuditLog(store: migrated).verify().isIntact)
        try await migrated.dropSchema()
    }
}
