import Foundation
import IAPCore
import IAPCrypto
import IAPTesting
import Testing

enum RealSamples {
    static let sandbox = "sandbox-test-notification-2025-09-05.jws"
    static let production = "production-test-notification-2024-10-17.jws"
}

/// Two genuine Apple-signed TEST notifications, verified against the bundled Apple Root CA - G3. Their leaf expired
/// on 2025-10-11, so they verify at their `signedDate` (Apple's offline rule) and not at a later "now".
@Suite("Real Apple notifications")
struct RealNotificationTests {
    static let sandbox = RealSamples.sandbox
    static let production = RealSamples.production
    static let productionAppAppleId: Int64 = 6_450_284_872

    /// Dec 2026, after the leaf's expiry. Only read where the validation instant is "now".
    let lateClock = ManualClock(now: Instants.dec2026)

    func verifier(
        bundleId: String,
        environment: AppStoreEnvironment,
        appAppleId: Int64? = nil,
        validationTime: AppStoreSignedDataVerifier.ValidationTime = .signedDate,
        strictX509: Bool = false
    ) throws -> AppStoreSignedDataVerifier {
        try AppStoreSignedDataVerifier(
            configuration: .init(
                bundleId: bundleId,
                environment: environment,
                appAppleId: appAppleId,
                skippedChecks: .skipping(bundleId: bundleId, environment: environment, appAppleId: appAppleId),
                validationTime: validationTime,
                strictX509: strictX509,
                clock: lateClock
            )
        )
    }

    @Test("The Sandbox notification verifies at its signedDate", arguments: [false, true])
    func sandbox(strict: Bool) throws {
        let verifier = try verifier(
            bundleId: "com.loki-project.loki-messenger",
            environment: .sandbox,
            strictX509: strict
        )
        let verified = try verifier.notification(try Fixtures.token(Self.sandbox))
        #expect(verified.payload.notificationType == .test)
        #expect(verified.payload.notificationUUID == "592751ef-c1b8-47fc-929e-d62dee66df4c")
        #expect(verified.payload.signedDate == Date(millisecondsSince1970: 1_757_035_472_686))
        #expect(verified.payload.data?.bundleId == "com.loki-project.loki-messenger")
        #expect(verified.payload.data?.environment == .sandbox)
        #expect(verifier.cachedChainCount == 1)
    }

    @Test("The Production notification verifies at its signedDate with its App Apple ID", arguments: [false, true])
    func production(strict: Bool) throws {
        let verifier = try verifier(
            bundleId: "com.nineton.taller",
            environment: .production,
            appAppleId: Self.productionAppAppleId,
            strictX509: strict
        )
        let verified = try verifier.notification(try Fixtures.token(Self.production))
        #expect(verified.payload.notificationUUID == "2e2a6ce0-ec9f-4037-b1bf-618af85527bd")
        #expect(verified.payload.data?.appAppleId == Self.productionAppAppleId)
        #expect(verified.payload.data?.environment == .production)
        #expect(verified.payload.signedDate == Date(millisecondsSince1970: 1_729_136_651_128))
    }

    @Test("The Production notification with another App Apple ID: appAppleIdMismatch")
    func productionWrongAppAppleId() throws {
        let verifier = try verifier(bundleId: "com.nineton.taller", environment: .production, appAppleId: 1)
        let error = expectIAPError(.appAppleIdMismatch) {
            try verifier.notification(try Fixtures.token(Self.production))
        }
        #expect(error?.message.contains("6450284872") == true)
    }

    @Test("The real notifications are wrong for another app or environment")
    func wrongIdentity() throws {
        expectIAPError(.bundleIdMismatch) {
            try verifier(bundleId: "com.example.app", environment: .sandbox).notification(Fixtures.token(Self.sandbox))
        }
        expectIAPError(.environmentMismatch) {
            try verifier(bundleId: "com.loki-project.loki-messenger", environment: .production)
                .notification(Fixtures.token(Self.sandbox))
        }
    }

    @Test(
        "Validated 'now' (Dec 2026), after the leaf expired: certificateExpired",
        arguments: [RealSamples.sandbox, RealSamples.production]
    )
    func expiredNow(name: String) throws {
        let verifier = try AppStoreSignedDataVerifier(
            configuration: .init(
                bundleId: nil,
                environment: nil,
                skippedChecks: .all,
                validationTime: .now,
                clock: lateClock
            )
        )
        let error = expectIAPError(.certificateExpired) { try verifier.notification(try Fixtures.token(name)) }
        #expect(error?.message.contains("expired") == true)
        #expect(verifier.cachedChainCount == 0)
    }

