import Foundation
import IAPCore
import IAPCrypto
import IAPTesting
import Testing

@Suite("SimulatedAppStore subscription lifecycle")
struct SimulatedAppStoreSubscriptionTests {
    typealias C = SimulatedCatalog
    typealias H = StoreHarness

    @Test("A monthly subscription renews as the clock advances: N periods, N+1 transactions, one original id")
    func renewsOverTime() async throws {
        let harness = try StoreHarness()
        let first = try await harness.buy(C.proMonthly)
        _ = try await harness.events()

        try await harness.store.advance(by: H.days(365))  // 2026 is not a leap year: 12 renewals
        let transactions = try await harness.store.transactions(ofAccount: "alice")
        #expect(transactions.count == 13)
        #expect(Set(transactions.map(\.originalTransactionId)) == [first.transactionId])
        #expect(Set(transactions.map(\.transactionId)).count == 13)
        #expect(Set(transactions.compactMap(\.payload.webOrderLineItemId)).count == 13)
        #expect(Set(transactions.compactMap(\.orderId)).count == 13)

        for (index, pair) in zip(transactions, transactions.dropFirst()).enumerated() {
            let (previous, renewal) = pair
            #expect(renewal.payload.purchaseDate == previous.payload.expiresDate, "renewal \(index + 1)")
            #expect(renewal.payload.transactionReason == .renewal)
            #expect(renewal.payload.originalPurchaseDate == C.start)
            #expect(renewal.payload.productId == C.proMonthly)
        }
        let last = try #require(transactions.last)
        // The 12th renewal falls due on 2027-01-01, the last instant of the advance, and runs to 2027-02-01.
        #expect(last.payload.purchaseDate == Date(millisecondsSince1970: 1_798_761_600_000))
        #expect(last.payload.expiresDate == Date(millisecondsSince1970: 1_801_440_000_000))

        let notifications = try await harness.notifications()
        #expect(notifications.map(Event.init) == Array(repeating: Event(.didRenew), count: 12))
        // Each renewal was signed when it happened: the clock was set to each due date in turn.
        #expect(notifications.map(\.payload.signedDate) == transactions.dropFirst().map(\.payload.purchaseDate))
        #expect(notifications.map(\.transaction?.transactionId) == transactions.dropFirst().map(\.transactionId))
        #expect(notifications.allSatisfy { $0.payload.data?.status == .active })
        #expect(harness.clock.now == H.day(365))
    }

    @Test("processDueEvents catches up after the clock was moved by hand")
    func processDueEvents() async throws {
        let harness = try StoreHarness()
        _ = try await harness.buy(C.proMonthly)
        harness.clock.advance(by: H.days(70))
        try await harness.store.processDueEvents()
        #expect(try await harness.store.transactions(ofAccount: "alice").count == 3)
        #expect(try await harness.events().suffix(2) == [Event(.didRenew), Event(.didRenew)])
    }

    @Test("Billing fails: grace period, then billing is fixed during it and the subscription recovers")
    func graceThenRecovery() async throws {
        var configuration = C.configuration
        configuration.gracePeriodDays = 16
        let harness = try StoreHarness(configuration: configuration)
        let first = try await harness.buy(C.proMonthly)
        let id = first.originalTransactionId
        try await harness.store.setBillingFailure(originalTransactionId: id, failing: true)
        _ = try await harness.events()

        try await harness.store.advance(by: H.days(32))  // due 2026-02-01
        let failed = try await harness.notifications()
        #expect(failed.map(Event.init) == [Event(.didFailToRenew, .gracePeriod)])
        #expect(failed[0].payload.data?.status == .billingGracePeriod)
        let renewal = try #require(failed[0].renewalInfo)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.gracePeriodExpiresDate == H.day(31 + 16))
        #expect(renewal.autoRenewStatus == .on)
        #expect(try await harness.store.transactions(ofAccount: "alice").count == 1)
        #expect(try await harness.store.renewalInfo(originalTransactionId: id).status == .billingGracePeriod)

        try await harness.store.setBillingFailure(originalTransactionId: id, failing: false)
        let recovered = try await harness.notifications()
        #expect(recovered.map(Event.init) == [Event(.didRenew, .billingRecovery)])
        #expect(recovered[0].payload.data?.status == .active)
        #expect(recovered[0].renewalInfo?.isInBillingRetryPeriod == false)
        #expect(recovered[0].renewalInfo?.gracePeriodExpiresDate == nil)
        let renewed = try #require(recovered[0].transaction)
        #expect(renewed.originalTransactionId == id)
        #expect(renewed.purchaseDate == H.day(32))
        // Recovered within the grace period: no paid day lost, the period runs from the old expiry.
        #expect(renewed.expiresDate == Date(millisecondsSince1970: 1_772_323_200_000))  // 2026-03-01
    }

