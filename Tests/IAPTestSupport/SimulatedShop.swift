package import Foundation
package import IAPCore
package import IAPCrypto
package import IAPInMemory
package import IAPTesting
import Testing

/// A shop on the simulated App Store: it sells and signs like Apple, a verifier trusts it, a pipeline delivers into
/// an in-memory ledger and a recording wallet, and the engine says what a user has.
package struct SimulatedShop {
    package let clock = ManualClock(now: Date(millisecondsSince1970: 1_767_225_600_000))
    package let appStore: SimulatedAppStore
    package let verifier: AppStoreSignedDataVerifier
    package let catalog: StaticProductCatalog
    package let ledger = InMemoryEntitlementStore()
    package let wallet = RecordingFulfillmentHook()

    /// Creates the shop; its App Store signs for `environment` (Look Up Order ID exists in Production only).
    package init(environment: AppStoreEnvironment = .sandbox) throws {
        catalog = try StaticProductCatalog(products: [
            CatalogProduct(productId: "coins.100", kind: .consumable, entitlements: [], unitsPerPurchase: 100),
            CatalogProduct(productId: "pro.lifetime", kind: .nonConsumable, entitlements: ["pro"]),
            CatalogProduct(
                productId: "plus.monthly",
                kind: .autoRenewable,
                subscriptionGroupId: "plus",
                groupLevel: 1,
                entitlements: ["plus"],
                duration: SubscriptionPeriod(value: 1, unit: .month)
            ),
        ])
        appStore = try SimulatedAppStore(
            products: catalog.products,
            configuration: .init(environment: environment, gracePeriodDays: 16),
            clock: clock
        )
        verifier = try AppStoreSignedDataVerifier(configuration: appStore.verifierConfiguration)
    }

    package func pipeline() -> DeliveryPipeline {
        DeliveryPipeline(
            verifier: verifier,
            catalog: catalog,
            store: ledger,
            hook: wallet,
            clock: clock,
            retryPolicy: RetryPolicy(jitter: 0)
        )
    }

    package func buy(_ productId: String, user: String) async throws -> SimulatedTransaction {
        let token = AppAccountToken.derive(from: user, namespace: SimulatedShop.namespace)
        let result = try await appStore.purchase(productId: productId, account: user, appAccountToken: token)
        return try #require(result.transaction, "the purchase of \(productId) did not complete: \(result)")
    }

    /// Feeds every pending App Store notification to the server, as the webhook would.
    package func deliverNotifications(to pipeline: DeliveryPipeline) async throws -> [NotificationType] {
        var types: [NotificationType] = []
        for signed in await appStore.drainNotifications() {
            let notification = try verifier.notification(signed)
            if let type = notification.payload.notificationType {
                types.append(type)
            }
            if let renewal = notification.renewalInfo {
                _ = try await ledger.storeRenewalInfo(renewal)
            }
            if let transaction = notification.transaction {
                let signed = notification.payload.data?.signedTransactionInfo
                _ = await pipeline.deliver(transaction, signedTransaction: signed, userId: nil)
            }
        }
        return types
    }

    package func snapshot(_ user: String) async throws -> EntitlementSnapshot {
        let entries = try await ledger.history(userId: user, cursor: nil, limit: 200).entries
        var renewals: [RenewalInfoPayload] = []
        for original in Set(entries.map(\.originalTransactionId)) {
            if let renewal = await ledger.renewalInfo(originalTransactionId: original) {
                renewals.append(renewal)
            }
        }
        return EntitlementEngine(catalog: catalog).evaluate(entries: entries, renewalInfos: renewals, at: clock.now)
    }

    package static let namespace = UUID(uuidString: "6f1b7c7e-3f52-4a8e-9a1e-0c2d9f6b5a10") ?? UUID()
}
