import Foundation
import IAPCore
import IAPCrypto
import IAPTesting
import Testing

/// A compact JWS split into its decoded header, decoded claims, signing input and raw signature.
struct DecodedJWS {
    let header: [String: Any]
    let claims: [String: Any]
    let signingInput: [UInt8]
    let signature: [UInt8]

    init(_ token: String) throws {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(segments.count == 3)
        header = try B64.jsonObject(segments[0])
        claims = try B64.jsonObject(segments[1])
        signingInput = Array((segments[0] + "." + segments[1]).utf8)
        signature = try #require(Base64.decodeURL(segments[2]))
    }

    func int(_ key: String) -> Int64? {
        (claims[key] as? NSNumber)?.int64Value
    }
}

@Suite("App Store Server API bearer tokens")
struct AppStoreServerAPITokenProviderTests {
    let key: P256PrivateKey
    /// 2023-10-24T12:01:40.750Z: iat must be rounded down to whole seconds.
    let start = Date(timeIntervalSince1970: 1_698_148_900.75)

    init() throws {
        key = try P256PrivateKey(pemRepresentation: try Fixtures.text("testSigningKey.p8"))
    }

    func provider(clock: any WallClock, lifetime: Duration = .seconds(300)) throws -> AppStoreServerAPITokenProvider {
        try AppStoreServerAPITokenProvider(
            privateKey: key,
            keyId: "ABCDEFGHIJ",
            issuerId: "57246542-96fe-1a63-e053-0824d011072a",
            bundleId: "com.example.app",
            lifetime: lifetime,
            clock: clock
        )
    }

    @Test("Header and claims are what App Store Connect requires, and the signature verifies")
    func claims() async throws {
        let token = try await provider(clock: ManualClock(now: start)).token()
        let jws = try DecodedJWS(token)
        #expect(jws.header["alg"] as? String == "ES256")
        #expect(jws.header["kid"] as? String == "ABCDEFGHIJ")
        #expect(jws.header["typ"] as? String == "JWT")
        #expect(jws.header["x5c"] == nil)
        #expect(jws.claims["iss"] as? String == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(jws.int("iat") == 1_698_148_900)
        #expect(jws.int("exp") == 1_698_149_200)
        #expect(jws.claims["aud"] as? String == "appstoreconnect-v1")
        #expect(jws.claims["bid"] as? String == "com.example.app")
        #expect(Set(jws.claims.keys) == ["iss", "iat", "exp", "aud", "bid"])
        #expect(jws.signature.count == 64)
        #expect(key.publicKey.isValidSignature(jws.signature, for: jws.signingInput))
    }

    @Test("The .p8 key is the one whose public key the derived vector publishes")
    func keyMatchesVector() throws {
        let vector = try Fixtures.json("promotional-offer-v1.json")
        let pem = try #require(vector["public_key_pem"] as? String)
        #expect(try P256PublicKey(pemRepresentation: pem).derRepresentation == key.publicKey.derRepresentation)
    }

    @Test("A token is reused until 60 s before it expires, then re-minted; invalidate() forces a new one")
    func reuse() async throws {
        let clock = ManualClock(now: start)
        let provider = try provider(clock: clock)
        let first = try await provider.token()
        #expect(try await provider.token() == first)
        clock.advance(by: .seconds(239))  // exp - now = 61 s
        #expect(try await provider.token() == first)
        clock.advance(by: .seconds(2))  // exp - now = 59 s
        let second = try await provider.token()
        #expect(second != first)
        #expect(try DecodedJWS(second).int("iat") == 1_698_148_900 + 241)
        #expect(try DecodedJWS(second).int("exp") == 1_698_148_900 + 241 + 300)
        #expect(try await provider.token() == second)

        await provider.invalidate()
        let third = try await provider.token()
        #expect(third != second)
        #expect(try DecodedJWS(third).int("iat") == 1_698_148_900 + 241)
        #expect(try provider.currentToken() == third)
    }

