import Foundation
import IAPCore
import IAPCrypto
import IAPTesting
import Testing

@Suite("SimulatedAppStore refunds and Family Sharing")
struct SimulatedAppStoreRefundTests {
    typealias C = SimulatedCatalog
    typealias H = StoreHarness

    @Test("Refund sets the revocation fields and sends REFUND; reversing clears them and sends REFUND_REVERSED")
    func refundAndReverse() async throws {
        let harness = try StoreHarness()
        let bought = try await harness.buy(C.premium)
        _ = try await harness.events()
        harness.clock.advance(by: H.days(3))

        let refunded = try await harness.store.refund(transactionId: bought.transactionId, reason: .refundedDueToIssue)
        #expect(refunded.payload.revocationDate == H.day(3))
        #expect(refunded.payload.revocationReason == .refundedDueToIssue)
        #expect(refunded.payload.revocationType == .refundFull)
        #expect(refunded.payload.revocationPercentage == nil)
        #expect(refunded.payload.signedDate == H.day(3))
        #expect(try harness.verifier.transaction(refunded.signedTransaction).isRevoked)
        let refundNotifications = try await harness.notifications()
        #expect(refundNotifications.map(Event.init) == [Event(.refund)])
        #expect(refundNotifications[0].transaction?.revocationDate == H.day(3))
        await #expect(throws: IAPError(.invalidArgument)) {
            try await harness.store.refund(transactionId: bought.transactionId)
        }

