import Foundation
import IAPCore
import IAPCrypto
import IAPTesting
import Testing

@Suite("SimulatedAppStore offers, commitments and consent")
struct SimulatedAppStoreLifecycleTests {
    typealias C = SimulatedCatalog
    typealias H = StoreHarness

    static let week = SubscriptionPeriod(value: 1, unit: .week)
    static let month = SubscriptionPeriod(value: 1, unit: .month)

    static func configuration() -> SimulatedAppStore.Configuration {
        var configuration = C.configuration
        configuration.subscriptionOffers = [
            SimulatedSubscriptionOffer(
                id: "trial",
                productId: C.proMonthly,
                kind: .introductory,
                discountType: .freeTrial,
                price: 0,
                period: week
            ),
            SimulatedSubscriptionOffer(
                id: "three-for-less",
                productId: C.proMonthly,
                kind: .promotional,
                discountType: .payAsYouGo,
                price: 4_990,
                period: month,
                periodCount: 3
            ),
            SimulatedSubscriptionOffer(
                id: "max-deal",
                productId: C.maxMonthly,
                kind: .promotional,
                discountType: .payUpFront,
                price: 29_990,
                period: SubscriptionPeriod(value: 3, unit: .month)
            ),
            SimulatedSubscriptionOffer(
                id: "SPRING",
                productId: C.basicMonthly,
                kind: .offerCode,
                discountType: .freeTrial,
                price: 0,
                period: month
            ),
        ]
        configuration.commitmentPlans = [C.proYearly: 12]
        configuration.subscriptionPeriods[C.proYearly] = month
        return configuration
    }

    @Test("an introductory free trial lasts its week and the first renewal is at the full price")
    func freeTrial() async throws {
        let harness = try StoreHarness(configuration: Self.configuration())
        let trial = try await harness.buy(C.proMonthly)
        #expect(trial.payload.offerType == .introductoryOffer)
        #expect(trial.payload.offerIdentifier == nil)
        #expect(trial.payload.offerDiscountType == .freeTrial)
        #expect(trial.payload.offerPeriod == "P1W")
        #expect(trial.payload.price == 0)
        #expect(trial.payload.expiresDate == H.day(7))
        #expect(try await harness.events() == [Event(.subscribed, .initialBuy)])

        try await harness.store.advance(by: H.days(7))
        let renewal = try #require(try await harness.store.transactions(ofAccount: "alice").last)
        #expect(renewal.payload.offerType == nil)
        #expect(renewal.payload.offerPeriod == nil)
        #expect(renewal.payload.price == 9_990)
        #expect(renewal.payload.purchaseDate == H.day(7))
        #expect(try await harness.events() == [Event(.didRenew)])

        // Expired and back: the introductory offer is for newcomers only.
        try await harness.store.setAutoRenew(originalTransactionId: trial.transactionId, enabled: false)
        try await harness.store.advance(by: H.days(40))
        let again = try await harness.store.purchase(productId: C.proMonthly, offerId: "trial", account: "alice")
        #expect(again == .failed(IAPError(.offerIneligible)))
    }

    @Test("a live subscriber redeems a pay-as-you-go promotional offer: OFFER_REDEEMED, three renewals at its price")
    func promotionalForLiveSubscriber() async throws {
        let harness = try StoreHarness(configuration: Self.configuration())
        let result = try await harness.store.purchase(
            productId: C.proMonthly,
            offerId: "trial",
            account: "alice"
        )
        let first = try #require(result.transaction)
        _ = try await harness.events()

        let redeemed = try await harness.store.purchase(
            productId: C.proMonthly,
            offerId: "three-for-less",
            account: "alice"
        )
        #expect(redeemed.transaction?.transactionId == first.transactionId)
        let notifications = try await harness.notifications()
        #expect(notifications.map(Event.init) == [Event(.offerRedeemed)])
        let renewalInfo = try #require(notifications.first?.renewalInfo)
        #expect(renewalInfo.offerType == .promotionalOffer)
        #expect(renewalInfo.offerIdentifier == "three-for-less")
        #expect(renewalInfo.offerDiscountType == .payAsYouGo)
        #expect(renewalInfo.offerPeriod == "P3M")
        #expect(renewalInfo.renewalPrice == 4_990)

        // The trial week, then three months at the offer's price, then the full price.
        try await harness.store.advance(by: H.days(7 + 31 + 28 + 31))
        let renewals = try await harness.store.transactions(ofAccount: "alice").dropFirst()
        #expect(renewals.map(\.payload.price) == [4_990, 4_990, 4_990, 9_990])
        #expect(renewals.map(\.payload.offerIdentifier) == ["three-for-less", "three-for-less", "three-for-less", nil])
        #expect(renewals.map(\.payload.offerPeriod) == ["P3M", "P3M", "P3M", nil])
    }