    @Test("A lifetime over 20 minutes or of 1 minute or less: invalidConfiguration")
    func lifetimeBounds() throws {
        let clock = ManualClock(now: start)
        for lifetime: Duration in [.seconds(20 * 60 + 1), .seconds(3600), .seconds(60), .seconds(1), .zero] {
            let error = expectIAPError(.invalidConfiguration) { try provider(clock: clock, lifetime: lifetime) }
            #expect(error?.message.contains("lifetime") == true)
        }
        for lifetime: Duration in [.seconds(61), .seconds(20 * 60)] {
            let provider = try provider(clock: clock, lifetime: lifetime)
            let exp = try DecodedJWS(try provider.currentToken()).int("exp")
            #expect(exp == 1_698_148_900 + lifetime.wholeSeconds)
        }
    }

    @Test("Empty ids and bad keys are rejected")
    func badInputs() throws {
        expectIAPError(.invalidConfiguration) {
            try AppStoreServerAPITokenProvider(privateKey: key, keyId: "", issuerId: "i", bundleId: "b")
        }
        expectIAPError(.invalidConfiguration) {
            try AppStoreServerAPITokenProvider(privateKey: key, keyId: "k", issuerId: "i", bundleId: "")
        }
        expectIAPError(.invalidKey) {
            try AppStoreServerAPITokenProvider(
                pemRepresentation: try Fixtures.text("p384-pkcs8.pem"),
                keyId: "k",
                issuerId: "i",
                bundleId: "b"
            )
        }
    }
}

@Suite("Promotional offer signatures, version 1")
struct PromotionalOfferV1Tests {
    let key: P256PrivateKey
    let vector: [String: Any]
    let creator: PromotionalOfferV1SignatureCreator
    let nonce = UUID(uuidString: "20FBA8A0-2B80-4A7D-A17F-85C1854727F8")

    init() throws {
        key = try P256PrivateKey(pemRepresentation: try Fixtures.text("testSigningKey.p8"))
        vector = try Fixtures.json("promotional-offer-v1.json")
        creator = PromotionalOfferV1SignatureCreator(privateKey: key, keyId: "keyId", bundleId: "bundleId")
    }

    func vectorKey() throws -> P256PublicKey {
        try P256PublicKey(pemRepresentation: try #require(vector["public_key_pem"] as? String))
    }

    @Test("The payload string equals the vector's, with appAccountToken and nonce lowercased")
    func payload() throws {
        let nonce = try #require(nonce)
        let payload = creator.payload(
            productId: "productId",
            offerId: "offerId",
            appAccountToken: "appAccountToken",
            nonce: nonce,
            timestamp: 1_698_148_900_000
        )
        #expect(payload == vector["payload"] as? String)
        #expect(Bytes.hex(Array(payload.utf8)) == vector["payload_utf8_hex"] as? String)
        #expect(payload.contains("appaccounttoken"))
        #expect(payload.contains("20fba8a0-2b80-4a7d-a17f-85c1854727f8"))
        // No appAccountToken leaves its field empty.
        let empty = creator.payload(productId: "p", offerId: "o", appAccountToken: nil, nonce: nonce, timestamp: 1)
        #expect(
            empty.components(separatedBy: "\u{2063}") == [
                "bundleId", "keyId", "p", "o", "", nonce.uuidString.lowercased(), "1",
            ]
        )
    }

