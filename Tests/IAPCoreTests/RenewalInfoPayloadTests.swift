import Foundation
import IAPCore
import IAPTestSupport
import Testing

@Suite struct RenewalInfoPayloadTests {
    @Test func decodesEveryFieldOfAppleSignedRenewalInfo() throws {
        let renewal = try Fixture.decode(RenewalInfoPayload.self, "signedRenewalInfo")

        #expect(renewal.expirationIntent == .customerCancelled)
        #expect(renewal.expirationIntent?.rawValue == 1)
        #expect(renewal.originalTransactionId == "12345")
        #expect(renewal.autoRenewProductId == "com.example.product.2")
        #expect(renewal.productId == "com.example.product")
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.autoRenewStatus?.rawValue == 1)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.priceIncreaseStatus == .customerHasNotResponded)
        #expect(renewal.priceIncreaseStatus?.rawValue == 0)
        #expect(ms(renewal.gracePeriodExpiresDate) == 1_698_148_900_000)
        #expect(renewal.offerType == .promotionalOffer)
        #expect(renewal.offerType?.rawValue == 2)
        #expect(renewal.offerIdentifier == "abc.123")
        #expect(ms(renewal.signedDate) == 1_698_148_800_000)
        #expect(renewal.environment == .localTesting)
        #expect(renewal.environment?.rawValue == "LocalTesting")
        #expect(ms(renewal.recentSubscriptionStartDate) == 1_698_148_800_000)
        #expect(ms(renewal.renewalDate) == 1_698_148_850_000)
        #expect(renewal.renewalPrice == 9990)
        #expect(renewal.currency == "USD")
        #expect(renewal.offerDiscountType == .payAsYouGo)
        #expect(renewal.offerDiscountType?.rawValue == "PAY_AS_YOU_GO")
        #expect(renewal.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(renewal.appTransactionId == "71134")
        #expect(renewal.offerPeriod == "P1Y")
        #expect(renewal.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(renewal.appAccountTokenUUID == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(renewal.renewalBillingPlanType == .monthly)
        #expect(renewal.renewalBillingPlanType?.rawValue == "MONTHLY")
        #expect(renewal.signingDate == renewal.signedDate)

        let commerce = try #require(renewal.advancedCommerceInfo)
        #expect(commerce.consistencyToken == "token-abc-123")
        #expect(commerce.descriptors?.description == "Premium Plan")
        #expect(commerce.descriptors?.displayName == "Premium")
        #expect(commerce.period == "P1M")
        #expect(commerce.requestReferenceId == "ref-12345")
        #expect(commerce.taxCode == "TAX_CODE_1")
        let items = try #require(commerce.items)
        #expect(items.count == 1)
        let item = try #require(items.first)
        #expect(item.sku == "com.example.sku.premium")
        #expect(item.description == "Premium feature")
        #expect(item.displayName == "Premium Feature")
        #expect(item.price == 9990)
        #expect(item.offer == nil)
        #expect(
            item.priceIncreaseInfo
                == AdvancedCommercePriceIncreaseInfo(
                    dependentSKUs: ["com.example.sku.1", "com.example.sku.2"],
                    price: 12_990,
                    status: "PENDING"
                )
        )

        let commitment = try #require(renewal.commitmentInfo)
        #expect(commitment.commitmentAutoRenewProductId == "com.example.product.commitment")
        #expect(commitment.commitmentAutoRenewStatus == .on)
        #expect(commitment.commitmentRenewalBillingPlanType == .monthly)
        #expect(ms(commitment.commitmentRenewalDate) == 1_698_149_500_000)
        #expect(commitment.commitmentRenewalPrice == 9990)
    }

    @Test func decodesXcodeRenewalInfo() throws {
        // The payload of Apple's `xcode-signed-renewal-info`: fractional milliseconds and undocumented keys.
        let renewal = try Fixture.decode(RenewalInfoPayload.self, "xcodeRenewalInfo")

        #expect(renewal.environment == .xcode)
        #expect(renewal.productId == "pass.premium")
        #expect(renewal.autoRenewProductId == "pass.premium")
        #expect(renewal.originalTransactionId == "0")
        #expect(renewal.autoRenewStatus == .on)
        #expect(ms(renewal.renewalDate) == 1_700_358_336_049)
        #expect(ms(renewal.recentSubscriptionStartDate) == 1_697_679_936_049)
        #expect(ms(renewal.signedDate) == 1_697_679_936_711)
        #expect(renewal.expirationIntent == nil)
    }

    @Test func reencodesAppleFixtureWithoutLosingAField() throws {
        try expectReencodesIdentically(RenewalInfoPayload.self, fixture: "signedRenewalInfo")
        try expectRoundTrip(try Fixture.decode(RenewalInfoPayload.self, "signedRenewalInfo"))
        try expectRoundTrip(try Fixture.decode(RenewalInfoPayload.self, "xcodeRenewalInfo"))
    }

    @Test func keepsUnknownEnumerationValues() throws {
        let json = """
            {"expirationIntent":42,"autoRenewStatus":2,"priceIncreaseStatus":7,
             "renewalBillingPlanType":"QUARTERLY","commitmentInfo":{"commitmentAutoRenewStatus":3}}
            """
        let renewal = try decode(RenewalInfoPayload.self, json: json)

        #expect(renewal.expirationIntent == ExpirationIntent(rawValue: 42))
        #expect(renewal.expirationIntent?.isKnown == false)
        #expect(renewal.autoRenewStatus?.rawValue == 2)
        #expect(renewal.autoRenewStatus?.isKnown == false)
        #expect(renewal.priceIncreaseStatus?.rawValue == 7)
        #expect(renewal.renewalBillingPlanType?.rawValue == "QUARTERLY")
        #expect(renewal.commitmentInfo?.commitmentAutoRenewStatus?.rawValue == 3)
        let reencoded = try AppStoreJSON.makeEncoder().encode(renewal)
        #expect(try canonicalJSON(reencoded) == canonicalJSON(Data(json.utf8)))
    }

    @Test func rejectsWrongTypes() {
        #expect(throws: DecodingError.self) {
            try decode(RenewalInfoPayload.self, json: #"{"autoRenewStatus":"1"}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(RenewalInfoPayload.self, json: #"{"eligibleWinBackOfferIds":"eligible1"}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(RenewalInfoPayload.self, json: #"{"renewalPrice":"9990"}"#)
        }
    }
}