    @Test("A fixed validation instant inside the leaf's validity verifies; one after it does not")
    func fixedInstant() throws {
        let inside = try AppStoreSignedDataVerifier(
            configuration: .init(
                bundleId: nil,
                environment: nil,
                skippedChecks: .all,
                validationTime: .fixed(Instants.jan2025)
            )
        )
        #expect(throws: Never.self) { try inside.notification(Fixtures.token(Self.sandbox)) }
        let after = try AppStoreSignedDataVerifier(
            configuration: .init(
                bundleId: nil,
                environment: nil,
                skippedChecks: .all,
                validationTime: .fixed(Instants.dec2026)
            )
        )
        expectIAPError(.certificateExpired) { try after.notification(try Fixtures.token(Self.sandbox)) }
    }

    @Test("A real notification is rejected when only another root is trusted: untrustedRoot")
    func otherRoot() throws {
        let verifier = try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [try Fixtures.certificate("testCA.der")],
                bundleId: nil,
                environment: nil,
                skippedChecks: .all
            )
        )
        expectIAPError(.untrustedRoot) { try verifier.notification(try Fixtures.token(Self.production)) }
    }

    @Test("One flipped payload character in a real notification: signatureInvalid")
    func tamperedReal() throws {
        let token = try Fixtures.token(Self.sandbox)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var payload = try B64.jsonObject(Substring(parts[1]))
        payload["signedDate"] = 1_757_035_472_687
        let forged = [parts[0], try B64.url(json: payload), parts[2]].joined(separator: ".")
        let verifier = try AppStoreSignedDataVerifier(
            configuration: .init(bundleId: nil, environment: nil, skippedChecks: .all)
        )
        expectIAPError(.signatureInvalid) { try verifier.notification(forged) }
    }
}

/// Data signed by StoreKit Testing in Xcode: one self-signed certificate, environment `Xcode`.
@Suite("Xcode-signed data")
struct XcodeSignedDataTests {
    static let bundleId = "com.example.naturelab.backyardbirds.example"

    func xcodeVerifier() throws -> AppStoreSignedDataVerifier {
        try AppStoreSignedDataVerifier(
            configuration: .init(bundleId: Self.bundleId, environment: .xcode, acceptsXcodeSignedData: true)
        )
    }

    @Test(
        "A default verifier rejects Xcode data: unsignedEnvironmentRejected",
        arguments: [
            "xcode-signed-transaction.jws", "xcode-signed-renewal-info.jws", "xcode-signed-app-transaction.jws",
        ]
    )
    func rejectedByDefault(name: String) throws {
        let token = try Fixtures.token(name)
        for verifier in [
            try AppStoreSignedDataVerifier(configuration: .init(bundleId: nil, environment: nil, skippedChecks: .all)),
            try AppStoreSignedDataVerifier(
                configuration: .init(bundleId: Self.bundleId, environment: .production, appAppleId: 1_234_567_890)
            ),
        ] {
            let error = expectIAPError(.unsignedEnvironmentRejected) { try verifier.verify(token) }
            #expect(error?.message.contains("Xcode") == true)
        }
    }

    @Test("Expecting the Xcode or LocalTesting environment without opting in: invalidConfiguration")
    func configurationRequiresOptIn() throws {
        for environment in [AppStoreEnvironment.xcode, .localTesting] {
            let error = expectIAPError(.invalidConfiguration) {
                try AppStoreSignedDataVerifier(
                    configuration: .init(bundleId: "com.example.app", environment: environment)
                )
            }
            #expect(error?.message.contains("acceptsXcodeSignedData") == true)
        }
        expectIAPError(.invalidConfiguration) {
            try AppStoreSignedDataVerifier(
                configuration: .init(bundleId: nil, environment: nil, skippedChecks: .all, cacheCapacity: -1)
            )
        }
    }

