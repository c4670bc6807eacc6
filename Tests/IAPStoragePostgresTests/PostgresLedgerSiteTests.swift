import Foundation
import IAPCore
import IAPServerAPI
import IAPStoragePostgres
import IAPTestSupport
import Testing

/// A PostgreSQL ledger's site: the store and what is kept beside it in its schema, shared by every instance.
@Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
struct PostgresLedgerSiteTests {
    static let entry = SupportAuditEntry(
        at: Date(millisecondsSince1970: 1_767_225_600_000),
        actor: "agent-7",
        action: "lookup",
        orderId: "ORDER1",
        userId: nil,
        outcomes: []
    )

    static func configuration(
        schema: String = PostgresTestServer.freshSchema(),
        create: Bool = true
    ) throws -> PostgresEntitlementStore.Configuration {
        .init(url: try PostgresTestServer.requireURL(), schema: schema, createIfMissing: create)
    }

    @Test func opensOnlyALedgerThatExistsUnlessToldToCreateIt() async throws {
        let configuration = try Self.configuration(create: false)
        await #expect(throws: IAPError(.notFound)) { try await PostgresLedgerSite(configuration: configuration) }
        var creating = configuration
        creating.createIfMissing = true
        let site = try await PostgresLedgerSite(configuration: creating)
        #expect(site.description == "PostgreSQL schema \(configuration.schema)")
        #expect(!site.description.contains("iap:iap"))
        await site.close()
        let reopened = try await PostgresLedgerSite(configuration: configuration)
        try await reopened.postgresStore.dropSchema()
        await reopened.close()
    }

    @Test func keepsTheCatalogCheckpointsAndAuditInTheSchemaForEveryInstance() async throws {
        let configuration = try Self.configuration()
        let first = try await PostgresLedgerSite(configuration: configuration)
        let second = try await PostgresLedgerSite(configuration: configuration)
        let catalog = Data(#"{"products":[]}"#.utf8)
        #expect(try await second.savedCatalog() == nil)
        try await first.saveCatalog(catalog)
        #expect(try await second.savedCatalog() == catalog)

        try await first.reconciliationCheckpoints().saveCheckpoint(
            .init(
                customerKey: "alice",
                historyRevision: "r1",
                refundRevision: nil,
                reconciledAt: Date(millisecondsSince1970: 1_767_225_600_000)
            )
        )
        #expect(try await second.reconciliationCheckpoints().checkpoint(customerKey: "alice")?.historyRevision == "r1")

        let audit = try await first.supportAudit(observer: { _ in })
        #expect(await audit.standing == .writable)
        try await audit.append(Self.entry)
        try await second.supportAudit(observer: { _ in }).append(Self.entry)
        let verification = try await first.verifySupportAudit()
        #expect(verification.isIntact && verification.entryCount == 2, "\(verification.problems)")
        #expect(verification.ledgerHead == verification.head)

        // One instance at a time holds the reconciliation's lock.
        let lease = try #require(try await first.reconciliationLock().tryLock())
        #expect(try await second.reconciliationLock().tryLock() == nil)
        await lease.release()

        await first.close()
        try await second.postgresStore.dropSchema()
        await second.close()
    }

    @Test func aSharedLedgersCommandsKeepTheDefaultClaimAndAServersHoldThirtySeconds() async throws {
        let site = try await PostgresLedgerSite(configuration: try Self.configuration())
        #expect(site.isShared)
        #expect(site.retryPolicy(for: .command) == RetryPolicy())
        #expect(site.retryPolicy(for: .server).claimDuration == .seconds(30))
        try await site.postgresStore.dropSchema()
        await site.close()
    }

    @Test func closeClosesTheLedgerAndWhatWasOpenedBesideIt() async throws {
        let configuration = try Self.configuration()
        let site = try await PostgresLedgerSite(configuration: configuration)
        _ = try await site.reconciliationCheckpoints()
        _ = try await site.supportAudit(observer: { _ in })
        await site.close()
        await #expect(throws: IAPError(.storageFailure)) { try await site.reconciliationCheckpoints() }
        await #expect(throws: IAPError(.storageFailure)) { try await site.supportAudit(observer: { _ in }) }
        await #expect(throws: IAPError.self) { try await site.store.statistics() }
        let cleanup = try await PostgresTestServer.store(schema: configuration.schema)
        try await cleanup.dropSchema()
        await cleanup.close()
    }

    @Test func anAuditEmptiedOutsideTheStoreOpensRefusingUntilResealed() async throws {
        let configuration = try Self.configuration()
        let site = try await PostgresLedgerSite(configuration: configuration)
        let audit = try await site.supportAudit(observer: { _ in })
        try await audit.append(Self.entry)
        await site.close()
        try PostgresTestServer.sql(
            "DELETE FROM \(configuration.schema).iap_support_audit; DELETE FROM \(configuration.schema).iap_support_audit_head"
        )

        let refused = try await PostgresLedgerSite(configuration: configuration)
        guard case .refused = try await refused.supportAudit(observer: { _ in }).standing else {
            Issue.record("an emptied audit was accepted")
            return
        }
        #expect(try await !refused.verifySupportAudit().isIntact)
        var reseal = Self.entry
        reseal.action = "audit.reseal"
        #expect(try await refused.resealSupportAudit(with: reseal).entries == 1)
        await refused.close()

        let resealed = try await PostgresLedgerSite(configuration: configuration)
        #expect(try await resealed.supportAudit(observer: { _ in }).standing == .writable)
        try await resealed.postgresStore.dropSchema()
        await resealed.close()
    }
}
