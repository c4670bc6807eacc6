import Foundation
import IAPCore
import IAPCrypto
import IAPTesting
import Testing

/// Fixed instants for minted tokens.
enum Minted {
    /// Start of every generated PKI's validity: 2024-01-01T00:00:00Z.
    static let notBefore = Date(timeIntervalSince1970: 1_704_067_200)
    /// End of every generated PKI's validity: 2027-01-01T00:00:00Z.
    static let notAfter = Date(timeIntervalSince1970: 1_798_761_600)
    /// The `signedDate` of minted payloads: 2025-01-01T00:00:00Z, in milliseconds.
    static let signedDateMs: Int64 = 1_735_689_600_000
    static let signedDate = Date(millisecondsSince1970: signedDateMs)
    static let bundleId = "com.example.app"
    static let appAppleId: Int64 = 1_234_567_890

    static func pki(_ configure: (inout TestPKI.Options) -> Void = { _ in }) throws -> TestPKI {
        var options = TestPKI.Options(notBefore: notBefore, notAfter: notAfter)
        configure(&options)
        return try TestPKI.generate(options)
    }
}

/// Base64 helpers that build token segments from arbitrary bytes, without the library's codecs.
enum B64 {
    static func url<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func url(_ text: String) -> String {
        url(Array(text.utf8))
    }

    static func url(json object: Any) throws -> String {
        url(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
    }

    static func standard(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    /// Decodes one segment of a compact JWS into a JSON object.
    static func jsonObject(_ segment: Substring) throws -> [String: Any] {
        let bytes = try #require(Base64.decodeURL(segment))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }
}

/// Mints App Store-shaped tokens signed by a ``TestPKI``: well-formed ones with ``JWSSigner`` and malformed ones
/// assembled by hand.
struct Minter {
    let pki: TestPKI

    init(_ pki: TestPKI) {
        self.pki = pki
    }

    init() throws {
        self.pki = try Minted.pki()
    }

    /// A verifier that trusts only this PKI's root and expects the minted app in the sandbox.
    func verifier(
        bundleId: String? = Minted.bundleId,
        environment: AppStoreEnvironment? = .sandbox,
        appAppleId: Int64? = nil,
        validationTime: AppStoreSignedDataVerifier.ValidationTime = .signedDate,
        cacheCapacity: Int = 64,
        extraRoots: [X509Certificate] = []
    ) throws -> AppStoreSignedDataVerifier {
        try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [pki.root] + extraRoots,
                bundleId: bundleId,
                environment: environment,
                appAppleId: appAppleId,
                skippedChecks: .skipping(bundleId: bundleId, environment: environment, appAppleId: appAppleId),
                validationTime: validationTime,
                cacheCapacity: cacheCapacity,
                clock: ManualClock(now: Minted.signedDate)
            )
        )
    }

    /// Signs a JSON payload the way the App Store does (`{"alg":"ES256","x5c":[leaf, intermediate, root]}`).
    func sign(_ payload: [String: Any]) throws -> String {
        try sign(payloadBytes: Array(try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])))
    }

    func sign(payloadBytes: [UInt8]) throws -> String {
        try JWSSigner(key: pki.leafKey, certificateChain: pki.x5c).sign(payload: Data(payloadBytes))
    }

    /// The standard header, with fields added or replaced (`NSNull()` removes a field).
    func header(_ changes: [String: Any] = [:]) -> [String: Any] {
        var header: [String: Any] = ["alg": "ES256", "x5c": pki.x5c]
        for (key, value) in changes {
            header[key] = value is NSNull ? nil : value
        }
        return header
    }

    /// Assembles `header.payload` from encoded segments and signs it with the leaf key (raw r‖s).
    func assemble(headerSegment: String, payloadSegment: String, key: P256PrivateKey? = nil) throws -> String {
        let signingInput = headerSegment + "." + payloadSegment
        let signature = try (key ?? pki.leafKey).signature(for: Array(signingInput.utf8))
        return signingInput + "." + B64.url(signature)
    }

    /// Signs a payload under a custom header object.
    func sign(header: [String: Any], payload: [String: Any], key: P256PrivateKey? = nil) throws -> String {
        try assemble(headerSegment: try B64.url(json: header), payloadSegment: try B64.url(json: payload), key: key)
    }
}