    @Test("Billing keeps failing: grace period expires, billing retry runs 60 days, then EXPIRED BILLING_RETRY")
    func graceThenRetryThenExpired() async throws {
        var configuration = C.configuration
        configuration.gracePeriodDays = 16
        let harness = try StoreHarness(configuration: configuration)
        let first = try await harness.buy(C.proMonthly)
        let id = first.originalTransactionId
        try await harness.store.setBillingFailure(originalTransactionId: id, failing: true)
        _ = try await harness.events()

        try await harness.store.advance(by: H.days(31 + 16))
        let graceEnded = try await harness.notifications()
        #expect(graceEnded.map(Event.init) == [Event(.didFailToRenew, .gracePeriod), Event(.gracePeriodExpired)])
        #expect(graceEnded[1].payload.data?.status == .billingRetry)
        #expect(graceEnded[1].renewalInfo?.isInBillingRetryPeriod == true)
        #expect(graceEnded[1].payload.signedDate == H.day(31 + 16))

        try await harness.store.advance(by: H.days(60))
        let expired = try await harness.notifications()
        #expect(expired.map(Event.init) == [Event(.expired, .billingRetry)])
        #expect(expired[0].payload.signedDate == H.day(31 + 60))
        #expect(expired[0].payload.data?.status == .expired)
        #expect(expired[0].renewalInfo?.expirationIntent == .billingError)
        #expect(expired[0].renewalInfo?.isInBillingRetryPeriod == false)
        #expect(try await harness.store.transactions(ofAccount: "alice").count == 1)

        try await harness.store.advance(by: H.days(365))
        #expect(await harness.store.pendingNotifications.isEmpty)
    }

    @Test("Without a grace period a failed renewal goes straight to billing retry; recovery restarts the period")
    func billingRetryWithoutGrace() async throws {
        let harness = try StoreHarness()
        let first = try await harness.buy(C.proMonthly)
        let id = first.originalTransactionId
        try await harness.store.setBillingFailure(originalTransactionId: id, failing: true)
        _ = try await harness.events()

        try await harness.store.advance(by: H.days(40))
        let failed = try await harness.notifications()
        #expect(failed.map(Event.init) == [Event(.didFailToRenew)])
        #expect(failed[0].payload.data?.status == .billingRetry)
        #expect(failed[0].renewalInfo?.gracePeriodExpiresDate == nil)
        #expect(failed[0].renewalInfo?.isInBillingRetryPeriod == true)

        try await harness.store.setBillingFailure(originalTransactionId: id, failing: false)
        let recovered = try await harness.notifications()
        #expect(recovered.map(Event.init) == [Event(.didRenew, .billingRecovery)])
        let renewed = try #require(recovered[0].transaction)
        #expect(renewed.purchaseDate == H.day(40))
        #expect(renewed.expiresDate == SubscriptionPeriod(value: 1, unit: .month).advance(H.day(40)))
    }

