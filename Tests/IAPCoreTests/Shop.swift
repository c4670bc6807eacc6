import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTesting

/// A shop: a test PKI that signs like the App Store, a verifier trusting it, a catalog, a ledger and a wallet.
struct Shop {
    static let bundleId = "com.example.shop"
    static let start = Date(millisecondsSince1970: 1_767_225_600_000)  // 2026-01-01

    let pki: TestPKI
    let signer: JWSSigner
    let verifier: AppStoreSignedDataVerifier
    let catalog: StaticProductCatalog
    let memory = InMemoryEntitlementStore()
    let store: FaultInjectingEntitlementStore
    let wallet = RecordingFulfillmentHook()
    let clock = ManualClock(now: Shop.start)
    var nextId = 2_000_000_000_000_001

    init() throws {
        pki = try TestPKI.generate(
            TestPKI.Options(
                notBefore: Date(millisecondsSince1970: 1_704_067_200_000),
                notAfter: Date(millisecondsSince1970: 1_893_456_000_000)
            )
        )
        signer = JWSSigner(key: pki.leafKey, certificateChain: pki.x5c)
        verifier = try AppStoreSignedDataVerifier(
            configuration: .init(rootCertificates: [pki.root], bundleId: Shop.bundleId, environment: .sandbox)
        )
        catalog = try StaticProductCatalog(products: [
            CatalogProduct(productId: "coins.100", kind: .consumable, entitlements: [], unitsPerPurchase: 100),
            CatalogProduct(productId: "pro.lifetime", kind: .nonConsumable, entitlements: ["pro"]),
            CatalogProduct(
                productId: "plus.monthly",
                kind: .autoRenewable,
                subscriptionGroupId: "plus",
                groupLevel: 1,
                entitlements: ["plus"]
            ),
        ])
        store = FaultInjectingEntitlementStore(wrapping: memory)
    }

    func pipeline(
        catalog: (any ProductCatalog)? = nil,
        retryPolicy: RetryPolicy = RetryPolicy(jitter: 0),
        tokenOwnership: TokenOwnershipCheck? = nil,
        proratedRefunds: ProratedRefundPolicy = .keepAccess,
        events: any EventSink = DiscardingEventSink()
    ) -> DeliveryPipeline {
        let chosen: any ProductCatalog = catalog ?? self.catalog
        return DeliveryPipeline(
            verifier: verifier,
            catalog: chosen,
            store: store,
            hook: wallet,
            clock: clock,
            retryPolicy: retryPolicy,
            tokenOwnership: tokenOwnership,
            proratedRefunds: proratedRefunds,
            events: events
        )
    }

    /// A transaction as the App Store would sign it.
    mutating func transaction(
        _ productId: String,
        token: String? = nil,
        quantity: Int32 = 1,
        signedAt: Date? = nil
    ) -> TransactionPayload {
        let id = String(nextId)
        nextId += 1
        let kind = catalog[productId: productId]?.kind ?? .nonConsumable
        return TransactionPayload(
            originalTransactionId: id,
            transactionId: id,
            bundleId: Shop.bundleId,
            productId: productId,
            purchaseDate: clock.now,
            originalPurchaseDate: clock.now,
            expiresDate: kind == .autoRenewable ? clock.now.addingTimeInterval(30 * 86_400) : nil,
            quantity: quantity,
            type: kind.appStoreType,
            appAccountToken: token,
            inAppOwnershipType: .purchased,
            signedDate: signedAt ?? clock.now,
            environment: .sandbox
        )
    }

    func sign(_ transaction: TransactionPayload) throws -> String {
        try signer.sign(transaction)
    }
}
