import Foundation
import IAPCore
import IAPCrypto
import IAPTesting
import Synchronization

/// The integrator's side of a fulfillment hook, as a test sees it: a wallet that applies each
/// idempotency key once, counts every call, and fails on demand.
final class RecordingWallet: FulfillmentHook {
    struct State {
        var calls: [Delivery] = []
        var applied: [String: Delivery] = [:]
        var failuresLeft = 0
        var balances: [String: Int64] = [:]
        var afterApplying: (@Sendable () -> Void)?
        var duringNextCall: (@Sendable () async -> Void)?
        var cancelledGrants: Set<String> = []
    }

    let state = Mutex(State())

    func failNext(_ count: Int) {
        state.withLock { $0.failuresLeft = count }
    }

    var calls: [Delivery] { state.withLock { $0.calls } }
    var applied: [String: Delivery] { state.withLock { $0.applied } }
    func balance(_ user: String) -> Int64 { state.withLock { $0.balances[user, default: 0] } }

    func grant(_ delivery: Delivery) async throws {
        try apply(delivery, sign: 1)
        await runDuringNextCall()
    }

    func revoke(_ delivery: Delivery) async throws {
        try apply(delivery, sign: -1)
        await runDuringNextCall()
    }

    /// Runs `body` inside the next grant or revoke call, after its effect (a refund arriving mid-call, say).
    func duringNextCall(_ body: @escaping @Sendable () async -> Void) {
        state.withLock { $0.duringNextCall = body }
    }

    private func runDuringNextCall() async {
        let body = state.withLock { state -> (@Sendable () async -> Void)? in
            defer { state.duringNextCall = nil }
            return state.duringNextCall
        }
        await body?()
    }

    private func apply(_ delivery: Delivery, sign: Int64) throws {
        try state.withLock { state in
            state.calls.append(delivery)
            if state.failuresLeft > 0 {
                state.failuresLeft -= 1
                throw IAPError(.fulfillmentFailed, "the wallet service is down")
            }
            guard state.applied[delivery.idempotencyKey] == nil else { return }
            if delivery.action == .grant, state.cancelledGrants.contains(delivery.idempotencyKey) {
                return  // taken back before it arrived
            }
            if delivery.action == .revoke, let grantKey = delivery.grantIdempotencyKey,
                state.applied[grantKey] == nil
            {
                state.cancelledGrants.insert(grantKey)  // never given: nothing to take back
                state.applied[delivery.idempotencyKey] = delivery
                return
            }
            state.applied[delivery.idempotencyKey] = delivery
            state.balances[delivery.userId, default: 0] += sign * delivery.units
        }
        if let after = state.withLock({ $0.afterApplying }) {
            after()
        }
    }

    /// Runs `body` after the next call applied its effect (to simulate a crash right after the grant).
    func afterNextApply(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.afterApplying = body }
    }

    func clearAfterApply() {
        state.withLock { $0.afterApplying = nil }
    }
}

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
    let wallet = RecordingWallet()
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

    func pipeline(retryPolicy: RetryPolicy = RetryPolicy(jitter: 0)) -> DeliveryPipeline {
        DeliveryPipeline(
            verifier: verifier,
            catalog: catalog,
            store: store,
            hook: wallet,
            clock: clock,
            retryPolicy: retryPolicy
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