    @Test("With the opt-in, the Xcode transaction decodes, fractional dates truncated to whole milliseconds")
    func transaction() throws {
        let transaction = try xcodeVerifier().transaction(try Fixtures.token("xcode-signed-transaction.jws"))
        #expect(transaction.environment == .xcode)
        #expect(transaction.bundleId == Self.bundleId)
        #expect(transaction.transactionId == "0")
        #expect(transaction.originalTransactionId == "0")
        #expect(transaction.productId == "pass.premium")
        #expect(transaction.subscriptionGroupIdentifier == "6F3A93AB")
        #expect(transaction.purchaseDate?.millisecondsSince1970 == 1_697_679_936_049)
        #expect(transaction.purchaseDate == Date(millisecondsSince1970: 1_697_679_936_049))
        #expect(transaction.expiresDate == Date(millisecondsSince1970: 1_700_358_336_049))
        #expect(transaction.offerType == .introductoryOffer)
        #expect(transaction.storefront == "USA")
        #expect(transaction.storefrontId == "143441")
        #expect(transaction.isUpgraded == false)
    }

    @Test("With the opt-in, the Xcode renewal info and app transaction decode")
    func renewalAndAppTransaction() throws {
        let verifier = try xcodeVerifier()
        let renewal = try verifier.renewalInfo(try Fixtures.token("xcode-signed-renewal-info.jws"))
        #expect(renewal.environment == .xcode)
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.renewalDate == Date(millisecondsSince1970: 1_700_358_336_049))
        #expect(renewal.autoRenewProductId == "pass.premium")

        let app = try verifier.appTransaction(try Fixtures.token("xcode-signed-app-transaction.jws"))
        #expect(app.receiptType == .xcode)
        #expect(app.bundleId == Self.bundleId)
        #expect(app.appAppleId == nil)
        #expect(app.applicationVersion == "1")
        #expect(app.deviceVerificationNonce == "48c8b92d-ce0d-4229-bedf-e61b4f9cfc92")
        #expect(app.originalPurchaseDate == Date(millisecondsSince1970: -62_135_769_600_000))
        #expect(app.receiptCreationDate?.millisecondsSince1970 == 1_697_680_122_257)
        // Kind detection routes the same tokens.
        #expect(try verifier.verify(Fixtures.token("xcode-signed-app-transaction.jws")).kind == .appTransaction)
        #expect(try verifier.verify(Fixtures.token("xcode-signed-transaction.jws")).kind == .transaction)
        #expect(try verifier.verify(Fixtures.token("xcode-signed-renewal-info.jws")).kind == .renewal)
        #expect(verifier.cachedChainCount == 0)
    }

    @Test("A tampered Xcode token is rejected: its signature is checked against its own certificate")
    func tampered() throws {
        let token = try Fixtures.token("xcode-signed-transaction.jws")
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var payload = try B64.jsonObject(Substring(parts[1]))
        payload["productId"] = "pass.lifetime"
        let forged = [parts[0], try B64.url(json: payload), parts[2]].joined(separator: ".")
        expectIAPError(.signatureInvalid) { try xcodeVerifier().transaction(forged) }
    }

    @Test("Xcode data signed by anyone else's single certificate passes only with the opt-in and the Xcode environment")
    func selfSignedForgery() throws {
        // A single-certificate chain with a Sandbox payload is never treated as Xcode data.
        let minter = try Minter()
        let header = minter.header(["x5c": [B64.standard(minter.pki.leaf.derBytes)], "kid": "Apple_Xcode_Key"])
        let sandbox = try minter.sign(header: header, payload: Payloads.transaction())
        let accepting = try AppStoreSignedDataVerifier(
            configuration: .init(bundleId: nil, environment: nil, skippedChecks: .all, acceptsXcodeSignedData: true)
        )
        expectIAPError(.unsignedEnvironmentRejected) { try accepting.transaction(sandbox) }
        // Without the kid and with a non-Xcode payload it is simply a chain of the wrong length.
        let plain = try minter.sign(
            header: minter.header(["x5c": [B64.standard(minter.pki.leaf.derBytes)]]),
            payload: Payloads.transaction()
        )
        expectIAPError(.malformedSignedData) { try accepting.transaction(plain) }
        // An Xcode verifier still refuses Xcode data for another bundle.
        let xcode = try minter.sign(
            header: header,
            payload: Payloads.transaction(bundleId: "com.other", environment: "Xcode")
        )
        expectIAPError(.bundleIdMismatch) { try xcodeVerifier().transaction(xcode) }
    }
}
