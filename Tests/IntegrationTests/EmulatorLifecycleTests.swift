import Foundation
import IAPCore
import IAPCrypto
import IAPServerAPI
import Testing

/// The lifecycles `iap emulate` rehearses through its control plane — offers, plan changes, Family Sharing, price
/// increases, refund outcomes, commitment plans, withdrawn consent — each checked in the notifications it sends and
/// through the package's App Store Server API client.
@Suite("iap emulate lifecycles")
struct EmulatorLifecycleTests {
    /// Every notification the emulator made after the first `skip`, verified.
    static func notifications(
        _ emulator: EmulatorProcess,
        _ verifier: AppStoreSignedDataVerifier,
        after skip: Int = 0
    ) async throws -> [VerifiedNotification] {
        struct Item: Decodable { let signedPayload: String }
        let response = try await emulator.get("/emulator/v1/notifications")
        let items = try JSONDecoder().decode([Item].self, from: response.body)
        return try items.dropFirst(skip).map { try verifier.notification($0.signedPayload) }
    }

    static func events(_ notifications: [VerifiedNotification]) -> [String] {
        notifications.map { notification in
            [notification.payload.notificationType?.rawValue, notification.payload.subtype?.rawValue]
                .compactMap(\.self).joined(separator: "/")
        }
    }

    static func buy(_ emulator: EmulatorProcess, _ json: String) async throws -> EmulatorProcess.Purchase {
        let response = try await emulator.post("/emulator/v1/purchases", json: json)
        guard response.status == 200 else {
            throw IAPError(.internalError, "\(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
        return try JSONDecoder().decode(EmulatorProcess.Purchase.self, from: response.body)
    }

    @Test("offers: an introductory trial, a promotional offer, an upgrade with an offer, an offer code, a win-back")
    func offers() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let verifier = try await emulator.verifier()
        let client = try emulator.client()

        // A newcomer gets the introductory week free without asking.
        let trial = try await Self.buy(emulator, #"{"productId": "plus.monthly", "account": "ann"}"#)
        let trialTransaction = try verifier.transaction(trial.signedTransaction)
        #expect(trialTransaction.offerType == .introductoryOffer)
        #expect(trialTransaction.offerDiscountType == .freeTrial)
        #expect(trialTransaction.offerPeriod == "P1W")
        #expect(trialTransaction.price == 0)

        // A live subscriber redeems a promotional offer: OFFER_REDEEMED, from the next renewal.
        let promo = try await Self.buy(
            emulator,
            #"{"productId": "plus.monthly", "account": "ann", "offerId": "plus.monthly.promo"}"#
        )
        #expect(promo.transactionId == trial.transactionId)
        let statuses = try await client.allSubscriptionStatuses(anyTransactionId: trial.transactionId)
        let signedRenewal = try #require(statuses.data?.first?.lastTransactions?.first?.signedRenewalInfo)
        let renewal = try verifier.renewalInfo(signedRenewal)
        #expect(renewal.offerType == .promotionalOffer)
        #expect(renewal.offerIdentifier == "plus.monthly.promo")
        #expect(renewal.offerPeriod == "P3M")
        #expect(renewal.renewalPrice == 4_990)

        // An offer on a higher level upgrades at once.
        let upgrade = try await Self.buy(
            emulator,
            #"{"productId": "plus.yearly", "account": "ann", "offerId": "plus.yearly.promo"}"#
        )
        let upgraded = try verifier.transaction(upgrade.signedTransaction)
        #expect(upgraded.originalTransactionId == trial.transactionId)
        #expect(upgraded.offerType == .promotionalOffer)
        #expect(upgraded.offerIdentifier == "plus.yearly.promo")
        #expect(upgraded.offerDiscountType == .payUpFront)
        #expect(upgraded.price == 59_990)

        // An offer code redeemed by a newcomer, a win-back offer by a lapsed subscriber.
        let code = try await Self.buy(
            emulator,
            #"{"productId": "plus.monthly", "account": "bob", "offerId": "plus.monthly.code"}"#
        )
        #expect(try verifier.transaction(code.signedTransaction).offerType == .offerCode)
        let lapsed = try await Self.buy(emulator, #"{"productId": "plus.monthly", "account": "cy"}"#)
        #expect(try await emulator.subscription(lapsed.originalTransactionId, "expire") == 200)
        let early = try await emulator.post(
            "/emulator/v1/purchases",
            json: #"{"productId": "plus.monthly", "account": "dee", "offerId": "plus.monthly.winback"}"#
        )
        #expect(early.status == 400)
        let winBack = try await Self.buy(
            emulator,
            #"{"productId": "plus.monthly", "account": "cy", "offerId": "plus.monthly.winback"}"#
        )
        let back = try verifier.transaction(winBack.signedTransaction)
        #expect(back.offerType == .winBackOffer)
        #expect(back.originalTransactionId == lapsed.originalTransactionId)
        let unknown = try await emulator.post(
            "/emulator/v1/purchases",
            json: #"{"productId": "plus.monthly", "account": "cy", "offerId": "no-such-offer"}"#
        )
        #expect(unknown.status == 400)

        #expect(
            Self.events(try await Self.notifications(emulator, verifier)) == [
                "SUBSCRIBED/INITIAL_BUY", "OFFER_REDEEMED", "OFFER_REDEEMED/UPGRADE", "SUBSCRIBED/INITIAL_BUY",
                "SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/VOLUNTARY",
                "SUBSCRIBED/RESUBSCRIBE",
            ]
        )
    }

    @Test("plan changes: an upgrade at once, a downgrade at the next renewal")
    func planChanges() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let verifier = try await emulator.verifier()
        let monthly = try await emulator.purchase("pro.monthly")
        let yearly = try await emulator.purchase("pro.yearly")
        #expect(yearly.originalTransactionId == monthly.transactionId)
        #expect(yearly.transactionId != monthly.transactionId)
        _ = try await emulator.purchase("pro.monthly")
        #expect(try await emulator.subscription(monthly.transactionId, "renew") == 200)
        let notifications = try await Self.notifications(emulator, verifier)
        #expect(
            Self.events(notifications) == [
                "SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_PREF/UPGRADE", "DID_CHANGE_RENEWAL_PREF/DOWNGRADE",
                "DID_RENEW",
            ]
        )
        #expect(notifications.last?.transaction?.productId == "pro.monthly")
    }

