import Foundation
import IAPCore
import IAPCrypto
import IAPTesting
import Testing

@Suite("Notifications and their nested signed data")
struct NotificationVerificationTests {
    let minter: Minter

    init() throws {
        minter = try Minter()
    }

    @Test("Nested signedTransactionInfo and signedRenewalInfo are verified and decoded")
    func nestedVerified() throws {
        let data = Payloads.notificationData(
            signedTransactionInfo: try minter.sign(Payloads.transaction()),
            signedRenewalInfo: try minter.sign(Payloads.renewal())
        )
        let token = try minter.sign(Payloads.notification(data: data))
        let verified = try minter.verifier(appAppleId: Minted.appAppleId).notification(token)
        #expect(verified.payload.notificationType == .didRenew)
        #expect(verified.payload.data?.bundleId == Minted.bundleId)
        #expect(verified.transaction?.transactionId == "2000000123456789")
        #expect(verified.transaction?.bundleId == Minted.bundleId)
        #expect(verified.renewalInfo?.autoRenewStatus == .on)
        #expect(verified.renewalInfo?.originalTransactionId == "2000000000000001")
        #expect(verified.appTransaction == nil)
    }

    @Test("A nested token from a foreign PKI fails with the nested error, naming the field")
    func nestedForeign() throws {
        let attacker = Minter(try Minted.pki())
        let transactionData = Payloads.notificationData(
            signedTransactionInfo: try attacker.sign(Payloads.transaction())
        )
        let error = expectIAPError(.untrustedRoot) {
            try minter.verifier().notification(try minter.sign(Payloads.notification(data: transactionData)))
        }
        #expect(error?.message.hasPrefix("signedTransactionInfo: ") == true)

        let renewalData = Payloads.notificationData(signedRenewalInfo: try attacker.sign(Payloads.renewal()))
        let renewalError = expectIAPError(.untrustedRoot) {
            try minter.verifier().notification(try minter.sign(Payloads.notification(data: renewalData)))
        }
        #expect(renewalError?.message.hasPrefix("signedRenewalInfo: ") == true)
    }

    @Test("A nested token that is tampered or malformed fails with its own code")
    func nestedTampered() throws {
        let signed = try minter.sign(Payloads.transaction())
        let segments = signed.split(separator: ".").map(String.init)
        var payload = try B64.jsonObject(Substring(segments[1]))
        payload["productId"] = "com.example.app.lifetime"
        let forged = [segments[0], try B64.url(json: payload), segments[2]].joined(separator: ".")
        let data = Payloads.notificationData(signedTransactionInfo: forged)
        let error = expectIAPError(.signatureInvalid) {
            try minter.verifier().notification(try minter.sign(Payloads.notification(data: data)))
        }
        #expect(error?.message.contains("signedTransactionInfo") == true)

        let garbage = Payloads.notificationData(signedRenewalInfo: "not.a.jws")
        expectIAPError(.malformedSignedData) {
            try minter.verifier().notification(try minter.sign(Payloads.notification(data: garbage)))
        }
    }

    @Test("A nested transaction from another environment or app than the notification is rejected")
    func nestedInconsistent() throws {
        let production = Payloads.notificationData(
            signedTransactionInfo: try minter.sign(Payloads.transaction(environment: "Production"))
        )
        let token = try minter.sign(Payloads.notification(data: production))
        // With no expectations configured, the consistency check itself catches it.
        let open = try minter.verifier(bundleId: nil, environment: nil)
        let error = expectIAPError(.environmentMismatch) { try open.notification(token) }
        #expect(error?.message.contains("signedTransactionInfo") == true)
        expectIAPError(.environmentMismatch) { try minter.verifier().notification(token) }

        let renewal = Payloads.notificationData(
            signedRenewalInfo: try minter.sign(Payloads.renewal(environment: "Production"))
        )
        expectIAPError(.environmentMismatch) {
            try open.notification(try minter.sign(Payloads.notification(data: renewal)))
        }

        let otherApp = Payloads.notificationData(
            signedTransactionInfo: try minter.sign(Payloads.transaction(bundleId: "com.other.app"))
        )
        let bundleError = expectIAPError(.bundleIdMismatch) {
            try open.notification(try minter.sign(Payloads.notification(data: otherApp)))
        }
        #expect(bundleError?.message.contains("com.other.app") == true)
    }