    @Test("Auto-renew off: DID_CHANGE_RENEWAL_STATUS, then EXPIRED VOLUNTARY at the end of the period")
    func autoRenewOff() async throws {
        let harness = try StoreHarness()
        let first = try await harness.buy(C.proMonthly)
        let id = first.originalTransactionId
        _ = try await harness.events()

        try await harness.store.setAutoRenew(originalTransactionId: id, enabled: false)
        try await harness.store.setAutoRenew(originalTransactionId: id, enabled: false)  // no change, no event
        let disabled = try await harness.notifications()
        #expect(disabled.map(Event.init) == [Event(.didChangeRenewalStatus, .autoRenewDisabled)])
        #expect(disabled[0].renewalInfo?.autoRenewStatus == .off)

        try await harness.store.advance(by: H.days(31))
        let expired = try await harness.notifications()
        #expect(expired.map(Event.init) == [Event(.expired, .voluntary)])
        #expect(expired[0].payload.signedDate == first.payload.expiresDate)
        #expect(expired[0].renewalInfo?.expirationIntent == .customerCancelled)
        #expect(expired[0].payload.data?.status == .expired)
        await #expect(throws: IAPError(.invalidArgument)) {
            try await harness.store.setAutoRenew(originalTransactionId: id, enabled: true)
        }
    }

    @Test("Auto-renew off then on again keeps renewing")
    func autoRenewOffAndOn() async throws {
        let harness = try StoreHarness()
        let id = try await harness.buy(C.proMonthly).originalTransactionId
        try await harness.store.setAutoRenew(originalTransactionId: id, enabled: false)
        try await harness.store.setAutoRenew(originalTransactionId: id, enabled: true)
        try await harness.store.advance(by: H.days(31))
        #expect(
            try await harness.events() == [
                Event(.subscribed, .initialBuy),
                Event(.didChangeRenewalStatus, .autoRenewDisabled),
                Event(.didChangeRenewalStatus, .autoRenewEnabled),
                Event(.didRenew),
            ]
        )
    }

    @Test("Resubscribing after expiry keeps the original transaction id: SUBSCRIBED RESUBSCRIBE")
    func resubscribe() async throws {
        let harness = try StoreHarness()
        let first = try await harness.buy(C.proMonthly)
        try await harness.store.setAutoRenew(originalTransactionId: first.originalTransactionId, enabled: false)
        try await harness.store.advance(by: H.days(45))
        let again = try await harness.buy(C.proMonthly)
        #expect(again.originalTransactionId == first.originalTransactionId)
        #expect(again.transactionId != first.transactionId)
        #expect(again.payload.originalPurchaseDate == C.start)
        #expect(again.payload.purchaseDate == H.day(45))
        #expect(try await harness.events().last == Event(.subscribed, .resubscribe))
    }

    @Test("Upgrade: at once, the old transaction re-signed as upgraded, a new one of the higher product")
    func upgrade() async throws {
        let harness = try StoreHarness()
        let first = try await harness.buy(C.proMonthly)
        _ = try await harness.events()
        harness.clock.advance(by: H.days(10))

        let upgraded = try await harness.buy(C.maxMonthly)
        #expect(upgraded.payload.productId == C.maxMonthly)
        #expect(upgraded.originalTransactionId == first.originalTransactionId)
        #expect(upgraded.transactionId != first.transactionId)
        #expect(upgraded.payload.purchaseDate == H.day(10))
        #expect(upgraded.payload.expiresDate == SubscriptionPeriod(value: 1, unit: .month).advance(H.day(10)))
        #expect(upgraded.payload.transactionReason == .purchase)
        #expect(upgraded.payload.price == 19990)

        let old = try await harness.store.transaction(id: first.transactionId)
        #expect(old.payload.isUpgraded == true)
        #expect(try harness.verifier.transaction(old.signedTransaction).isUpgraded == true)

        let notifications = try await harness.notifications()
        #expect(notifications.map(Event.init) == [Event(.didChangeRenewalPref, .upgrade)])
        #expect(notifications[0].transaction?.transactionId == upgraded.transactionId)
        #expect(notifications[0].renewalInfo?.autoRenewProductId == C.maxMonthly)
        #expect(notifications[0].renewalInfo?.productId == C.maxMonthly)
    }

    @Test("Downgrade: takes effect at the next renewal; renewal info shows the new product until then")
    func downgrade() async throws {
        let harness = try StoreHarness()
        let first = try await harness.buy(C.proMonthly)
        _ = try await harness.events()

        let result = try await harness.buy(C.basicMonthly)
        #expect(result.transactionId == first.transactionId)
        let changed = try await harness.notifications()
        #expect(changed.map(Event.init) == [Event(.didChangeRenewalPref, .downgrade)])
        #expect(changed[0].renewalInfo?.autoRenewProductId == C.basicMonthly)
        #expect(changed[0].renewalInfo?.productId == C.proMonthly)
        #expect(changed[0].renewalInfo?.renewalPrice == 990)

        try await harness.store.advance(by: H.days(31))
        let renewed = try await harness.notifications()
        #expect(renewed.map(Event.init) == [Event(.didRenew)])
        #expect(renewed[0].transaction?.productId == C.basicMonthly)
        #expect(renewed[0].transaction?.originalTransactionId == first.originalTransactionId)
        #expect(renewed[0].renewalInfo?.productId == C.basicMonthly)
    }

    @Test("Crossgrade to another duration at the same level waits for the renewal; re-choosing cancels it")
    func crossgradeAndCancel() async throws {
        let harness = try StoreHarness()
        let first = try await harness.buy(C.proMonthly)
        _ = try await harness.buy(C.proYearly)
        _ = try await harness.buy(C.proMonthly)  // back to the current plan: the pending change is dropped
        try await harness.store.advance(by: H.days(31))
        let notifications = try await harness.notifications()
        #expect(
            notifications.map(Event.init) == [
                Event(.subscribed, .initialBuy),
                Event(.didChangeRenewalPref, .downgrade),
                Event(.didChangeRenewalPref),
                Event(.didRenew),
            ]
        )
        #expect(notifications[3].transaction?.productId == C.proMonthly)
        #expect(notifications[3].transaction?.originalTransactionId == first.originalTransactionId)
    }

    @Test("Crossgrade applied at renewal renews into the new product's period")
    func crossgradeApplied() async throws {
        let harness = try StoreHarness()
        _ = try await harness.buy(C.proMonthly)
        _ = try await harness.buy(C.proYearly)
        try await harness.store.advance(by: H.days(31))
        let transactions = try await harness.store.transactions(ofAccount: "alice")
        let renewal = try #require(transactions.last)
        #expect(renewal.payload.productId == C.proYearly)
        #expect(renewal.payload.expiresDate == Date(millisecondsSince1970: 1_801_440_000_000))  // 2027-02-01
    }
}