    @Test("Family Sharing: a member gets FAMILY_SHARED transactions; leaving the family revokes them")
    func familySharing() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let verifier = try await emulator.verifier()
        _ = try await emulator.purchase("plus.monthly", account: "parent")
        _ = try await emulator.purchase("premium", account: "parent")
        let before = try await Self.notifications(emulator, verifier).count
        let join = try await emulator.post(
            "/emulator/v1/family/members",
            json: #"{"organizer": "parent", "member": "child"}"#
        )
        #expect(join.status == 200)
        let shared = try await Self.notifications(emulator, verifier, after: before)
        #expect(Set(Self.events(shared)) == ["SUBSCRIBED/INITIAL_BUY", "ONE_TIME_CHARGE"])
        #expect(shared.allSatisfy { $0.transaction?.inAppOwnershipType == .familyShared })

        let leave = try await emulator.post("/emulator/v1/family/members/child/remove")
        #expect(leave.status == 200)
        let revoked = try await Self.notifications(emulator, verifier, after: before + shared.count)
        #expect(Self.events(revoked) == ["REVOKE", "REVOKE"])
        #expect(revoked.allSatisfy { $0.transaction?.revocationType == .familyRevoke })
        #expect(try await emulator.post("/emulator/v1/family/members/child/remove").status == 400)
    }

    @Test("price increases: consent renews at the new price; no consent expires at the renewal")
    func priceIncrease() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let verifier = try await emulator.verifier()
        let consents = try await emulator.purchase("pro.monthly", account: "yes")
        let declines = try await emulator.purchase("pro.yearly", account: "no")
        let increase = #"{"price": 12990, "needsConsent": true}"#
        for id in [consents.transactionId, declines.transactionId] {
            let answer = try await emulator.post("/emulator/v1/subscriptions/\(id)/price-increase", json: increase)
            #expect(answer.status == 200)
        }
        #expect(try await emulator.subscription(consents.transactionId, "accept-price-increase") == 200)
        #expect(try await emulator.subscription(consents.transactionId, "renew") == 200)
        #expect(try await emulator.subscription(declines.transactionId, "renew") == 200)
        let notifications = try await Self.notifications(emulator, verifier, after: 2)
        let events = Self.events(notifications)
        #expect(
            Array(events.prefix(3)) == ["PRICE_INCREASE/PENDING", "PRICE_INCREASE/PENDING", "PRICE_INCREASE/ACCEPTED"]
        )
        let renewed = try #require(notifications.first { $0.payload.notificationType == .didRenew })
        #expect(renewed.transaction?.price == 12_990)
        let expired = try #require(notifications.first { $0.payload.notificationType == .expired })
        #expect(expired.payload.subtype == .priceIncrease)
        #expect(expired.transaction?.originalTransactionId == declines.transactionId)
        let bad = try await emulator.post(
            "/emulator/v1/subscriptions/\(consents.transactionId)/price-increase",
            json: #"{"price": "more"}"#
        )
        #expect(bad.status == 400)
    }

    @Test("refunds: reversed, declined and prorated")
    func refunds() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let verifier = try await emulator.verifier()
        let premium = try await emulator.purchase("premium")
        let coins = try await emulator.purchase("coins.100")
        let plan = try await emulator.purchase("pro.monthly", account: "sub")
        #expect(try await emulator.post("/emulator/v1/transactions/\(premium.transactionId)/refund").status == 200)
        let reversed = try await emulator.post("/emulator/v1/transactions/\(premium.transactionId)/refund-reversed")
        #expect(reversed.status == 200)
        let restored = try JSONDecoder().decode(EmulatorProcess.Purchase.self, from: reversed.body)
        #expect(try verifier.transaction(restored.signedTransaction).revocationDate == nil)
        let declined = try await emulator.post("/emulator/v1/transactions/\(coins.transactionId)/refund-declined")
        #expect(declined.status == 200)
        let prorated = try await emulator.post(
            "/emulator/v1/transactions/\(plan.transactionId)/refund",
            json: #"{"reason": 0, "percentage": 25000}"#
        )
        #expect(prorated.status == 200)
        #expect(
            try await emulator.post("/emulator/v1/transactions/\(coins.transactionId)/refund-reversed").status == 400
        )
        #expect(try await emulator.post("/emulator/v1/transactions/9999/refund-declined").status == 404)

        let notifications = try await Self.notifications(emulator, verifier, after: 3)
        #expect(Self.events(notifications) == ["REFUND", "REFUND_REVERSED", "REFUND_DECLINED", "REFUND"])
        let partial = try #require(notifications.last?.transaction)
        #expect(partial.revocationType == .refundProrated)
        #expect(partial.revocationPercentage == 25_000)
    }

    @Test("a 12-month commitment billed monthly numbers its billing periods and outlasts a cancellation")
    func commitment() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let verifier = try await emulator.verifier()
        let first = try await emulator.purchase("studio.monthly")
        let transaction = try verifier.transaction(first.signedTransaction)
        #expect(transaction.billingPlanType == .monthly)
        #expect(transaction.commitmentInfo?.billingPeriodNumber == 1)
        #expect(transaction.commitmentInfo?.totalBillingPeriods == 12)
        #expect(try await emulator.subscription(first.transactionId, "cancel") == 200)
        #expect(try await emulator.subscription(first.transactionId, "renew") == 200)
        let client = try emulator.client()
        let statuses = try await client.allSubscriptionStatuses(anyTransactionId: first.transactionId)
        let item = try #require(statuses.data?.first?.lastTransactions?.first)
        #expect(item.status == .active)
        let renewed = try verifier.transaction(try #require(item.signedTransactionInfo))
        #expect(renewed.commitmentInfo?.billingPeriodNumber == 2)
        let renewal = try verifier.renewalInfo(try #require(item.signedRenewalInfo))
        #expect(renewal.commitmentInfo?.commitmentAutoRenewStatus == .off)
        #expect(renewal.commitmentInfo?.commitmentRenewalDate == transaction.commitmentInfo?.commitmentExpiresDate)
    }

    @Test("RESCIND_CONSENT carries the customer's signed app transaction")
    func rescindConsent() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let verifier = try await emulator.verifier()
        let purchase = try await emulator.purchase("premium", account: "kid")
        #expect(try await emulator.post("/emulator/v1/accounts/kid/rescind-consent").status == 200)
        #expect(try await emulator.post("/emulator/v1/accounts/stranger/rescind-consent").status == 404)
        let notification = try #require(try await Self.notifications(emulator, verifier, after: 1).first)
        #expect(notification.payload.notificationType == .rescindConsent)
        #expect(notification.payload.appData?.bundleId == EmulatorProcess.bundleId)
        let bought = try verifier.transaction(purchase.signedTransaction)
        #expect(notification.appTransaction?.appTransactionId == bought.appTransactionId)
        #expect(bought.appTransactionId != nil)
    }

    @Test("--plans names offers and commitments for a catalog of one's own; a bad file stops the start")
    func plansFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "plans-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let catalog = directory.appending(path: "catalog.json")
        try Data(
            #"""
            {"version": 1, "products": [
                {"productId": "gold.monthly", "type": "autoRenewable", "subscriptionGroupId": "gold", "duration": "P1M"}
            ]}
            """#.utf8
        ).write(to: catalog)
        let plans = directory.appending(path: "plans.json")
        try Data(
            #"""
            {"offers": [{"id": "gold.trial", "productId": "gold.monthly", "type": "introductory",
                         "discountType": "FREE_TRIAL", "price": 0, "period": "P3D"}],
             "commitments": {"gold.monthly": 12}}
            """#.utf8
        ).write(to: plans)
        let emulator = try await EmulatorProcess.start(extraArguments: [
            "--catalog", catalog.path, "--plans", plans.path,
        ])
        defer { emulator.stop() }
        let verifier = try await emulator.verifier()
        let purchase = try await emulator.purchase("gold.monthly")
        let transaction = try verifier.transaction(purchase.signedTransaction)
        #expect(transaction.offerPeriod == "P3D")
        #expect(transaction.commitmentInfo?.totalBillingPeriods == 12)

        try Data(
            #"{"offers": [{"id": "x", "productId": "nope", "type": "introductory", "discountType": "FREE_TRIAL", "price": 0}]}"#
                .utf8
        )
        .write(to: plans)
        let error = await #expect(throws: IAPError.self) {
            _ = try await EmulatorProcess.start(extraArguments: ["--catalog", catalog.path, "--plans", plans.path])
        }
        #expect(error?.message.contains("'nope' is not an auto-renewable subscription of the catalog") == true)
    }
}