    @Test("The notification's identity comes from summary when there is no data")
    func summaryIdentity() throws {
        let summary: [String: Any] = [
            "bundleId": Minted.bundleId, "environment": "Sandbox", "appAppleId": Minted.appAppleId,
            "productId": "com.example.app.monthly", "requestIdentifier": "req-1", "succeededCount": 3,
        ]
        let token = try minter.sign(Payloads.notification(type: "RENEWAL_EXTENDED", summary: summary))
        let verified = try minter.verifier(appAppleId: Minted.appAppleId).notification(token)
        #expect(verified.payload.summary?.succeededCount == 3)
        expectIAPError(.environmentMismatch) { try minter.verifier(environment: .production).notification(token) }
        expectIAPError(.bundleIdMismatch) { try minter.verifier(bundleId: "com.other").notification(token) }
        expectIAPError(.appAppleIdMismatch) { try minter.verifier(appAppleId: 7).notification(token) }
    }

    @Test("externalPurchaseToken: a SANDBOX id means Sandbox, any other id Production")
    func externalPurchaseTokenIdentity() throws {
        let sandbox: [String: Any] = [
            "externalPurchaseId": "SANDBOX_b2158121-7af9-49d4-9561-1f588205523e", "bundleId": Minted.bundleId,
            "appAppleId": Minted.appAppleId, "tokenCreationDate": 1_698_148_900_000,
        ]
        let sandboxToken = try minter.sign(
            Payloads.notification(type: "EXTERNAL_PURCHASE_TOKEN", externalPurchaseToken: sandbox)
        )
        let verified = try minter.verifier().notification(sandboxToken)
        #expect(verified.payload.externalPurchaseToken?.derivedEnvironment == .sandbox)
        expectIAPError(.environmentMismatch) {
            try minter.verifier(environment: .production).notification(sandboxToken)
        }

        var production = sandbox
        production["externalPurchaseId"] = "b2158121-7af9-49d4-9561-1f588205523e"
        let productionToken = try minter.sign(
            Payloads.notification(type: "EXTERNAL_PURCHASE_TOKEN", externalPurchaseToken: production)
        )
        expectIAPError(.environmentMismatch) { try minter.verifier().notification(productionToken) }
        #expect(throws: Never.self) {
            try minter.verifier(environment: .production, appAppleId: Minted.appAppleId).notification(productionToken)
        }
    }

    @Test("appData: identity and the nested signedAppTransactionInfo are verified")
    func appDataIdentity() throws {
        let appData: [String: Any] = [
            "bundleId": Minted.bundleId, "environment": "Sandbox", "appAppleId": Minted.appAppleId,
            "signedAppTransactionInfo": try minter.sign(Payloads.appTransaction(appAppleId: Minted.appAppleId)),
        ]
        let token = try minter.sign(Payloads.notification(type: "RESCIND_CONSENT", appData: appData))
        let verified = try minter.verifier().notification(token)
        #expect(verified.appTransaction?.applicationVersion == "42")
        #expect(verified.appTransaction?.receiptType == .sandbox)
        expectIAPError(.bundleIdMismatch) { try minter.verifier(bundleId: "com.other").notification(token) }

        var foreign = appData
        foreign["signedAppTransactionInfo"] = try Minter(Minted.pki()).sign(Payloads.appTransaction())
        let error = expectIAPError(.untrustedRoot) {
            try minter.verifier().notification(
                try minter.sign(Payloads.notification(type: "RESCIND_CONSENT", appData: foreign))
            )
        }
        #expect(error?.message.contains("signedAppTransactionInfo") == true)
    }

    @Test("A notification that names no app, with a bundle id configured: bundleIdMismatch")
    func noIdentity() throws {
        let token = try minter.sign(Payloads.notification(type: "TEST"))
        let error = expectIAPError(.bundleIdMismatch) { try minter.verifier().notification(token) }
        #expect(error?.message.contains("names no app") == true)
        expectIAPError(.environmentMismatch) { try minter.verifier(bundleId: nil).notification(token) }
        #expect(throws: Never.self) { try minter.verifier(bundleId: nil, environment: nil).notification(token) }
    }

    @Test("A Production notification without an App Apple ID, when one is expected: appAppleIdMismatch")
    func productionNeedsAppAppleId() throws {
        let data = Payloads.notificationData(environment: "Production", appAppleId: nil)
        let token = try minter.sign(Payloads.notification(data: data))
        expectIAPError(.appAppleIdMismatch) {
            try minter.verifier(environment: .production, appAppleId: Minted.appAppleId).notification(token)
        }
    }

    @Test("The async Verifier entry points give the same results")
    func asyncEntryPoints() async throws {
        let verifier: any Verifier = try minter.verifier()
        let transaction = try await verifier.verifyTransaction(try minter.sign(Payloads.transaction()))
        #expect(transaction.bundleId == Minted.bundleId)
        let renewal = try await verifier.verifyRenewalInfo(try minter.sign(Payloads.renewal()))
        #expect(renewal.autoRenewStatus == .on)
        let app = try await verifier.verifyAppTransaction(try minter.sign(Payloads.appTransaction()))
        #expect(app.applicationVersion == "42")
        let notification = try await verifier.verifyNotification(
            try minter.sign(Payloads.notification(data: Payloads.notificationData()))
        )
        #expect(notification.payload.data?.appAppleId == Minted.appAppleId)
        await #expect(throws: IAPError(.bundleIdMismatch)) {
            try await verifier.verifyTransaction(try minter.sign(Payloads.transaction(bundleId: "com.other")))
        }
    }
}

