import Foundation
import IAPCore
import IAPTestSupport
import Testing

@Suite struct TransactionPayloadTests {
    @Test func decodesEveryFieldOfAppleSignedTransaction() throws {
        let transaction = try Fixture.decode(TransactionPayload.self, "signedTransaction")

        #expect(transaction.originalTransactionId == "12345")
        #expect(transaction.transactionId == "23456")
        #expect(transaction.webOrderLineItemId == "34343")
        #expect(transaction.bundleId == "com.example")
        #expect(transaction.productId == "com.example.product")
        #expect(transaction.subscriptionGroupIdentifier == "55555")
        #expect(ms(transaction.purchaseDate) == 1_698_148_900_000)
        #expect(ms(transaction.originalPurchaseDate) == 1_698_148_800_000)
        #expect(ms(transaction.expiresDate) == 1_698_149_000_000)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.type?.rawValue == "Auto-Renewable Subscription")
        #expect(transaction.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(transaction.appAccountTokenUUID == UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138"))
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.inAppOwnershipType?.rawValue == "PURCHASED")
        #expect(ms(transaction.signedDate) == 1_698_148_900_000)
        #expect(transaction.revocationReason == .refundedDueToIssue)
        #expect(transaction.revocationReason?.rawValue == 1)
        #expect(ms(transaction.revocationDate) == 1_698_148_950_000)
        #expect(transaction.isUpgraded == true)
        #expect(transaction.offerType == .introductoryOffer)
        #expect(transaction.offerType?.rawValue == 1)
        #expect(transaction.offerIdentifier == "abc.123")
        #expect(transaction.environment == .localTesting)
        #expect(transaction.environment?.rawValue == "LocalTesting")
        #expect(transaction.storefront == "USA")
        #expect(transaction.storefrontId == "143441")
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.transactionReason?.rawValue == "PURCHASE")
        #expect(transaction.currency == "USD")
        #expect(transaction.price == 10_990)
        #expect(transaction.offerDiscountType == .payAsYouGo)
        #expect(transaction.offerDiscountType?.rawValue == "PAY_AS_YOU_GO")
        #expect(transaction.appTransactionId == "71134")
        #expect(transaction.offerPeriod == "P1Y")
        #expect(transaction.revocationType == nil)
        #expect(transaction.revocationPercentage == nil)
        #expect(transaction.billingPlanType == .monthly)
        #expect(transaction.billingPlanType?.rawValue == "MONTHLY")

        let commitment = try #require(transaction.commitmentInfo)
        #expect(commitment.billingPeriodNumber == 3)
        #expect(ms(commitment.commitmentExpiresDate) == 1_698_150_000_000)
        #expect(commitment.commitmentPrice == 119_880)
        #expect(commitment.totalBillingPeriods == 12)

        let commerce = try #require(transaction.advancedCommerceInfo)
        #expect(
            commerce.descriptors == AdvancedCommerceDescriptors(description: "Premium Plan", displayName: "Premium")
        )
        #expect(commerce.estimatedTax == 1500)
        #expect(commerce.period == "P1M")
        #expect(commerce.requestReferenceId == "ref-12345")
        #expect(commerce.taxCode == "TAX_CODE_1")
        #expect(commerce.taxExclusivePrice == 8490)
        #expect(commerce.taxRate == "0.15")
        let items = try #require(commerce.items)
        #expect(items.count == 1)
        let item = try #require(items.first)
        #expect(item.sku == "com.example.sku.premium")
        #expect(item.description == "Premium feature")
        #expect(item.displayName == "Premium Feature")
        #expect(item.price == 9990)
        #expect(item.offer == nil)
        #expect(ms(item.revocationDate) == 1_698_149_200_000)
        let refunds = try #require(item.refunds)
        #expect(refunds.count == 1)
        let refund = try #require(refunds.first)
        #expect(refund.refundAmount == 5000)
        #expect(ms(refund.refundDate) == 1_698_149_100_000)
        #expect(refund.refundReason == "FULFILLMENT_ISSUE")
        #expect(refund.refundType == "PRORATED")
    }

    @Test func decodesRevocationTypeAndPercentage() throws {
        let transaction = try Fixture.decode(TransactionPayload.self, "signedTransactionWithRevocation")

        #expect(transaction.originalTransactionId == "12345")
        #expect(transaction.transactionId == "23456")
        #expect(transaction.webOrderLineItemId == "34343")
        #expect(transaction.bundleId == "com.example")
        #expect(transaction.productId == "com.example.product")
        #expect(transaction.subscriptionGroupIdentifier == "55555")
        #expect(ms(transaction.purchaseDate) == 1_698_148_900_000)
        #expect(ms(transaction.originalPurchaseDate) == 1_698_148_800_000)
        #expect(ms(transaction.expiresDate) == 1_698_149_000_000)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(ms(transaction.signedDate) == 1_698_148_900_000)
        #expect(transaction.revocationReason == .refundedDueToIssue)
        #expect(ms(transaction.revocationDate) == 1_698_148_950_000)
        #expect(transaction.isUpgraded == true)
        #expect(transaction.offerType == .introductoryOffer)
        #expect(transaction.offerIdentifier == "abc.123")
        #expect(transaction.environment == .localTesting)
        #expect(transaction.storefront == "USA")
        #expect(transaction.storefrontId == "143441")
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.price == 10_990)
        #expect(transaction.currency == "USD")
        #expect(transaction.offerDiscountType == .payAsYouGo)
        #expect(transaction.appTransactionId == "71134")
        #expect(transaction.offerPeriod == "P1Y")
        #expect(transaction.revocationType == .refundProrated)
        #expect(transaction.revocationType?.rawValue == "REFUND_PRORATED")
        #expect(transaction.revocationPercentage == 50_000)
        #expect(transaction.advancedCommerceInfo == nil)
        #expect(transaction.billingPlanType == nil)
        #expect(transaction.commitmentInfo == nil)
        #expect(transaction.isRevoked)
    }

    @Test func decodesXcodeTransactionWithFractionalDatesAndExtraKeys() throws {
        // The payload of Apple's `xcode-signed-transaction`: fractional milliseconds and a
        // `deviceVerification` key that transactions do not document.
        let transaction = try Fixture.decode(TransactionPayload.self, "xcodeTransaction")

        #expect(transaction.environment == .xcode)
        #expect(transaction.bundleId == "com.example.naturelab.backyardbirds.example")
        #expect(transaction.transactionId == "0")
        #expect(transaction.originalTransactionId == "0")
        #expect(transaction.webOrderLineItemId == "0")
        #expect(transaction.productId == "pass.premium")
        #expect(transaction.subscriptionGroupIdentifier == "6F3A93AB")
        #expect(ms(transaction.purchaseDate) == 1_697_679_936_049)
        #expect(ms(transaction.originalPurchaseDate) == 1_697_679_936_049)
        #expect(ms(transaction.expiresDate) == 1_700_358_336_049)
        #expect(ms(transaction.signedDate) == 1_697_679_936_056)
        #expect(transaction.purchaseDate == Date(millisecondsSince1970: 1_697_679_936_049))
        #expect(transaction.offerType == .introductoryOffer)
        #expect(transaction.isUpgraded == false)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.storefront == "USA")
        #expect(transaction.storefrontId == "143441")
        #expect(transaction.revocationDate == nil)
        #expect(!transaction.isRevoked)

        // Re-encoding writes whole milliseconds and drops the undocumented key.
        let json = try encodedJSON(transaction)
        #expect(json.contains("\"purchaseDate\":1697679936049,"))
        #expect(!json.contains("deviceVerification"))
    }

    @Test func reencodesAppleFixturesWithoutLosingAField() throws {
        try expectReencodesIdentically(TransactionPayload.self, fixture: "signedTransaction")
        try expectReencodesIdentically(TransactionPayload.self, fixture: "signedTransactionWithRevocation")
        try expectRoundTrip(try Fixture.decode(TransactionPayload.self, "signedTransaction"))
        try expectRoundTrip(try Fixture.decode(TransactionPayload.self, "xcodeTransaction"))
    }

    @Test func keepsUnknownEnumerationValues() throws {
        let json = """
            {"environment":"LocalTestingxxx","type":"Subscription Bundle","offerType":7,
             "revocationReason":9,"inAppOwnershipType":"BORROWED","transactionReason":"GIFT",
             "offerDiscountType":"HALF_OFF","revocationType":"REFUND_PARTIAL","billingPlanType":"WEEKLY"}
            """
        let transaction = try decode(TransactionPayload.self, json: json)

        #expect(transaction.environment?.rawValue == "LocalTestingxxx")
        #expect(transaction.environment?.isKnown == false)
        #expect(transaction.environment != .localTesting)
        #expect(transaction.type?.rawValue == "Subscription Bundle")
        #expect(transaction.type?.isKnown == false)
        #expect(transaction.offerType == OfferType(rawValue: 7))
        #expect(transaction.offerType?.isKnown == false)
        #expect(transaction.revocationReason?.rawValue == 9)
        #expect(transaction.inAppOwnershipType?.rawValue == "BORROWED")
        #expect(transaction.transactionReason?.rawValue == "GIFT")
        #expect(transaction.offerDiscountType?.rawValue == "HALF_OFF")
        #expect(transaction.revocationType?.rawValue == "REFUND_PARTIAL")
        #expect(transaction.billingPlanType?.rawValue == "WEEKLY")

        let reencoded = try AppStoreJSON.makeEncoder().encode(transaction)
        #expect(try canonicalJSON(reencoded) == canonicalJSON(Data(json.utf8)))
    }

    @Test func ignoresUnknownKeys() throws {
        let transaction = try decode(
            TransactionPayload.self,
            json: #"{"transactionId":"1","futureField":{"nested":[1,2]},"anotherOne":"x"}"#
        )
        #expect(transaction == TransactionPayload(transactionId: "1"))
    }

    @Test func rejectsWrongTypes() {
        #expect(throws: DecodingError.self) {
            try decode(TransactionPayload.self, json: #"{"purchaseDate":"1698148900000"}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(TransactionPayload.self, json: #"{"price":"10990"}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(TransactionPayload.self, json: #"{"transactionId":23456}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(TransactionPayload.self, json: #"{"offerType":"1"}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(TransactionPayload.self, json: #"{"quantity":1.5}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(TransactionPayload.self, json: #"{"quantity":2147483648}"#)
        }
    }

    @Test func malformedAppAccountTokenDoesNotFailDecoding() throws {
        let transaction = try decode(TransactionPayload.self, json: #"{"appAccountToken":"not-a-uuid"}"#)
        #expect(transaction.appAccountToken == "not-a-uuid")
        #expect(transaction.appAccountTokenUUID == nil)
        #expect(TransactionPayload().appAccountTokenUUID == nil)
    }

    @Test func revocationFollowsRevocationDate() {
        #expect(!TransactionPayload(revocationReason: .refundedDueToIssue).isRevoked)
        #expect(TransactionPayload(revocationDate: Date(millisecondsSince1970: 0)).isRevoked)
    }

    @Test(
        arguments: [
            (nil, 1),
            (1, 1),
            (5, 5),
            (0, 1),
            (-3, 1),
            (Int32.max, Int(Int32.max)),
        ] as [(Int32?, Int)]
    )
    func effectiveQuantityIsAtLeastOne(quantity: Int32?, expected: Int) {
        #expect(TransactionPayload(quantity: quantity).effectiveQuantity == expected)
    }

    @Test func signingDateIsSignedDate() {
        let transaction = TransactionPayload(
            purchaseDate: Date(millisecondsSince1970: 1),
            signedDate: Date(millisecondsSince1970: 2)
        )
        #expect(transaction.signingDate == Date(millisecondsSince1970: 2))
        #expect(TransactionPayload().signingDate == nil)
    }

    @Test func emptyPayloadEncodesAsEmptyObject() throws {
        #expect(try encodedJSON(TransactionPayload()) == "{}")
    }
}
