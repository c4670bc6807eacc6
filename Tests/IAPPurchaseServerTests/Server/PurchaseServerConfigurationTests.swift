import Foundation
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPStorageFile
import IAPTesting
import Testing

/// What `PurchaseServer.Configuration` says reaches the server: every delivery policy as one value, a transactional
/// grant path, and a configuration refused before anything is started.
@Suite("Purchase server configuration")
struct PurchaseServerConfigurationTests {
    /// A site whose ledger is in memory (a transactional store can wrap it) and whose side stores are a file site's.
    final class MemorySite: LedgerSite {
        let memory = InMemoryEntitlementStore()
        let files: FileLedgerSite

        init(directory: URL) throws {
            files = try FileLedgerSite(directory: directory, access: .create)
        }

        var store: any ListableEntitlementStore { memory }
        var description: String { "memory" }
        var isShared: Bool { false }
        func retryPolicy(for use: LedgerUse) -> RetryPolicy { files.retryPolicy(for: use) }
        func reconciliationCheckpoints() async throws -> any ReconciliationCheckpointStore {
            try await files.reconciliationCheckpoints()
        }
        func supportAudit(
            observer: @escaping @Sendable (LedgerGuardedSupportAuditLog.Standing) -> Void
        ) async throws -> LedgerGuardedSupportAuditLog {
            try await files.supportAudit(observer: observer)
        }
        func verifySupportAudit() async throws -> SupportAuditVerification { try await files.verifySupportAudit() }
        func resealSupportAudit(with entry: SupportAuditEntry) async throws -> SupportAuditHead {
            try await files.resealSupportAudit(with: entry)
        }
        func exclusiveRunLock(named name: String) throws -> any ExclusiveRunLock {
            try files.exclusiveRunLock(named: name)
        }
        func savedCatalog() async throws -> Data? { try await files.savedCatalog() }
        func saveCatalog(_ data: Data) async throws { try await files.saveCatalog(data) }
        func close() async { await files.close() }
    }

    @Test func everyDeliveryPolicyReachesThePipelineAsOneValue() async throws {
        let setup = try PurchaseServerTests.Setup()
        defer { setup.remove() }
        var configuration = try setup.configuration()
        // The server's claim duration comes from the site; the rest are the pipeline's defaults.
        #expect(configuration.delivery.retry.claimDuration == LedgerUse.serverClaimDuration)
        #expect(configuration.delivery.sandbox == .grant)
        #expect(configuration.delivery.proratedRefunds == .keepAccess)
        configuration.delivery.sandbox = .refuse
        configuration.delivery.unclaimedTokens = .tokenIsUser
        configuration.delivery.proratedRefunds = .revokeAccess
        configuration.delivery.unknownProducts = .signedType
        configuration.delivery.retry = RetryPolicy(maximumAttempts: 3, claimDuration: .seconds(45))
        let server = try PurchaseServer(configuration)
        let policies = server.pipeline.policies
        #expect(policies.sandbox == .refuse)
        #expect(policies.unclaimedTokens == .tokenIsUser)
        #expect(policies.proratedRefunds == .revokeAccess)
        #expect(policies.unknownProducts == .signedType)
        #expect(policies.retry.maximumAttempts == 3)
        #expect(policies.retry.claimDuration == .seconds(45))
        await server.stop()
    }

    @Test func aSandboxPolicyGivenToTheServerDecidesWhatItsRoutesDeliver() async throws {
        let setup = try PurchaseServerTests.Setup()
        defer { setup.remove() }
        var configuration = try setup.configuration()
        // The simulated App Store signs Production; a server that accepts Sandbox too is a production server, and a
        // sandbox purchase on it meets the policy.
        let sandboxStore = try SimulatedAppStore(
            products: setup.appStore.products,
            configuration: .init(environment: .sandbox),
            clock: ManualClock(now: SystemClock().now)
        )
        var trusted = sandboxStore.verifierConfiguration
        trusted.environments = [.production, .sandbox]
        configuration.verifier = try AppStoreSignedDataVerifier(configuration: trusted)
        configuration.delivery.sandbox = .refuse
        let server = try PurchaseServer(configuration)
        try await server.start()
        let purchase = try #require(
            try await sandboxStore.purchase(productId: "coins.100", account: "carol").transaction
        )
        let answer = try await PurchaseServerTests.post(
            server,
            "/iap/v1/transactions",
            body: #"{"signedTransaction":"\#(purchase.signedTransaction)"}"#,
            headers: ["Authorization": "Bearer \(try PurchaseServerTests.userToken("carol"))"]
        )
        let body = String(decoding: answer.body, as: UTF8.self)
        #expect(answer.status >= 400 && answer.status < 500, "\(answer.status) \(body)")
        let entry = try await server.pipeline.store.entry(transactionId: try #require(purchase.payload.transactionId))
        #expect(entry == nil, "a refused sandbox purchase is not recorded")
        await server.stop()
    }

    @Test func aTransactionalGrantPathGrantsInTheLedgersOwnWrite() async throws {
        let setup = try PurchaseServerTests.Setup()
        defer { setup.remove() }
        var configuration = try setup.configuration()
        await configuration.site.close()
        let site = try MemorySite(directory: setup.directory)
        let wallet = InMemoryTransactionalFulfillmentStore(store: site.memory)
        configuration.site = site
        configuration.grant = .transactional(wallet, description: "transactional wallet")
        let server = try PurchaseServer(configuration)
        try await server.start()
        let purchase = try #require(
            try await setup.appStore.purchase(productId: "coins.100", account: "dave").transaction
        )
        for _ in 0..<2 {
            let answer = try await PurchaseServerTests.post(
                server,
                "/iap/v1/transactions",
                body: #"{"signedTransaction":"\#(purchase.signedTransaction)"}"#,
                headers: ["Authorization": "Bearer \(try PurchaseServerTests.userToken("dave"))"]
            )
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        }
        // Granted once, in the write that recorded it.
        #expect(wallet.balance("dave") == 100)
        #expect(wallet.committed.count == 1)
        let entry = await site.memory.entry(transactionId: try #require(purchase.payload.transactionId))
        #expect(entry?.deliveryState == .delivered)
        await server.stop()
    }

    @Test func aTransactionalStoreOverAnotherLedgerIsRefusedBeforeAnythingStarts() async throws {
        let setup = try PurchaseServerTests.Setup()
        defer { setup.remove() }
        var configuration = try setup.configuration()
        configuration.grant = .transactional(InMemoryTransactionalFulfillmentStore(), description: "elsewhere")
        let error = try #require(throws: IAPError.self) { try PurchaseServer(configuration) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("does not write into the ledger"))
        await configuration.site.close()
    }

    @Test(arguments: ["example.com", "", "127.0.0.1.5", "::1::2"])
    func anAddressThatIsNotOneIsRefusedBeforeAnythingStarts(_ host: String) async throws {
        let setup = try PurchaseServerTests.Setup()
        defer { setup.remove() }
        var configuration = try setup.configuration()
        configuration.http.host = host
        let error = try #require(throws: IAPError.self) { try PurchaseServer(configuration) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("is not an IPv4 or IPv6 address"))
        await configuration.site.close()
    }

    @Test func limitsOutOfRangeAreRefusedBeforeAnythingStarts() async throws {
        let setup = try PurchaseServerTests.Setup()
        defer { setup.remove() }
        var configuration = try setup.configuration()
        configuration.http.maximumConnections = 0
        let error = try #require(throws: IAPError.self) { try PurchaseServer(configuration) }
        #expect(error.code == .invalidConfiguration)
        await configuration.site.close()
    }
}