@Suite("The verified-chain cache")
struct VerifiedChainCacheTests {
    @Test("A second token from a cached chain verifies; a tampered one is still rejected")
    func reuse() throws {
        let minter = try Minter()
        let verifier = try minter.verifier()
        #expect(verifier.cachedChainCount == 0)
        _ = try verifier.transaction(try minter.sign(Payloads.transaction()))
        #expect(verifier.cachedChainCount == 1)
        let second = try verifier.transaction(try minter.sign(Payloads.transaction(transactionId: "2000000999")))
        #expect(second.transactionId == "2000000999")
        #expect(verifier.cachedChainCount == 1)

        // The cache never skips the signature, the payload checks or the identity checks.
        let segments = try minter.sign(Payloads.transaction()).split(separator: ".").map(String.init)
        var payload = try B64.jsonObject(Substring(segments[1]))
        payload["transactionId"] = "2000000666"
        let forged = [segments[0], try B64.url(json: payload), segments[2]].joined(separator: ".")
        expectIAPError(.signatureInvalid) { try verifier.transaction(forged) }
        let foreignKey = try minter.sign(
            header: minter.header(),
            payload: Payloads.transaction(),
            key: P256PrivateKey()
        )
        expectIAPError(.signatureInvalid) { try verifier.transaction(foreignKey) }
        expectIAPError(.bundleIdMismatch) {
            try verifier.transaction(try minter.sign(Payloads.transaction(bundleId: "com.other")))
        }
        // A header that differs only in unknown fields reaches the chain cache, not the header cache.
        let varied = try minter.sign(header: minter.header(["kid": "v2"]), payload: Payloads.transaction())
        #expect(throws: Never.self) { try verifier.transaction(varied) }
        #expect(verifier.cachedChainCount == 1)
    }

    @Test("A token signed outside the cached chain's validity window is rejected: certificateExpired")
    func outsideWindow() throws {
        let leafExpiry = Date(millisecondsSince1970: Minted.signedDateMs + 30 * 86_400_000)
        let minter = Minter(try Minted.pki { $0.leafNotAfter = leafExpiry })
        let verifier = try minter.verifier()
        _ = try verifier.transaction(try minter.sign(Payloads.transaction()))
        #expect(verifier.cachedChainCount == 1)
        let lateMs = Minted.signedDateMs + 60 * 86_400_000
        let late = try minter.sign(Payloads.transaction(signedDateMs: lateMs))
        expectIAPError(.certificateExpired) { try verifier.transaction(late) }
        // Same with a header the header index has not seen.
        let lateVaried = try minter.sign(
            header: minter.header(["typ": "JWT"]),
            payload: Payloads.transaction(signedDateMs: lateMs)
        )
        expectIAPError(.certificateExpired) { try verifier.transaction(lateVaried) }
        let early = try minter.sign(Payloads.transaction(signedDateMs: Minted.notBefore.millisecondsSince1970 - 1000))
        expectIAPError(.certificateExpired) { try verifier.transaction(early) }
        // The cached chain still serves tokens inside the window.
        #expect(throws: Never.self) { try verifier.transaction(minter.sign(Payloads.transaction())) }
    }