    @Test("an offer on a higher level upgrades at once (OFFER_REDEEMED UPGRADE); on a lower one, at renewal")
    func offerWithPlanChange() async throws {
        let harness = try StoreHarness(configuration: Self.configuration())
        let first = try await harness.buy(C.proMonthly)
        _ = try await harness.events()
        try await harness.store.advance(by: H.days(3))  // within the week's free trial
        let upgrade = try await harness.store.purchase(productId: C.maxMonthly, offerId: "max-deal", account: "alice")
        let upgraded = try #require(upgrade.transaction)
        #expect(upgraded.originalTransactionId == first.transactionId)
        #expect(upgraded.payload.offerType == .promotionalOffer)
        #expect(upgraded.payload.offerDiscountType == .payUpFront)
        #expect(upgraded.payload.offerPeriod == "P3M")
        #expect(upgraded.payload.price == 29_990)
        #expect(upgraded.payload.expiresDate == Date(millisecondsSince1970: 1_775_260_800_000))  // 2026-04-04
        #expect(try await harness.events() == [Event(.offerRedeemed, .upgrade)])
        #expect(try await harness.store.transaction(id: first.transactionId).payload.isUpgraded == true)

        let downgrade = try await harness.store.purchase(productId: C.basicMonthly, offerId: "SPRING", account: "alice")
        #expect(downgrade.transaction?.transactionId == upgraded.transactionId)
        #expect(try await harness.events() == [Event(.offerRedeemed, .downgrade)])
        try await harness.store.advance(by: H.days(90))
        let basic = try #require(
            try await harness.store.transactions(ofAccount: "alice").first { $0.payload.productId == C.basicMonthly }
        )
        #expect(basic.payload.offerType == .offerCode)
        #expect(basic.payload.offerIdentifier == "SPRING")
        #expect(basic.payload.price == 0)
    }

    @Test("a 12-month commitment billed monthly: numbered periods, and cancelling only ends it at the commitment's end")
    func commitment() async throws {
        let harness = try StoreHarness(configuration: Self.configuration())
        let first = try await harness.buy(C.proYearly)
        let info = try #require(first.payload.commitmentInfo)
        #expect(first.payload.billingPlanType == .monthly)
        #expect(info.billingPeriodNumber == 1)
        #expect(info.totalBillingPeriods == 12)
        #expect(info.commitmentPrice == Int64(1_199_880))
        #expect(info.commitmentExpiresDate == Date(millisecondsSince1970: 1_798_761_600_000))  // 2027-01-01
        #expect(first.payload.expiresDate == Date(millisecondsSince1970: 1_769_904_000_000))  // 2026-02-01
        _ = try await harness.events()

        try await harness.store.advance(by: H.days(45))
        try await harness.store.setAutoRenew(originalTransactionId: first.transactionId, enabled: false)
        let renewal = try await harness.store.renewalInfo(originalTransactionId: first.transactionId)
        #expect(renewal.payload.autoRenewStatus == .on)
        #expect(renewal.payload.renewalBillingPlanType == .monthly)
        #expect(renewal.payload.commitmentInfo?.commitmentAutoRenewStatus == .off)
        #expect(renewal.payload.commitmentInfo?.commitmentRenewalDate == info.commitmentExpiresDate)

        try await harness.store.advance(by: H.days(400))
        let transactions = try await harness.store.transactions(ofAccount: "alice")
        #expect(transactions.map { $0.payload.commitmentInfo?.billingPeriodNumber } == (1...12).map { Int32($0) })
        #expect(transactions.last?.payload.expiresDate == info.commitmentExpiresDate)
        let events = try await harness.events()
        #expect(events.last == Event(.expired, .voluntary))
        #expect(events.filter { $0 == Event(.didRenew) }.count == 11)
    }

    @Test("RESCIND_CONSENT carries the customer's signed app transaction and changes nothing else")
    func rescindConsent() async throws {
        let harness = try StoreHarness(configuration: Self.configuration())
        _ = try await harness.buy(C.premium)
        _ = try await harness.events()
        try await harness.store.rescindConsent(account: "alice")
        let payloads = await harness.store.drainNotifications()
        let notification = try harness.verifier.notification(try #require(payloads.first))
        #expect(payloads.count == 1)
        #expect(notification.payload.notificationType == .rescindConsent)
        #expect(notification.payload.data == nil)
        #expect(notification.payload.appData?.bundleId == "com.example.app")
        let appTransaction = try #require(notification.appTransaction)
        #expect(appTransaction.appTransactionId == (await harness.store.appTransactionId(ofAccount: "alice")))
        #expect(try await harness.store.transactions(ofAccount: "alice").count == 1)
        await #expect(throws: IAPError(.notFound)) { try await harness.store.rescindConsent(account: "nobody") }
    }
}
