import Foundation
import IAPCore
import IAPTestSupport
import Testing

/// The fast transaction decoder must agree with `JSONDecoder` on every input it accepts, and hand
/// everything unusual back to it.
@Suite("Fast transaction decoding")
struct FastTransactionDecoderTests {
    static let typical = """
        {"appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","appTransactionId":"704289572311181848",\
        "bundleId":"com.example.app","currency":"USD","environment":"Production","expiresDate":1769904000000,\
        "inAppOwnershipType":"PURCHASED","isUpgraded":false,"offerType":1,"originalPurchaseDate":1767225600000,\
        "originalTransactionId":"2000000812345678","price":9990,"productId":"com.example.app.premium.monthly",\
        "purchaseDate":1767225600000,"quantity":1,"revocationReason":0,"signedDate":1767225600000,\
        "storefront":"USA","storefrontId":"143441","subscriptionGroupIdentifier":"21345678",\
        "transactionId":"2000000812345679","transactionReason":"PURCHASE","type":"Auto-Renewable Subscription",\
        "webOrderLineItemId":"2000000098765432","offerDiscountType":"FREE_TRIAL","offerPeriod":"P1M",\
        "revocationType":"REFUND_FULL","revocationPercentage":50000,"billingPlanType":"MONTHLY",\
        "offerIdentifier":"intro","revocationDate":1768225600000}
        """

    static func fast(_ json: String) -> TransactionPayload? {
        Array(json.utf8).withUnsafeBytes { FastTransactionDecoder.decode($0) }
    }

    static func full(_ json: String) -> TransactionPayload? {
        try? AppStoreJSON.makeDecoder().decode(TransactionPayload.self, from: Data(json.utf8))
    }

    @Test func decodesEveryFlatFieldLikeJSONDecoder() throws {
        let fast = try #require(Self.fast(Self.typical))
        #expect(fast == Self.full(Self.typical))
        #expect(fast.transactionId == "2000000812345679")
        #expect(fast.purchaseDate == Date(millisecondsSince1970: 1_767_225_600_000))
        #expect(fast.type == .autoRenewableSubscription)
        #expect(fast.offerType == .introductoryOffer)
        #expect(fast.price == 9_990)
        #expect(fast.isUpgraded == false)
        #expect(fast.revocationPercentage == 50_000)
    }

    @Test func acceptsWhatJSONDecoderAcceptsInTheCommonShape() {
        let cases = [
            "{}",
            " {\n\t\"quantity\" : 2 ,\r\n \"bundleId\":\"a\" } \n",
            #"{"quantity":null,"bundleId":null,"advancedCommerceInfo":null,"isUpgraded":true}"#,
            #"{"unknownField":"x","another":12,"flag":false,"nothing":null}"#,
            #"{"environment":"LocalTestingxxx","type":"Something New","offerType":99}"#,
            #"{"price":-9223372036854775808,"quantity":-2147483648}"#,
            #"{"price":9223372036854775807,"quantity":2147483647}"#,
            #"{"purchaseDate":-62135769600000,"signedDate":0}"#,
            #"{"quantity":-0}"#,
        ]
        for json in cases {
            let fast = Self.fast(json)
            #expect(fast != nil, "fast path refused \(json)")
            #expect(fast == Self.full(json), "disagreement on \(json)")
        }
    }

    @Test func handsUnusualInputBackToTheFullDecoder() {
        let cases = [
            #"{"bundleId":"com.example\u0041"}"#,  // escape
            #"{"bundleId":"caf\#u{E9}"}"#,  // non-ASCII
            #"{"quantity":1,"quantity":2}"#,  // duplicate key
            #"{"futureField":1,"bundleId":"a","futureField":2}"#,  // an unknown key twice
            #"{"futureField":1,"futureField":1}"#,  // an unknown key twice, one value
            #"{"quantity":01}"#,  // leading zero
            #"{"quantity":1.0}"#,  // fraction
            #"{"purchaseDate":1697679936049.7297}"#,  // Xcode's fractional milliseconds
            #"{"quantity":1e3}"#,  // exponent
            #"{"quantity":2147483648}"#,  // Int32 overflow
            #"{"price":9223372036854775808}"#,  // Int64 overflow
            #"{"commitmentInfo":{"billingPeriodNumber":1}}"#,  // nested object
            #"{"unknown":[1,2]}"#,  // array
            #"{"unknown":{"a":1}}"#,  // nested unknown object
            #"{"quantity":"1"}"#,  // wrong type
            #"{"bundleId":1}"#,  // wrong type
            #"{"isUpgraded":"true"}"#,  // wrong type
            #"{"purchaseDate":true}"#,  // wrong type
            #"{"quantity":1} x"#,  // trailing bytes
            #"{"quantity":1,}"#,  // trailing comma
            #"{"quantity":tru}"#,  // broken literal
            #"{"quantity":nulls}"#,  // broken literal
            #"{"quantity" 1}"#,  // missing colon
            #"{"quantity":1"#,  // unterminated
            #"[{"quantity":1}]"#,  // not an object
            "",
            "{\"bundleId\":\"a\u{01}\"}",  // control character
            #"{"purchaseDate":281474976710656}"#,  // beyond the accepted date range
        ]
        for json in cases {
            #expect(Self.fast(json) == nil, "fast path accepted \(json)")
        }
    }

    /// Thousands of deterministic random mutations of a real payload: whenever the fast path answers,
    /// `JSONDecoder` must give the same payload.
    @Test func agreesWithJSONDecoderOnMutatedPayloads() {
        var generator = SplitMix64(seed: 0x5EED)
        let original = Array(Self.typical.utf8)
        let alphabet = Array(#"{}[]:,"\ -+.0123456789eEtrufalsn x"#.utf8)
        var accepted = 0
        for _ in 0..<20_000 {
            let bytes = generator.mutate(original, alphabet: alphabet)
            guard let fast = bytes.withUnsafeBytes({ FastTransactionDecoder.decode($0) }) else { continue }
            accepted += 1
            let full = try? AppStoreJSON.makeDecoder().decode(TransactionPayload.self, from: Data(bytes))
            #expect(full == fast, "disagreement on \(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(accepted > 100, "the mutations should leave many payloads in the fast path's shape")
    }
}