        let reversed = try await harness.store.reverseRefund(transactionId: bought.transactionId)
        #expect(!reversed.payload.isRevoked)
        #expect(reversed.payload.revocationReason == nil && reversed.payload.revocationType == nil)
        let reverseNotifications = try await harness.notifications()
        #expect(reverseNotifications.map(Event.init) == [Event(.refundReversed)])
        #expect(reverseNotifications[0].transaction?.isRevoked == false)
        await #expect(throws: IAPError(.invalidArgument)) {
            try await harness.store.reverseRefund(transactionId: bought.transactionId)
        }
    }

    @Test("A prorated refund records its percentage; a percentage out of range is refused")
    func proratedRefund() async throws {
        let harness = try StoreHarness()
        let bought = try await harness.buy(C.coins)
        await #expect(throws: IAPError(.invalidArgument)) {
            try await harness.store.refund(transactionId: bought.transactionId, percentage: 100_001)
        }
        let refunded = try await harness.store.refund(transactionId: bought.transactionId, percentage: 50_000)
        #expect(refunded.payload.revocationType == .refundProrated)
        #expect(refunded.payload.revocationPercentage == 50_000)
        await #expect(throws: IAPError(.notFound)) { try await harness.store.refund(transactionId: "1") }
    }

    @Test("Refunding the latest subscription transaction revokes the subscription; reversing restores it")
    func subscriptionRefund() async throws {
        let harness = try StoreHarness()
        let bought = try await harness.buy(C.proMonthly)
        _ = try await harness.events()

        try await harness.store.refund(transactionId: bought.transactionId)
        let refund = try await harness.notifications()
        #expect(refund.map(Event.init) == [Event(.refund)])
        #expect(refund[0].payload.data?.status == .revoked)
        #expect(refund[0].renewalInfo?.autoRenewStatus == .off)
        try await harness.store.advance(by: H.days(40))
        #expect(await harness.store.pendingNotifications.isEmpty)  // a revoked subscription does not renew

        let restoredHarness = try StoreHarness()
        let again = try await restoredHarness.buy(C.proMonthly)
        try await restoredHarness.store.refund(transactionId: again.transactionId)
        try await restoredHarness.store.reverseRefund(transactionId: again.transactionId)
        let info = try await restoredHarness.store.renewalInfo(originalTransactionId: again.originalTransactionId)
        #expect(info.status == .active)
        #expect(info.payload.autoRenewStatus == .on)
        try await restoredHarness.store.advance(by: H.days(31))
        #expect(try await restoredHarness.events().suffix(2) == [Event(.refundReversed), Event(.didRenew)])
    }

    @Test("REFUND_DECLINED and CONSUMPTION_REQUEST carry the transaction, and the reason")
    func declinedAndConsumptionRequest() async throws {
        let harness = try StoreHarness()
        let bought = try await harness.buy(C.coins)
        _ = try await harness.events()
        try await harness.store.requestConsumptionInformation(transactionId: bought.transactionId, reason: .legal)
        try await harness.store.declineRefund(transactionId: bought.transactionId)
        let notifications = try await harness.notifications()
        #expect(notifications.map(Event.init) == [Event(.consumptionRequest), Event(.refundDeclined)])
        #expect(notifications[0].payload.data?.consumptionRequestReason == .legal)
        #expect(notifications.allSatisfy { $0.transaction?.transactionId == bought.transactionId })
        #expect(notifications.allSatisfy { $0.transaction?.isRevoked == false })
    }

    @Test("A family-shareable non-consumable is shared with the family; a refund revokes the copies with REVOKE")
    func familySharedNonConsumable() async throws {
        let harness = try StoreHarness()
        try await harness.store.addFamilyMember("bob", toFamilyOf: "alice")
        try await harness.store.addFamilyMember("carol", toFamilyOf: "alice")
        let bought = try await harness.buy(C.premium)
        let notifications = try await harness.notifications()
        #expect(notifications.map(Event.init) == Array(repeating: Event(.oneTimeCharge), count: 3))
        let shared = notifications.dropFirst().compactMap(\.transaction)
        #expect(shared.count == 2)
        for copy in shared {
            #expect(copy.inAppOwnershipType == .familyShared)
            #expect(copy.productId == C.premium)
            #expect(copy.transactionId != bought.transactionId)
            #expect(copy.originalTransactionId == copy.transactionId)
            #expect(copy.appAccountToken == nil)
        }
        let bobs = try await harness.store.transactions(ofAccount: "bob")
        #expect(bobs.map(\.payload.inAppOwnershipType) == [.familyShared])
        #expect(bobs.first?.orderId == nil)
        await #expect(throws: IAPError(.invalidArgument)) {
            try await harness.store.refund(transactionId: bobs[0].transactionId)
        }
        // Access through the family is not ownership: Bob can still buy it for himself.
        let bobsOwn = try await harness.buy(C.premium, account: "bob")
        #expect(bobsOwn.payload.inAppOwnershipType == .purchased)
        // Shared with Carol, not with Alice, who bought it herself.
        let bobsNotifications = try await harness.notifications()
        #expect(bobsNotifications.map(Event.init) == [Event(.oneTimeCharge), Event(.oneTimeCharge)])
        #expect(bobsNotifications.map(\.transaction?.inAppOwnershipType) == [.purchased, .familyShared])

        try await harness.store.refund(transactionId: bought.transactionId)
        let revoked = try await harness.notifications()
        #expect(revoked.map(Event.init) == [Event(.refund), Event(.revoke), Event(.revoke)])
        for notification in revoked.dropFirst() {
            #expect(notification.transaction?.revocationType == .familyRevoke)
            #expect(notification.transaction?.inAppOwnershipType == .familyShared)
            #expect(notification.transaction?.revocationDate == C.start)
        }
    }

    @Test("A family-shared subscription renews with the purchaser's, and leaving the family revokes it")
    func familySharedSubscription() async throws {
        let harness = try StoreHarness()
        try await harness.store.addFamilyMember("bob", toFamilyOf: "alice")
        let bought = try await harness.buy(C.proMonthly)
        let subscribed = try await harness.notifications()
        #expect(subscribed.map(Event.init) == [Event(.subscribed, .initialBuy), Event(.subscribed, .initialBuy)])
        let bobsFirst = try #require(subscribed[1].transaction)
        #expect(bobsFirst.inAppOwnershipType == .familyShared)
        #expect(bobsFirst.originalTransactionId != bought.originalTransactionId)
        #expect(bobsFirst.expiresDate == bought.payload.expiresDate)

        try await harness.store.advance(by: H.days(31))
        let renewed = try await harness.notifications()
        #expect(renewed.map(Event.init) == [Event(.didRenew), Event(.didRenew)])
        #expect(renewed[1].transaction?.originalTransactionId == bobsFirst.originalTransactionId)
        #expect(renewed[1].transaction?.inAppOwnershipType == .familyShared)
        let bobsId = try #require(bobsFirst.originalTransactionId)
        await #expect(throws: IAPError(.invalidArgument)) {
            try await harness.store.setAutoRenew(originalTransactionId: bobsId, enabled: false)
        }

        try await harness.store.removeFamilyMember("bob")
        let left = try await harness.notifications()
        #expect(left.map(Event.init) == [Event(.revoke)])
        #expect(left[0].transaction?.revocationType == .familyRevoke)
        #expect(left[0].payload.data?.status == .revoked)
        try await harness.store.advance(by: H.days(31))
        #expect(try await harness.events() == [Event(.didRenew)])  // alice's only
    }

    @Test("Joining a family shares what the family already owns")
    func joiningSharesExisting() async throws {
        let harness = try StoreHarness()
        _ = try await harness.buy(C.premium)
        _ = try await harness.buy(C.proMonthly)
        _ = try await harness.buy(C.coins)  // consumables are never shared
        _ = try await harness.events()
        try await harness.store.addFamilyMember("bob", toFamilyOf: "alice")
        let notifications = try await harness.notifications()
        #expect(notifications.map(Event.init) == [Event(.oneTimeCharge), Event(.subscribed, .initialBuy)])
        #expect(notifications.allSatisfy { $0.transaction?.inAppOwnershipType == .familyShared })
        await #expect(throws: IAPError(.invalidArgument)) {
            try await harness.store.addFamilyMember("bob", toFamilyOf: "dave")
        }
    }
}
