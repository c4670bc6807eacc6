import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPServerAPI
import IAPTesting
import Testing

/// The client with the real ES256 token provider, as Apple's client tests check the headers.
@Suite("AppStoreServerAPIClient with AppStoreServerAPITokenProvider")
struct AppStoreServerAPITokenTests {
    /// Apple's `testSigningKey.p8` from the App Store Server Library test resources (MIT, Apple Inc.).
    static let testSigningKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgSpP55ELdXswj9JRZ
        APRwtTfS4CNRqpKIs+28rNHiPAqhRANCAASs8nLES7b+goKslppNVOurf0MonZdw
        3pb6TxS8Z/5j+UNY1sWK1ChxpuwNS9I3R50cfdQo/lA9PPhw6XIg8ytd
        -----END PRIVATE KEY-----
        """

    static func segment(_ token: String, _ index: Int) throws -> [String: Any] {
        let bytes = try #require(Base64.decodeURL(token.split(separator: ".")[index]))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func headersCarryASignedBearerToken() async throws {
        let wall = ManualClock(now: Date(timeIntervalSince1970: 1_700_000_000))
        let tokens = try AppStoreServerAPITokenProvider(
            pemRepresentation: Self.testSigningKey,
            keyId: "keyId",
            issuerId: "issuerId",
            bundleId: "com.example",
            clock: wall
        )
        let transport = ScriptedTransport()
        transport.expect(
            method: "GET",
            path: "/inApps/v1/transactions/1234",
            headers: [
                "Accept": "application/json", "User-Agent": "swift-iap/\(AppStoreServerAPIClient.libraryVersion)",
            ]
        ).respond(status: 401)
        transport.expect(method: "GET", path: "/inApps/v1/transactions/1234")
            .respond(status: 200, body: #"{"signedTransactionInfo":"x"}"#)
        let client = try AppStoreServerAPIClient(
            environment: .localTesting,
            transport: transport,
            tokenProvider: tokens,
            clock: ImmediateClock(),
            wallClock: wall
        )
        let response = try await client.transactionInfo(transactionId: "1234")
        #expect(response.signedTransactionInfo == "x")
        try transport.verify()

        let authorizations = transport.requests.compactMap { $0.headers["Authorization"] }
        #expect(authorizations.count == 2)
        #expect(authorizations[0] != authorizations[1], "a 401 must lead to a freshly signed token")
        for authorization in authorizations {
            #expect(authorization.hasPrefix("Bearer "))
            let token = String(authorization.dropFirst("Bearer ".count))
            let header = try Self.segment(token, 0)
            #expect(header["alg"] as? String == "ES256")
            #expect(header["kid"] as? String == "keyId")
            #expect(header["typ"] as? String == "JWT")
            let claims = try Self.segment(token, 1)
            #expect(claims["iss"] as? String == "issuerId")
            #expect(claims["aud"] as? String == "appstoreconnect-v1")
            #expect(claims["bid"] as? String == "com.example")
            #expect((claims["iat"] as? NSNumber)?.int64Value == 1_700_000_000)
            #expect((claims["exp"] as? NSNumber)?.int64Value == 1_700_000_300)
        }
    }
}