    @Test("cacheCapacity 0 caches nothing and still verifies")
    func disabled() throws {
        let minter = try Minter()
        let verifier = try minter.verifier(cacheCapacity: 0)
        for id in ["1", "2", "3"] {
            #expect(
                try verifier.transaction(try minter.sign(Payloads.transaction(transactionId: id))).transactionId == id
            )
            #expect(verifier.cachedChainCount == 0)
        }
        expectIAPError(.signatureInvalid) {
            try verifier.transaction(
                try minter.sign(header: minter.header(), payload: Payloads.transaction(), key: P256PrivateKey())
            )
        }
    }

    @Test("The cache holds at most cacheCapacity chains")
    func capacity() throws {
        let minters = try (0..<3).map { _ in try Minter() }
        let verifier = try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: minters.map(\.pki.root),
                bundleId: Minted.bundleId,
                environment: .sandbox,
                cacheCapacity: 2
            )
        )
        for round in 0..<2 {
            for minter in minters {
                _ = try verifier.transaction(try minter.sign(Payloads.transaction()))
                #expect(verifier.cachedChainCount <= 2, "round \(round)")
            }
        }
        #expect(verifier.cachedChainCount == 2)
    }

    @Test("16 concurrent verifications all succeed and share one cached chain")
    func concurrent() async throws {
        let minter = try Minter()
        let verifier = try minter.verifier()
        let tokens = try (0..<16).map { try minter.sign(Payloads.transaction(transactionId: "\(1000 + $0)")) }
        let ids = try await withThrowingTaskGroup(of: String?.self) { group in
            for token in tokens {
                group.addTask { try verifier.transaction(token).transactionId }
            }
            var ids: [String] = []
            for try await id in group {
                ids.append(id ?? "")
            }
            return ids
        }
        #expect(Set(ids) == Set((0..<16).map { "\(1000 + $0)" }))
        #expect(verifier.cachedChainCount == 1)
    }
}

@Suite("Kind detection")
struct KindDetectionTests {
    let minter: Minter

    init() throws {
        minter = try Minter()
    }

    @Test("verify(_:as: nil) detects each kind from its payload")
    func detection() throws {
        let verifier = try minter.verifier()
        let cases: [(SignedDataKind, [String: Any])] = [
            (.transaction, Payloads.transaction()),
            (.renewal, Payloads.renewal()),
            (.notification, Payloads.notification(data: Payloads.notificationData())),
            (.appTransaction, Payloads.appTransaction()),
        ]
        for (kind, payload) in cases {
            let token = try minter.sign(payload)
            #expect(try verifier.detectKind(token) == kind)
            let verified = try verifier.verify(token)
            #expect(verified.kind == kind)
            #expect(try verifier.verify(token, as: kind) == verified)
        }
        if case .transaction(let transaction) = try verifier.verify(try minter.sign(Payloads.transaction())) {
            #expect(transaction.productId == "com.example.app.monthly")
        } else {
            Issue.record("not detected as a transaction")
        }
    }

    @Test("A payload with none of the known fields: unexpectedPayload")
    func emptyObject() throws {
        let verifier = try minter.verifier()
        for payload in ["{}", "{\"foo\":1}"] {
            let token = try minter.sign(payloadBytes: Array(payload.utf8))
            expectIAPError(.unexpectedPayload) { try verifier.verify(token) }
        }
    }

    @Test("Detection does not verify: a forged token is detected, then rejected by verify")
    func detectionIsNotVerification() throws {
        let attacker = Minter(try Minted.pki())
        let token = try attacker.sign(Payloads.transaction())
        let verifier = try minter.verifier()
        #expect(try verifier.detectKind(token) == .transaction)
        expectIAPError(.untrustedRoot) { try verifier.verify(token) }
    }

