import Foundation
import IAPApp
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTesting
import Testing

/// Offers end to end: the server signs with IAPCrypto, the app passes the signature, the App Store checks it.
@Suite("Offers")
struct OfferTests {
    static let keyId = "OFFERKEY01"
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"

    /// A shop whose monthly subscription has an introductory free trial, a promotional offer, a win-back offer and
    /// an offer code, and whose App Store knows the server's in-app purchase key.
    struct Shop {
        let world: AppWorld
        let key: P256PrivateKey

        init(gracePeriodDays: Int? = nil) throws {
            let key = try P256PrivateKey()
            let pem =
                "-----BEGIN PUBLIC KEY-----\n"
                + Data(key.publicKey.derRepresentation).base64EncodedString(options: [.lineLength64Characters])
                + "\n-----END PUBLIC KEY-----\n"
            world = try AppWorld { configuration in
                configuration.gracePeriodDays = gracePeriodDays
                configuration.prices = [AppWorld.monthly: 9_990]
                configuration.subscriptionOffers = [
                    .init(
                        id: "trial",
                        productId: AppWorld.monthly,
                        kind: .introductory,
                        discountType: .freeTrial,
                        price: 0
                    ),
                    .init(
                        id: "comeback",
                        productId: AppWorld.monthly,
                        kind: .promotional,
                        discountType: .payAsYouGo,
                        price: 4_990
                    ),
                    .init(
                        id: "welcome-back",
                        productId: AppWorld.monthly,
                        kind: .winBack,
                        discountType: .payUpFront,
                        price: 1_990
                    ),
                    .init(
                        id: "SPRING",
                        productId: AppWorld.monthly,
                        kind: .offerCode,
                        discountType: .freeTrial,
                        price: 0
                    ),
                ]
                configuration.offerSigningKeys = [OfferTests.keyId: pem]
                configuration.offerIssuerId = OfferTests.issuerId
            }
            self.key = key
        }

        /// What the app's server does: signs the offer for the token the app will use, with the V1 signature.
        func signV1(offer: String, token: UUID, nonce: UUID = UUID(), age: Duration = .zero) throws
            -> PromotionalOfferSignature
        {
            let creator = PromotionalOfferV1SignatureCreator(
                privateKey: key,
                keyId: OfferTests.keyId,
                bundleId: AppWorld.bundleId
            )
            let timestamp = world.clock.now.millisecondsSince1970 - Int64(age.components.seconds) * 1_000
            let signature = try creator.signature(
                productId: AppWorld.monthly,
                offerId: offer,
                appAccountToken: token.uuidString,
                nonce: nonce,
                timestamp: timestamp
            )
            return PromotionalOfferSignature(
                offerId: offer,
                keyId: OfferTests.keyId,
                nonce: nonce,
                signature: signature,
                timestamp: timestamp
            )
        }

        var jwsCreator: OfferJWSSignatureCreator {
            OfferJWSSignatureCreator(
                privateKey: key,
                keyId: OfferTests.keyId,
                issuerId: OfferTests.issuerId,
                bundleId: AppWorld.bundleId,
                clock: world.clock
            )
        }
    }

    @Test("a promotional offer the server signed (V1) reaches the App Store, which applies it")
    func promotionalV1() async throws {
        let shop = try Shop()
        let phone = SimulatedStoreClient(store: shop.world.appStore, account: "alice")
        let app = try await shop.world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())

