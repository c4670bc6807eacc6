import Foundation
import IAPCore
import IAPCrypto
import IAPTesting
import Testing

extension Fixtures {
    /// A compact JWS stored in `Fixtures/`, without surrounding whitespace.
    static func token(_ name: String) throws -> String {
        try text(name).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Apple's App Store Server Library fixtures (`mock_signed_data/*`, root `testCA.der`), with the outcomes Apple's
/// own tests expect, mapped to swift-iap's error codes.
@Suite("Apple's signed-data fixtures")
struct AppleFixtureTests {
    /// 2025-01-01: inside the test chain's validity (2023-01-05 ... 2033-01-01). Read only for fixtures that carry no
    /// `signedDate`, so these tests do not start failing when the test certificates expire.
    let clock = ManualClock(now: Instants.jan2025)

    func verifier(
        bundleId: String? = "com.example",
        environment: AppStoreEnvironment? = .sandbox,
        appAppleId: Int64? = nil,
        strictX509: Bool = false
    ) throws -> AppStoreSignedDataVerifier {
        try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [try Fixtures.certificate("testCA.der")],
                bundleId: bundleId,
                environment: environment,
                appAppleId: appAppleId,
                skippedChecks: .skipping(bundleId: bundleId, environment: environment, appAppleId: appAppleId),
                strictX509: strictX509,
                clock: clock
            )
        )
    }

    @Test("testNotification verifies for Sandbox and com.example and decodes its fields")
    func testNotification() throws {
        let verified = try verifier().notification(try Fixtures.token("mock-testNotification.jws"))
        let payload = verified.payload
        #expect(payload.notificationType == .test)
        #expect(payload.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(payload.signedDate == Date(millisecondsSince1970: 1_681_314_324_000))
        #expect(payload.data?.bundleId == "com.example")
        #expect(payload.data?.environment == .sandbox)
        #expect(payload.data?.appAppleId == 1234)
        #expect(verified.transaction == nil && verified.renewalInfo == nil && verified.appTransaction == nil)
        // The matching App Apple ID is accepted too.
        #expect(throws: Never.self) {
            try verifier(appAppleId: 1234).notification(Fixtures.token("mock-testNotification.jws"))
        }
    }

    @Test("testNotification is rejected by a Production verifier: environmentMismatch")
    func testNotificationProduction() throws {
        let error = expectIAPError(.environmentMismatch) {
            try verifier(environment: .production).notification(try Fixtures.token("mock-testNotification.jws"))
        }
        #expect(error?.message.contains("Sandbox") == true)
        #expect(error?.message.contains("Production") == true)
    }

    /// Apple's library reports INVALID_APP_IDENTIFIER here, because it checks the App Apple ID before the
    /// environment. swift-iap checks the environment first (see the verifier's documented order), so the same
    /// configuration is rejected as `environmentMismatch`: still a rejection, with a different code.
    @Test("testNotification with Production and App Apple ID 1235 is rejected; the environment is checked first")
    func testNotificationProductionWrongAppAppleId() throws {
        expectIAPError(.environmentMismatch) {
            try verifier(environment: .production, appAppleId: 1235)
                .notification(try Fixtures.token("mock-testNotification.jws"))
        }
        // Where the environment matches, the App Apple ID the notification carries is compared (also in the
        // sandbox: stricter than Apple, which compares it only in Production).
        let error = expectIAPError(.appAppleIdMismatch) {
            try verifier(appAppleId: 1235).notification(try Fixtures.token("mock-testNotification.jws"))
        }
        #expect(error?.message.contains("1234") == true)
        #expect(error?.message.contains("1235") == true)
    }

    @Test("transactionInfo verifies for Sandbox and com.example")
    func transactionInfo() throws {
        let transaction = try verifier().transaction(try Fixtures.token("mock-transactionInfo.jws"))
        #expect(transaction.bundleId == "com.example")
        #expect(transaction.environment == .sandbox)
        #expect(transaction.signedDate == Date(millisecondsSince1970: 1_672_956_154_000))
    }

    @Test("transactionInfo is rejected for another bundle id: bundleIdMismatch")
    func transactionInfoWrongBundle() throws {
        let error = expectIAPError(.bundleIdMismatch) {
            try verifier(bundleId: "com.example.x").transaction(try Fixtures.token("mock-transactionInfo.jws"))
        }
        #expect(error?.message.contains("com.example.x") == true)
    }

    @Test("renewalInfo verifies for Sandbox")
    func renewalInfo() throws {
        let renewal = try verifier().renewalInfo(try Fixtures.token("mock-renewalInfo.jws"))
        #expect(renewal.environment == .sandbox)
        #expect(renewal.signedDate == Date(millisecondsSince1970: 1_672_956_154_000))
        expectIAPError(.environmentMismatch) {
            try verifier(environment: .production).renewalInfo(try Fixtures.token("mock-renewalInfo.jws"))
        }
    }

    @Test("wrongBundleId is rejected: bundleIdMismatch")
    func wrongBundleId() throws {
        let error = expectIAPError(.bundleIdMismatch) {
            try verifier().notification(try Fixtures.token("mock-wrongBundleId.jws"))
        }
        #expect(error?.message.contains("com.example.wrong") == true)
    }

    @Test("missingX5CHeaderClaim is rejected: malformedSignedData")
    func missingX5C() throws {
        let error = expectIAPError(.malformedSignedData) {
            try verifier().notification(try Fixtures.token("mock-missingX5CHeaderClaim.jws"))
        }
        #expect(error?.message.contains("x5c") == true)
    }

    @Test("'a.b.c.d' and 'a.b.c' are rejected: malformedSignedData", arguments: ["a.b.c.d", "a.b.c"])
    func malformedJWT(token: String) throws {
        let verifier = try verifier()
        expectIAPError(.malformedSignedData) { try verifier.notification(token) }
        expectIAPError(.malformedSignedData) { try verifier.transaction(token) }
    }

    /// testNotification and transactionInfo carry a different root in x5c[2] (a v1 certificate with the same name
    /// and key as testCA.der): they verify only because x5c[2] is never used.
    @Test("The x5c root is ignored: fixtures whose x5c[2] differs from testCA.der still verify")
    func x5cRootIgnored() throws {
        let root = try Fixtures.bytes("testCA.der")
        for name in ["mock-testNotification.jws", "mock-transactionInfo.jws"] {
            let token = try Fixtures.token(name)
            let header = try B64.jsonObject(try #require(token.split(separator: ".").first))
            let x5c = try #require(header["x5c"] as? [String])
            #expect(x5c.count == 3)
            #expect(Data(base64Encoded: x5c[2]).map(Array.init) != root)
        }
        #expect(throws: Never.self) { try verifier().transaction(Fixtures.token("mock-transactionInfo.jws")) }
    }

    @Test("Apple's test chain fails strict X.509 checks: certificateChainInvalid")
    func strictRejectsTestChain() throws {
        expectIAPError(.certificateChainInvalid) {
            try verifier(strictX509: true).transaction(try Fixtures.token("mock-transactionInfo.jws"))
        }
    }

    @Test("A fixture is rejected against Apple's real root: untrustedRoot")
    func fixtureAgainstRealRoot() throws {
        let verifier = try AppStoreSignedDataVerifier(
            configuration: .init(bundleId: nil, environment: nil, skippedChecks: .all, clock: clock)
        )
        expectIAPError(.untrustedRoot) { try verifier.transaction(try Fixtures.token("mock-transactionInfo.jws")) }
    }
}