    @Test("Asking for one kind and getting another is unexpectedPayload naming both, configured or not")
    func wrongKind() throws {
        let token = try minter.sign(Payloads.notification(data: Payloads.notificationData()))
        let open = try minter.verifier(bundleId: nil, environment: nil)
        for verifier in [try minter.verifier(), open] {
            for _ in 0..<2 {
                let asTransaction = expectIAPError(.unexpectedPayload) { try verifier.verify(token, as: .transaction) }
                #expect(asTransaction?.message == "expected a transaction, got a notification")
                expectIAPError(.unexpectedPayload) { try verifier.verify(token, as: .renewal) }
                let asApp = expectIAPError(.unexpectedPayload) { try verifier.verify(token, as: .appTransaction) }
                #expect(asApp?.message == "expected an app transaction, got a notification")
            }
            let transaction = try minter.sign(Payloads.transaction())
            let asNotification = expectIAPError(.unexpectedPayload) {
                try verifier.verify(transaction, as: .notification)
            }
            #expect(asNotification?.message == "expected a notification, got a transaction")
        }
        // What it is, it is verified as.
        #expect(try open.verify(token).kind == .notification)
    }
}

@Suite("Safe configuration: identity checks left out only by name; several environments at once")
struct VerifierConfigurationTests {
    let minter: Minter

    init() throws {
        minter = try Minter()
    }

    func configuration(
        bundleId: String? = Minted.bundleId,
        environments: Set<AppStoreEnvironment> = [.sandbox],
        appAppleId: Int64? = nil,
        skipping: AppStoreSignedDataVerifier.SkippedChecks = []
    ) -> AppStoreSignedDataVerifier.Configuration {
        .init(
            rootCertificates: [minter.pki.root],
            bundleId: bundleId,
            environments: environments,
            appAppleId: appAppleId,
            skippedChecks: skipping,
            clock: ManualClock(now: Minted.signedDate)
        )
    }

    @Test("no bundle id, no environment, or Production without its App Apple ID is refused unless named")
    func omissionsMustBeNamed() throws {
        let refusals: [(AppStoreSignedDataVerifier.Configuration, String)] = [
            (configuration(bundleId: nil), "bundle id"),
            (configuration(bundleId: ""), "bundle id"),
            (configuration(environments: []), "environment"),
            (configuration(environments: [.production]), "App Apple ID"),
            (configuration(environments: [.production, .sandbox]), "App Apple ID"),
        ]
        for (configuration, named) in refusals {
            let error = expectIAPError(.invalidConfiguration) {
                try AppStoreSignedDataVerifier(configuration: configuration)
            }
            #expect(error?.message.contains(named) == true, "\(error?.message ?? "")")
        }
        _ = try AppStoreSignedDataVerifier(configuration: configuration(bundleId: nil, skipping: .bundleId))
        _ = try AppStoreSignedDataVerifier(configuration: configuration(environments: [], skipping: .environment))
        _ = try AppStoreSignedDataVerifier(
            configuration: configuration(environments: [.production], skipping: .appAppleId)
        )
        _ = try AppStoreSignedDataVerifier(
            configuration: configuration(environments: [.production], appAppleId: Minted.appAppleId)
        )
    }

    @Test("a production server that also takes App Review's purchases accepts both, and each keeps its environment")
    func productionAndSandbox() throws {
        let verifier = try AppStoreSignedDataVerifier(
            configuration: configuration(environments: [.production, .sandbox], appAppleId: Minted.appAppleId)
        )
        let sandbox = try verifier.transaction(try minter.sign(Payloads.transaction(environment: "Sandbox")))
        #expect(sandbox.environment == .sandbox)
        let production = try verifier.transaction(try minter.sign(Payloads.transaction(environment: "Production")))
        #expect(production.environment == .production)
        let error = expectIAPError(.environmentMismatch) {
            try verifier.transaction(try minter.sign(Payloads.transaction(environment: "Xcode")))
        }
        #expect(error?.message.contains("Production or Sandbox") == true, "\(error?.message ?? "")")
        let sandboxOnly = try AppStoreSignedDataVerifier(configuration: configuration())
        expectIAPError(.environmentMismatch) {
            try sandboxOnly.transaction(try minter.sign(Payloads.transaction(environment: "Production")))
        }
    }
}