    @Test("The signature is standard base64 DER that verifies over the payload")
    func signature() throws {
        let nonce = try #require(nonce)
        let signature = try creator.signature(
            productId: "productId",
            offerId: "offerId",
            appAccountToken: "appAccountToken",
            nonce: nonce,
            timestamp: 1_698_148_900_000
        )
        let der = try #require(Data(base64Encoded: signature).map(Array.init))
        #expect(der.first == 0x30)
        let payload = Array(try #require(vector["payload"] as? String).utf8)
        #expect(try vectorKey().isValidDERSignature(der, for: payload))
        #expect(!(try vectorKey().isValidDERSignature(der, for: payload + [0x30])))
    }

    @Test("The vector's example signature verifies")
    func exampleSignature() throws {
        let example = try #require(vector["signature_base64_example"] as? String)
        let der = try #require(Data(base64Encoded: example).map(Array.init))
        let payload = Array(try #require(vector["payload"] as? String).utf8)
        #expect(try vectorKey().isValidDERSignature(der, for: payload))
        #expect(key.publicKey.isValidDERSignature(der, for: payload))
    }

    @Test("Empty product or offer ids: invalidArgument")
    func emptyArguments() throws {
        let nonce = try #require(nonce)
        expectIAPError(.invalidArgument) {
            try creator.signature(productId: "", offerId: "o", appAccountToken: nil, nonce: nonce, timestamp: 1)
        }
        expectIAPError(.invalidArgument) {
            try creator.signature(productId: "p", offerId: "", appAccountToken: nil, nonce: nonce, timestamp: 1)
        }
    }
}

@Suite("Offer JWS signatures")
struct OfferJWSSignatureTests {
    let key: P256PrivateKey
    let creator: OfferJWSSignatureCreator

    init() throws {
        key = try P256PrivateKey(pemRepresentation: try Fixtures.text("testSigningKey.p8"))
        creator = OfferJWSSignatureCreator(
            privateKey: key,
            keyId: "keyId",
            issuerId: "issuerId",
            bundleId: "bundleId",
            clock: ManualClock(now: Date(timeIntervalSince1970: 1_698_148_900.9))
        )
    }

    func checkCommon(_ jws: DecodedJWS, audience: String) throws {
        #expect(jws.header["typ"] as? String == "JWT")
        #expect(jws.header["alg"] as? String == "ES256")
        #expect(jws.header["kid"] as? String == "keyId")
        #expect(jws.claims["iss"] as? String == "issuerId")
        #expect(jws.claims["bid"] as? String == "bundleId")
        #expect(jws.claims["aud"] as? String == audience)
        #expect(jws.int("iat") == 1_698_148_900)
        #expect(jws.claims["exp"] == nil)
        let nonce = try #require(jws.claims["nonce"] as? String)
        #expect(UUID(uuidString: nonce) != nil)
        #expect(nonce == nonce.lowercased())
        #expect(key.publicKey.isValidSignature(jws.signature, for: jws.signingInput))
    }

    @Test("A promotional offer signature carries the offer claims and no exp")
    func promotionalOffer() throws {
        let jws = try DecodedJWS(
            try creator.promotionalOfferSignature(
                productId: "productId",
                offerIdentifier: "offerId",
                transactionId: "transactionId"
            )
        )
        try checkCommon(jws, audience: "promotional-offer")
        #expect(jws.claims["productId"] as? String == "productId")
        #expect(jws.claims["offerIdentifier"] as? String == "offerId")
        #expect(jws.claims["transactionId"] as? String == "transactionId")

        let withoutTransaction = try DecodedJWS(
            try creator.promotionalOfferSignature(productId: "productId", offerIdentifier: "offerId")
        )
        try checkCommon(withoutTransaction, audience: "promotional-offer")
        #expect(withoutTransaction.claims.keys.contains("transactionId") == false)
        #expect(withoutTransaction.claims["nonce"] as? String != jws.claims["nonce"] as? String)
    }

    @Test("An introductory offer eligibility signature carries its claims", arguments: [true, false])
    func introductoryOffer(allow: Bool) throws {
        let jws = try DecodedJWS(
            try creator.introductoryOfferEligibilitySignature(
                productId: "productId",
                allowIntroductoryOffer: allow,
                transactionId: "transactionId"
            )
        )
        try checkCommon(jws, audience: "introductory-offer-eligibility")
        #expect(jws.claims["productId"] as? String == "productId")
        #expect(jws.claims["transactionId"] as? String == "transactionId")
        #expect((jws.claims["allowIntroductoryOffer"] as? NSNumber)?.boolValue == allow)
    }

    @Test("Empty arguments: invalidArgument")
    func emptyArguments() throws {
        expectIAPError(.invalidArgument) { try creator.promotionalOfferSignature(productId: "", offerIdentifier: "o") }
        expectIAPError(.invalidArgument) { try creator.promotionalOfferSignature(productId: "p", offerIdentifier: "") }
        expectIAPError(.invalidArgument) {
            try creator.introductoryOfferEligibilitySignature(
                productId: "",
                allowIntroductoryOffer: true,
                transactionId: "t"
            )
        }
        expectIAPError(.invalidArgument) {
            try creator.introductoryOfferEligibilitySignature(
                productId: "p",
                allowIntroductoryOffer: true,
                transactionId: ""
            )
        }
    }
}