/// App Store payloads as JSON objects.
enum Payloads {
    static func transaction(
        bundleId: String = Minted.bundleId,
        environment: String = "Sandbox",
        signedDateMs: Int64 = Minted.signedDateMs,
        transactionId: String = "2000000123456789"
    ) -> [String: Any] {
        [
            "transactionId": transactionId,
            "originalTransactionId": "2000000000000001",
            "bundleId": bundleId,
            "productId": "com.example.app.monthly",
            "purchaseDate": signedDateMs - 60_000,
            "originalPurchaseDate": signedDateMs - 86_400_000,
            "expiresDate": signedDateMs + 2_592_000_000,
            "quantity": 1,
            "type": "Auto-Renewable Subscription",
            "inAppOwnershipType": "PURCHASED",
            "environment": environment,
            "storefront": "USA",
            "storefrontId": "143441",
            "transactionReason": "PURCHASE",
            "signedDate": signedDateMs,
        ]
    }

    static func renewal(environment: String = "Sandbox", signedDateMs: Int64 = Minted.signedDateMs) -> [String: Any] {
        [
            "originalTransactionId": "2000000000000001",
            "autoRenewProductId": "com.example.app.monthly",
            "productId": "com.example.app.monthly",
            "autoRenewStatus": 1,
            "renewalDate": signedDateMs + 2_592_000_000,
            "environment": environment,
            "signedDate": signedDateMs,
        ]
    }

    static func appTransaction(
        bundleId: String = Minted.bundleId,
        receiptType: String = "Sandbox",
        appAppleId: Int64? = nil,
        signedDateMs: Int64 = Minted.signedDateMs
    ) -> [String: Any] {
        var payload: [String: Any] = [
            "bundleId": bundleId,
            "receiptType": receiptType,
            "applicationVersion": "42",
            "originalApplicationVersion": "1",
            "receiptCreationDate": signedDateMs,
            "originalPurchaseDate": signedDateMs - 86_400_000,
            "originalPlatform": "iOS",
        ]
        if let appAppleId { payload["appAppleId"] = appAppleId }
        return payload
    }

    static func notification(
        type: String = "DID_RENEW",
        data: [String: Any]? = nil,
        summary: [String: Any]? = nil,
        externalPurchaseToken: [String: Any]? = nil,
        appData: [String: Any]? = nil,
        signedDateMs: Int64 = Minted.signedDateMs
    ) -> [String: Any] {
        var payload: [String: Any] = [
            "notificationType": type,
            "notificationUUID": "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
            "version": "2.0",
            "signedDate": signedDateMs,
        ]
        if let data { payload["data"] = data }
        if let summary { payload["summary"] = summary }
        if let externalPurchaseToken { payload["externalPurchaseToken"] = externalPurchaseToken }
        if let appData { payload["appData"] = appData }
        return payload
    }

    static func notificationData(
        bundleId: String = Minted.bundleId,
        environment: String = "Sandbox",
        appAppleId: Int64? = Minted.appAppleId,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil
    ) -> [String: Any] {
        var data: [String: Any] = ["bundleId": bundleId, "environment": environment, "bundleVersion": "42"]
        if let appAppleId { data["appAppleId"] = appAppleId }
        if let signedTransactionInfo { data["signedTransactionInfo"] = signedTransactionInfo }
        if let signedRenewalInfo { data["signedRenewalInfo"] = signedRenewalInfo }
        return data
    }
}

/// Asserts that `body` throws an ``IAPError`` with `code` and returns it, so its message can be checked too.
@discardableResult
func expectIAPError<T>(
    _ code: IAPError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> T
) -> IAPError? {
    do {
        let value = try body()
        Issue.record("expected \(code) but succeeded with \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as IAPError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty && error.message != error.code.rawValue, sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected IAPError \(code) but got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
