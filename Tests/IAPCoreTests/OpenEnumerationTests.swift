import Foundation
import IAPCore
import IAPTestSupport
import Testing

@Suite struct OpenEnumerationTests {
    @Test func unknownStringValueIsKeptAndReencoded() throws {
        let environment = try decode(AppStoreEnvironment.self, json: #""LocalTestingxxx""#)
        #expect(environment.rawValue == "LocalTestingxxx")
        #expect(!environment.isKnown)
        #expect(environment != .localTesting)
        #expect(environment == AppStoreEnvironment(rawValue: "LocalTestingxxx"))
        #expect(try encodedJSON(environment) == #""LocalTestingxxx""#)
    }

    @Test func unknownIntegerValueIsKeptAndReencoded() throws {
        let status = try decode(SubscriptionStatus.self, json: "99")
        #expect(status.rawValue == 99)
        #expect(!status.isKnown)
        #expect(try encodedJSON(status) == "99")
    }

    @Test func knownValuesEncodeAsTheirBareRawValue() throws {
        #expect(try encodedJSON(ProductType.nonRenewingSubscription) == #""Non-Renewing Subscription""#)
        #expect(try encodedJSON(OfferType.winBackOffer) == "4")
        #expect(try encodedJSON([NotificationType.didRenew, .priceChange]) == #"["DID_RENEW","PRICE_CHANGE"]"#)
    }

    @Test func decodingAKnownRawValueGivesTheNamedValue() throws {
        #expect(try decode(NotificationSubtype.self, json: #""BILLING_RECOVERY""#) == .billingRecovery)
        #expect(try decode(RevocationReason.self, json: "0") == .refundedForOtherReason)
        #expect(try decode(PurchasePlatform.self, json: #""visionOS""#).isKnown)
    }

    @Test func rawValuesAreCaseSensitive() throws {
        let environment = try decode(AppStoreEnvironment.self, json: #""sandbox""#)
        #expect(environment != .sandbox)
        #expect(!environment.isKnown)
    }

    @Test func wrongJSONTypeFailsDecoding() {
        #expect(throws: DecodingError.self) {
            try decode(AutoRenewStatus.self, json: #""1""#)
        }
        #expect(throws: DecodingError.self) {
            try decode(AppStoreEnvironment.self, json: "1")
        }
        #expect(throws: DecodingError.self) {
            try decode(OfferType.self, json: "4294967296")
        }
    }

    @Test func descriptionIsTheRawValue() {
        #expect(AppStoreEnvironment.production.description == "Production")
        #expect("\(OfferType(rawValue: 12))" == "12")
    }

    @Test func valuesWorkAsSetElementsAndDictionaryKeys() {
        var counts: [NotificationType: Int] = [:]
        counts[.refund, default: 0] += 1
        counts[NotificationType(rawValue: "REFUND"), default: 0] += 1
        #expect(counts == [.refund: 2])
    }

    @Test func everyKnownListHasNoDuplicates() {
        func unique<T: OpenEnumeration>(_: T.Type) -> Bool {
            Set(T.allKnown).count == T.allKnown.count
        }
        #expect(unique(AppStoreEnvironment.self))
        #expect(unique(ProductType.self))
        #expect(unique(InAppOwnershipType.self))
        #expect(unique(OfferType.self))
        #expect(unique(OfferDiscountType.self))
        #expect(unique(RevocationReason.self))
        #expect(unique(RevocationType.self))
        #expect(unique(TransactionReason.self))
        #expect(unique(NotificationType.self))
        #expect(unique(NotificationSubtype.self))
        #expect(unique(SubscriptionStatus.self))
        #expect(unique(ExpirationIntent.self))
        #expect(unique(PriceIncreaseStatus.self))
        #expect(unique(AutoRenewStatus.self))
        #expect(unique(ConsumptionRequestReason.self))
        #expect(unique(PurchasePlatform.self))
        #expect(unique(BillingPlanType.self))
        #expect(unique(RenewalBillingPlanType.self))
        #expect(NotificationType.allKnown.count == 23)
        #expect(NotificationSubtype.allKnown.count == 17)
    }
}
