import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTestSupport
import IAPTesting
import Testing

/// One pipeline, one ledger, two apps: each purchase goes to its own app's verifier and catalog, and nothing of one
/// app touches the other's entries.
struct SeveralAppsDeliveryTests {
    static let proBundleId = "com.example.shop.pro"

    /// The second app sells a product with the first one's id, as something else: 500 coins.
    static func proCatalog() throws -> StaticProductCatalog {
        try StaticProductCatalog(products: [
            CatalogProduct(productId: "pro.lifetime", kind: .consumable, entitlements: [], unitsPerPurchase: 500)
        ])
    }

    static func verifier(
        _ shop: Shop,
        bundleId: String,
        environments: Set<AppStoreEnvironment>
    ) throws -> AppStoreSignedDataVerifier {
        try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [shop.pki.root],
                bundleId: bundleId,
                environments: environments,
                appAppleId: environments.contains(.production) ? 1_234_567_890 : nil
            )
        )
    }

    /// The shop's app on production and sandbox, the pro app on sandbox only.
    static func pipeline(
        _ shop: Shop,
        policy: SandboxPolicy = .grant,
        events: InMemoryEventSink = InMemoryEventSink()
    ) throws -> DeliveryPipeline {
        let verifier = try AppRoutingVerifier([
            Shop.bundleId: try verifier(shop, bundleId: Shop.bundleId, environments: [.production, .sandbox]),
            proBundleId: try verifier(shop, bundleId: proBundleId, environments: [.sandbox]),
        ])
        let catalog = try AppRoutingCatalog([Shop.bundleId: shop.catalog, proBundleId: try proCatalog()])
        return DeliveryPipeline(
            verifier: verifier,
            catalog: catalog,
            store: shop.store,
            hook: shop.wallet,
            clock: shop.clock,
            retryPolicy: RetryPolicy(jitter: 0),
            sandboxPolicy: policy,
            events: events
        )
    }

    static func proPurchase(_ shop: inout Shop) -> TransactionPayload {
        var transaction = shop.transaction("pro.lifetime")
        transaction.bundleId = proBundleId
        transaction.type = .consumable
        return transaction
    }

    @Test func eachAppsPurchaseMeetsItsOwnCatalog() async throws {
        var shop = try Shop()
        let pipeline = try Self.pipeline(shop)
        let shopPurchase = shop.transaction("pro.lifetime")
        let proPurchase = Self.proPurchase(&shop)

        #expect(await pipeline.submit(signedTransaction: try shop.sign(shopPurchase), userId: "alice").isDelivered)
        #expect(await pipeline.submit(signedTransaction: try shop.sign(proPurchase), userId: "alice").isDelivered)

        let grants = shop.wallet.calls.filter { $0.action == .grant }
        #expect(grants.map(\.product.kind) == [.nonConsumable, .consumable])
        #expect(grants.map(\.transaction.bundleId) == [Shop.bundleId, Self.proBundleId])
        #expect(grants.last?.units == 500)
        let entries = try await shop.memory.history(userId: "alice", cursor: nil, limit: 10).entries
        #expect(Set(entries.compactMap(\.transaction.bundleId)) == [Shop.bundleId, Self.proBundleId])
    }

    @Test func dataOfAnAppNotServedIsRefusedBeforeAnyVerifierSeesIt() async throws {
        var shop = try Shop()
        let pipeline = try Self.pipeline(shop)
        var stranger = shop.transaction("pro.lifetime")
        stranger.bundleId = "com.example.stranger"
        guard
            case .rejected(let error) = await pipeline.submit(
                signedTransaction: try shop.sign(stranger),
                userId: "alice"
            )
        else {
            Issue.record("a purchase of an app the server does not serve must be refused")
            return
        }
        #expect(error.code == .bundleIdMismatch)
        #expect(error.message.contains("com.example.stranger"))
        #expect(error.message.contains(Self.proBundleId))
        #expect(try await shop.memory.history(userId: "alice", cursor: nil, limit: 10).entries.isEmpty)

        for garbage in ["", "a.b", "a.!!!.c", "a.\(Base64.encodeURL(Array("[1]".utf8))).c"] {
            await #expect(throws: IAPError.self) { try await pipeline.verifier.verifyTransaction(garbage) }
        }
        #expect(shop.wallet.calls.isEmpty)
    }

    @Test func oneAppsDataNeverChangesTheOthersEntry() async throws {
        var shop = try Shop()
        let events = InMemoryEventSink()
        let pipeline = try Self.pipeline(shop, events: events)
        let purchase = shop.transaction("pro.lifetime")
        let transactionId = try #require(purchase.transactionId)
        #expect(await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice").isDelivered)

        // The other app's refund with the same id: refused, the entry left as it was.
        var refund = purchase
        refund.bundleId = Self.proBundleId
        refund.revocationDate = shop.clock.now
        refund.revocationReason = .refundedForOtherReason
        refund.signedDate = shop.clock.now.addingTimeInterval(60)
        for outcome in [
            await pipeline.submit(signedTransaction: try shop.sign(refund), userId: nil),
            await pipeline.deliver(refund, userId: "mallory"),
        ] {
            guard case .rejected(let error) = outcome else {
                Issue.record("another app's refund must be refused, got \(outcome.name)")
                continue
            }
            #expect(error.code == .bundleIdMismatch)
        }
        let entry = try #require(await shop.memory.entry(transactionId: transactionId))
        #expect(entry.transaction.bundleId == Shop.bundleId)
        #expect(entry.revokedAt == nil)
        #expect(entry.userId == "alice")

        // The other app's renewal of this purchase family: refused, nothing recorded.
        var renewal = Self.proPurchase(&shop)
        renewal.originalTransactionId = transactionId
        guard case .rejected(let error) = await pipeline.deliver(renewal, userId: nil) else {
            Issue.record("another app's transaction continuing this family must be refused")
            return
        }
        #expect(error.code == .bundleIdMismatch)
        #expect(await shop.memory.entries(originalTransactionId: transactionId).count == 1)
        #expect(shop.wallet.calls.map(\.action) == [.grant])
        #expect(events.events.filter { $0.event == "delivery.appConflict" }.count == 3)
    }

    @Test func eachAppMeetsTheSandboxPolicyByItsOwnEnvironments() async throws {
        var shop = try Shop()
        let pipeline = try Self.pipeline(shop, policy: .refuse)
        #expect(pipeline.isProductionServer)
        // The shop's app runs on production: its sandbox purchase is refused; the pro app is a sandbox-only app.
        guard
            case .rejected(let refused) = await pipeline.submit(
                signedTransaction: try shop.sign(shop.transaction("pro.lifetime")),
                userId: "alice"
            )
        else {
            Issue.record("a sandbox purchase of the production app must meet the refuse policy")
            return
        }
        #expect(refused.code == .sandboxPurchaseRefused)
        let pro = Self.proPurchase(&shop)
        #expect(await pipeline.submit(signedTransaction: try shop.sign(pro), userId: "bob").isDelivered)
        #expect(shop.wallet.balance("bob") == 500)
    }

    @Test func aNotificationGoesToItsAppAndAnotherAppsRenewalInfoIsLeftAlone() async throws {
        var shop = try Shop()
        let pipeline = try Self.pipeline(shop)
        let processor = NotificationProcessor(pipeline: pipeline)
        let token = UUID().uuidString.lowercased()
        _ = try await shop.memory.bind(appAccountToken: token, to: "carol")
        var pro = Self.proPurchase(&shop)
        pro.appAccountToken = token
        let notification = NotificationPayload(
            notificationType: .oneTimeCharge,
            notificationUUID: UUID().uuidString,
            data: NotificationData(
                environment: .sandbox,
                bundleId: Self.proBundleId,
                signedTransactionInfo: try shop.sign(pro)
            ),
            version: "2.0",
            signedDate: shop.clock.now
        )
        let body = try JSONEncoder().encode(["signedPayload": try shop.signer.sign(notification)])
        #expect(await processor.handle(body: body).status == 200)
        #expect(shop.wallet.balance("carol") == 500)

        // A renewal info sent for the pro app about the shop app's subscription changes nothing.
        let subscription = shop.transaction("plus.monthly")
        let original = try #require(subscription.originalTransactionId)
        #expect(await pipeline.submit(signedTransaction: try shop.sign(subscription), userId: "carol").isDelivered)
        let renewal = RenewalInfoPayload(
            originalTransactionId: original,
            autoRenewStatus: .off,
            signedDate: shop.clock.now,
            environment: .sandbox
        )
        await #expect(throws: IAPError.self) {
            try await pipeline.checkEnvironment(of: renewal, bundleId: Self.proBundleId)
        }
        try await pipeline.checkEnvironment(of: renewal, bundleId: Shop.bundleId)
        let signedRenewal = try shop.signer.sign(renewal)
        let verified = try await pipeline.verifier.verifyRenewalInfo(signedRenewal)
        #expect(verified.originalTransactionId == original)
    }

    @Test func aDrainOfOneAppLeavesAnotherAppsRetryToThatAppsDeliverer() async throws {
        var shop = try Shop()
        let both = try Self.pipeline(shop)
        // The wallet is down for the pro app's purchase: it waits for a retry.
        shop.wallet.failNext(1)
        let pro = Self.proPurchase(&shop)
        let transactionId = try #require(pro.transactionId)
        #expect(!(await both.submit(signedTransaction: try shop.sign(pro), userId: "bob").isDelivered))
        shop.clock.advance(by: .seconds(3_600))

        // A pipeline of the shop's app alone (its verifier names its bundle id) leaves it as it was.
        let shopOnly = shop.pipeline()
        #expect(shopOnly.verifier.bundleIds == [Shop.bundleId])
        let skipped = await shopOnly.drainDueRetries()
        #expect(skipped.delivered == 0 && skipped.skipped == 1)
        #expect(await shop.memory.entry(transactionId: transactionId)?.deliveryState == .retrying)
        #expect(shop.wallet.balance("bob") == 0)

        // The pipeline of both apps delivers it, by the pro app's catalog.
        let drained = await both.drainDueRetries()
        #expect(drained.delivered == 1)
        #expect(shop.wallet.balance("bob") == 500)
    }

    @Test func theCatalogOfSeveralAppsAnswersWithoutABundleIdOnlyWhenUnambiguous() async throws {
        let shop = try Shop()
        let catalog = try AppRoutingCatalog([Shop.bundleId: shop.catalog, Self.proBundleId: try Self.proCatalog()])
        #expect(catalog.bundleIds == [Shop.bundleId, Self.proBundleId])
        #expect(try await catalog.product(id: "pro.lifetime", bundleId: Self.proBundleId).kind == .consumable)
        #expect(try await catalog.product(id: "pro.lifetime", bundleId: Shop.bundleId).kind == .nonConsumable)
        #expect(try await catalog.product(id: "coins.100").unitsPerPurchase == 100)
        await expectCode(.invalidConfiguration) { _ = try await catalog.product(id: "pro.lifetime") }
        await expectCode(.invalidConfiguration) { _ = try await catalog.allProducts() }
        await expectCode(.unknownProduct) { _ = try await catalog.product(id: "coins.100", bundleId: "com.other") }
        await expectCode(.unknownProduct) {
            _ = try await catalog.product(id: "coins.100", bundleId: Self.proBundleId)
        }

        let twice = try AppRoutingCatalog(["a": shop.catalog, "b": shop.catalog])
        #expect(try await twice.allProducts().count == shop.catalog.allProducts().count)
        #expect(throws: IAPError.self) { _ = try AppRoutingCatalog([:]) }
        #expect(throws: IAPError.self) { _ = try AppRoutingVerifier([:]) }
        #expect(throws: IAPError.self) { _ = try AppRoutingVerifier(["": shop.verifier]) }
    }

    private func expectCode(
        _ code: IAPError.Code,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("expected \(code.rawValue)", sourceLocation: sourceLocation)
        } catch let error as IAPError {
            #expect(error.code == code, sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }
}
