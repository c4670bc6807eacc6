import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTesting
import Testing

/// A monthly plan with a 12-month commitment (`billingPlanType` `MONTHLY`, `commitmentInfo`): the entitlements show
/// the commitment's end and the renewals owed; analytics counts each monthly payment once a month.
@Suite("Commitment plans")
struct CommitmentPlanTests {
    /// The subscription, described in the catalog as yearly (its commitment), billed monthly by the App Store.
    static let catalog = try! StaticProductCatalog(products: [
        CatalogProduct(
            productId: "studio.committed",
            kind: .autoRenewable,
            subscriptionGroupId: "studio",
            entitlements: ["studio"],
            duration: SubscriptionPeriod(value: 1, unit: .year)
        )
    ])

    @Test("entitlements name the commitment's end and the renewals owed; analytics a month's worth each month")
    func commitment() async throws {
        let clock = ManualClock(now: Date(millisecondsSince1970: 1_767_225_600_000))  // 2026-01-01
        let store = try SimulatedAppStore(
            products: Self.catalog.products,
            configuration: .init(
                environment: .production,
                prices: ["studio.committed": 14_990],
                subscriptionPeriods: ["studio.committed": SubscriptionPeriod(value: 1, unit: .month)],
                commitmentPlans: ["studio.committed": 12]
            ),
            clock: clock
        )
        let verifier = try AppStoreSignedDataVerifier(configuration: store.verifierConfiguration)
        let ledger = InMemoryEntitlementStore()
        let pipeline = DeliveryPipeline(
            verifier: verifier,
            catalog: Self.catalog,
            store: ledger,
            hook: RecordingFulfillmentHook(),
            clock: clock
        )
        let bought = try #require(try await store.purchase(productId: "studio.committed", account: "ann").transaction)
        _ = await pipeline.submit(signedTransaction: bought.signedTransaction, userId: "ann")
        try await store.advance(by: .seconds(59 * 86_400))  // two renewals: March 1
        for signed in await store.drainNotifications() {
            let notification = try verifier.notification(signed)
            if let renewal = notification.renewalInfo {
                _ = try await ledger.storeRenewalInfo(renewal)
            }
            if let transaction = notification.transaction {
                let signedTransaction = notification.payload.data?.signedTransactionInfo
                _ = await pipeline.deliver(transaction, signedTransaction: signedTransaction, userId: nil)
            }
        }

        let listing = try await EntitlementListing.read(
            userId: "ann",
            from: ledger,
            catalog: Self.catalog,
            at: clock.now
        )
        let row = try #require(listing.rows.first)
        #expect(row.hasAccess)
        #expect(row.commitmentRenewalsOwed == 9)
        #expect(row.commitmentExpiresDate == Date(millisecondsSince1970: 1_798_761_600_000))  // 2027-01-01
        let json = String(decoding: try listing.jsonData(), as: UTF8.self)
        #expect(json.contains(#""commitmentExpiresDate":1798761600000"#))
        #expect(json.contains(#""commitmentRenewalsOwed":9"#))

        // March by month: one active subscription whose monthly payment is its MRR, not a twelfth of it.
        let report = try await LedgerAnalytics(catalog: Self.catalog).report(
            of: ledger,
            from: Date(millisecondsSince1970: 1_772_323_200_000),  // 2026-03-01
            to: Date(millisecondsSince1970: 1_775_001_600_000),  // 2026-04-01
            interval: .month,
            now: clock.now
        )
        #expect(report.totals.subscriptions.active == 1)
        #expect(report.totals.mrrMilliunits == ["USD": 14_990])
    }
}