        let token = await app.appAccountToken(for: "alice")
        let signature = try shop.signV1(offer: "comeback", token: token)
        let options = PurchaseOptions(appAccountToken: token, offer: .promotional(signature))
        let result = await app.purchase(productId: AppWorld.monthly, for: "alice", options: options)
        guard case .delivered(let item) = result else {
            Issue.record("expected a delivery, got \(result)")
            return
        }
        // Passed through unchanged, with the token the server signed.
        let sent = try #require(await phone.lastPurchaseOptions)
        #expect(sent.appAccountToken == token)
        #expect(sent.offer == .promotional(signature))
        // Applied: the transaction carries the offer and its price; the history shows them.
        #expect(item.offerType == .promotionalOffer)
        #expect(item.offerId == "comeback")
        #expect(item.price == 4_990)
        #expect(item.currency == "USD")
        let signed = try #require(try await shop.world.transactions(of: "alice").first?.transaction)
        #expect(signed.payload.appAccountToken == token.uuidString.lowercased())
        #expect(signed.payload.offerDiscountType == .payAsYouGo)
    }

    @Test("a signature that does not verify, has expired or is used twice is refused: offerInvalid, nothing charged")
    func promotionalRefused() async throws {
        let shop = try Shop()
        let phone = SimulatedStoreClient(store: shop.world.appStore, account: "alice")
        let app = try await shop.world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        let token = await app.appAccountToken(for: "alice")

        var tampered = try shop.signV1(offer: "comeback", token: token)
        tampered.timestamp += 1
        let expired = try shop.signV1(offer: "comeback", token: token, age: .seconds(25 * 3_600))
        let otherToken = try shop.signV1(offer: "comeback", token: UUID())
        let unknownOffer = try shop.signV1(offer: "no-such-offer", token: token)
        for signature in [tampered, expired, otherToken, unknownOffer] {
            let options = PurchaseOptions(appAccountToken: token, offer: .promotional(signature))
            let result = await app.purchase(productId: AppWorld.monthly, for: "alice", options: options)
            #expect(result == .failed(IAPError(.offerInvalid)), "\(signature)")
            #expect(result.failureKind == .configuration)
        }
        #expect(try await shop.world.transactions(of: "alice").isEmpty)

        let good = try shop.signV1(offer: "comeback", token: token)
        let once = await app.purchase(
            productId: AppWorld.monthly,
            for: "alice",
            options: PurchaseOptions(appAccountToken: token, offer: .promotional(good))
        )
        guard case .delivered(let first) = once else {
            Issue.record("expected a delivery, got \(once)")
            return
        }
        // Subscribed now: a fresh signature is redeemed for the next renewal (the same transaction comes back, with
        // an OFFER_REDEEMED notification), the used one is refused as invalid (its nonce).
        let fresh = try shop.signV1(offer: "comeback", token: token)
        _ = await shop.world.appStore.drainNotifications()
        let redeemed = await app.purchase(
            productId: AppWorld.monthly,
            for: "alice",
            options: PurchaseOptions(appAccountToken: token, offer: .promotional(fresh))
        )
        guard case .delivered(let again) = redeemed else {
            Issue.record("expected the subscription back, got \(redeemed)")
            return
        }
        #expect(again.transactionId == first.transactionId)
        let verifier = try shop.world.appStore.makeVerifier()
        let types = try await shop.world.appStore.drainNotifications().map {
            try verifier.notification($0).payload.notificationType
        }
        #expect(types == [.offerRedeemed])
        let replay = await app.purchase(
            productId: AppWorld.monthly,
            for: "alice",
            options: PurchaseOptions(appAccountToken: token, offer: .promotional(good))
        )
        #expect(replay == .failed(IAPError(.offerInvalid)))
    }

    @Test("options the coordinator can tell are wrong never reach the store")
    func refusedBeforeTheStore() async throws {
        let shop = try Shop()
        let phone = SimulatedStoreClient(store: shop.world.appStore, account: "alice")
        let app = try await shop.world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        let bobsToken = await app.appAccountToken(for: "bob")
        let signature = try shop.signV1(offer: "comeback", token: bobsToken)
        var notBase64 = signature
        notBase64.signature = "not base64!"
        let cases: [PurchaseOptions] = [
            PurchaseOptions(appAccountToken: bobsToken, offer: .promotional(signature)),
            PurchaseOptions(appAccountToken: UUID()),
            PurchaseOptions(offer: .promotional(notBase64)),
            PurchaseOptions(offer: .promotionalJWS(offerId: "comeback", compactJWS: "not-a-jws")),
            PurchaseOptions(introductoryOfferEligibility: "a.b"),
            PurchaseOptions(offer: .winBack(offerId: "")),
        ]
        for options in cases {
            let result = await app.purchase(productId: AppWorld.monthly, for: "alice", options: options)
            #expect(result == .failed(IAPError(.invalidArgument)), "\(options)")
        }
        #expect(await phone.lastPurchaseOptions == nil)
    }

    @Test("the compact JWS promotional offer and the server's introductory offer eligibility")
    func jwsOffers() async throws {
        let shop = try Shop()
        let phone = SimulatedStoreClient(store: shop.world.appStore, account: "alice")
        let app = try await shop.world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        // A customer who never subscribed gets the free trial by the App Store's own rule...
        let bob = try await shop.world.launch(
            on: SimulatedStoreClient(store: shop.world.appStore, account: "bob"),
            outbox: InMemoryPurchaseOutboxStorage(),
            user: "bob"
        )
        guard case .delivered(let trial) = await bob.purchase(productId: AppWorld.monthly, for: "bob") else {
            Issue.record("bob's subscription was not delivered")
            return
        }
        #expect(trial.offerType == .introductoryOffer)
        #expect(trial.price == 0)

        // ...unless the server, which knows the customer, signs that they are not eligible.
        guard case .delivered(let coins) = await app.purchase(productId: AppWorld.coins, for: "alice") else {
            Issue.record("alice's coins were not delivered")
            return
        }
        let notEligible = try shop.jwsCreator.introductoryOfferEligibilitySignature(
            productId: AppWorld.monthly,
            allowIntroductoryOffer: false,
            transactionId: coins.transactionId
        )
        let full = await app.purchase(
            productId: AppWorld.monthly,
            for: "alice",
            options: PurchaseOptions(introductoryOfferEligibility: notEligible)
        )
        guard case .delivered(let paid) = full else {
            Issue.record("expected a delivery, got \(full)")
            return
        }
        #expect(paid.offerType == nil)
        #expect(paid.price == 9_990)
        #expect(await phone.lastPurchaseOptions?.introductoryOfferEligibility == notEligible)

        // A lapsed subscriber comes back with a JWS-signed promotional offer.
        try await shop.world.appStore.setAutoRenew(originalTransactionId: paid.originalTransactionId, enabled: false)
        try await shop.world.appStore.advance(by: .seconds(32 * 86_400))
        let jws = try shop.jwsCreator.promotionalOfferSignature(
            productId: AppWorld.monthly,
            offerIdentifier: "comeback",
            transactionId: coins.transactionId
        )
        let back = await app.purchase(
            productId: AppWorld.monthly,
            for: "alice",
            options: PurchaseOptions(offer: .promotionalJWS(offerId: "comeback", compactJWS: jws))
        )
        guard case .delivered(let promoted) = back else {
            Issue.record("expected a delivery, got \(back)")
            return
        }
        #expect(promoted.offerType == .promotionalOffer)
        #expect(promoted.offerId == "comeback")
        #expect(promoted.price == 4_990)
    }

    @Test("a win-back offer applies to a lapsed subscriber, whom the subscription status names eligible")
    func winBack() async throws {
        let shop = try Shop()
        let phone = SimulatedStoreClient(store: shop.world.appStore, account: "alice")
        let app = try await shop.world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        // Not subscribed before: not eligible, nothing charged.
        let early = await app.purchase(
            productId: AppWorld.monthly,
            for: "alice",
            options: PurchaseOptions(offer: .winBack(offerId: "welcome-back"))
        )
        #expect(early == .failed(IAPError(.offerIneligible)))
        #expect(try await shop.world.transactions(of: "alice").isEmpty)

        guard case .delivered(let first) = await app.purchase(productId: AppWorld.monthly, for: "alice") else {
            Issue.record("the subscription was not delivered")
            return
        }
        try await shop.world.appStore.setAutoRenew(originalTransactionId: first.originalTransactionId, enabled: false)
        try await shop.world.appStore.advance(by: .seconds(32 * 86_400))
        let status = try #require(try await app.subscriptionStatuses(groupId: "plus").first)
        #expect(status.state == .expired)
        #expect(status.eligibleWinBackOfferIds == ["welcome-back"])

        let back = await app.purchase(
            productId: AppWorld.monthly,
            for: "alice",
            options: PurchaseOptions(offer: .winBack(offerId: "welcome-back"))
        )
        guard case .delivered(let item) = back else {
            Issue.record("expected a delivery, got \(back)")
            return
        }
        #expect(item.offerType == .winBackOffer)
        #expect(item.offerId == "welcome-back")
        #expect(item.price == 1_990)
        #expect(item.originalTransactionId == first.originalTransactionId)
    }

    @Test("a code redeemed in the offer code sheet arrives as a transaction and is delivered")
    func offerCode() async throws {
        let shop = try Shop()
        let phone = SimulatedStoreClient(store: shop.world.appStore, account: "alice")
        let app = try await shop.world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        await phone.redeemOfferCodeInNextSheet(productId: AppWorld.monthly, offerId: "SPRING")
        try await app.presentOfferCodeRedemption()
        #expect(await phone.offerCodeSheetCount == 1)
        let redeemed = try #require(try await shop.world.transactions(of: "alice").first?.transaction)
        #expect(redeemed.payload.offerType == .offerCode)
        #expect(redeemed.payload.offerIdentifier == "SPRING")
        try await eventually("the redeemed subscription is delivered") {
            try await shop.world.isFinished(redeemed.transactionId)
        }
        #expect(shop.world.grants.map(\.transactionId) == [redeemed.transactionId])
    }
}
