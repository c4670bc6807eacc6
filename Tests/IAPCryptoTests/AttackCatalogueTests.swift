import Foundation
import IAPCore
import IAPCrypto
import IAPTesting
import Testing

/// Forged and malformed tokens, each rejected with the code that names the failed check, and the legitimate
/// variations that must keep verifying.
@Suite("Attack catalogue")
struct AttackCatalogueTests {
    let minter: Minter
    let verifier: AppStoreSignedDataVerifier

    init() throws {
        minter = try Minter()
        verifier = try minter.verifier()
    }

    func parts(_ token: String) -> [String] {
        token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    func valid() throws -> String {
        try minter.sign(Payloads.transaction())
    }

    // MARK: - Baseline

    @Test("The untouched minted token verifies")
    func baseline() throws {
        let transaction = try verifier.transaction(try valid())
        #expect(transaction.transactionId == "2000000123456789")
        #expect(transaction.bundleId == Minted.bundleId)
        #expect(transaction.environment == .sandbox)
        #expect(transaction.signedDate == Minted.signedDate)
    }

    // MARK: - Signature

    @Test("A tampered payload under the original signature: signatureInvalid")
    func tamperedPayload() throws {
        let segments = parts(try valid())
        var payload = try B64.jsonObject(Substring(segments[1]))
        payload["productId"] = "com.example.app.lifetime"
        let forged = [segments[0], try B64.url(json: payload), segments[2]].joined(separator: ".")
        let error = expectIAPError(.signatureInvalid) { try verifier.transaction(forged) }
        #expect(error?.message.contains("signature") == true)
    }

    @Test("A tampered signature: signatureInvalid")
    func tamperedSignature() throws {
        let segments = parts(try valid())
        var signature = try #require(Base64.decodeURL(segments[2]))
        signature[63] ^= 0x01
        let forged = [segments[0], segments[1], B64.url(signature)].joined(separator: ".")
        expectIAPError(.signatureInvalid) { try verifier.transaction(forged) }
    }

    @Test("A signature by a key other than the leaf's: signatureInvalid")
    func wrongSigningKey() throws {
        let other = try P256PrivateKey()
        let forged = try minter.sign(header: minter.header(), payload: Payloads.transaction(), key: other)
        expectIAPError(.signatureInvalid) { try verifier.transaction(forged) }
        // Nor may the intermediate's key sign for the leaf.
        let byIntermediate = try minter.sign(
            header: minter.header(),
            payload: Payloads.transaction(),
            key: minter.pki.intermediateKey
        )
        expectIAPError(.signatureInvalid) { try verifier.transaction(byIntermediate) }
    }

    @Test("A DER-encoded signature instead of raw r‖s: malformedSignedData (wrong length)")
    func derSignature() throws {
        let segments = parts(try valid())
        let signingInput = segments[0] + "." + segments[1]
        let der = try minter.pki.leafKey.derSignature(for: Array(signingInput.utf8))
        #expect(minter.pki.leafKey.publicKey.isValidDERSignature(der, for: Array(signingInput.utf8)))
        let error = expectIAPError(.malformedSignedData) {
            try verifier.transaction(signingInput + "." + B64.url(der))
        }
        #expect(error?.message.contains("64 bytes") == true)
    }

    @Test("Padding ('=') appended to a segment: malformedSignedData", arguments: [0, 1, 2])
    func padded(segment: Int) throws {
        var segments = parts(try valid())
        segments[segment] += "="
        expectIAPError(.malformedSignedData) { try verifier.transaction(segments.joined(separator: ".")) }
        segments[segment] += "="
        expectIAPError(.malformedSignedData) { try verifier.transaction(segments.joined(separator: ".")) }
    }

    /// s' = n − s gives a second valid signature for the same message. Apple does not normalise S, so a verifier
    /// that insisted on low S would reject genuine data.
    @Test("A high-S twin of a valid signature still verifies")
    func highS() throws {
        let segments = parts(try valid())
        let signature = try #require(Base64.decodeURL(segments[2]))
        let r = Array(signature[0..<32])
        let s = Array(signature[32..<64])
        let twin = r + Bytes.subtract(p256Order, s)
        #expect(twin != signature)
        let token = [segments[0], segments[1], B64.url(twin)].joined(separator: ".")
        #expect(throws: Never.self) { try verifier.transaction(token) }
        #expect(throws: Never.self) { try verifier.transaction(segments.joined(separator: ".")) }
    }

    // MARK: - Algorithm

    @Test(
        "alg none, HS256, RS256, es256: unsupportedAlgorithm",
        arguments: ["none", "HS256", "RS256", "ES384", "es256"]
    )
    func unsupportedAlgorithm(alg: String) throws {
        let token = try minter.sign(header: minter.header(["alg": alg]), payload: Payloads.transaction())
        let error = expectIAPError(.unsupportedAlgorithm) { try verifier.transaction(token) }
        #expect(error?.message.contains(alg) == true)
    }

    @Test("The header is checked before the payload: a refused alg over a payload that is not JSON is reported as such")
    func algorithmBeforePayload() throws {
        for payload in ["null", "not json", "{\"signedDate\":\"yesterday\"}"] {
            let token = try minter.assemble(
                headerSegment: try B64.url(json: minter.header(["alg": "none"])),
                payloadSegment: B64.url(payload)
            )
            expectIAPError(.unsupportedAlgorithm) { try verifier.transaction(token) }
        }
    }

    @Test("alg none with an empty signature segment: malformedSignedData")
    func algNoneUnsigned() throws {
        let header = try B64.url(json: minter.header(["alg": "none"]))
        let payload = try B64.url(json: Payloads.transaction())
        expectIAPError(.malformedSignedData) { try verifier.transaction(header + "." + payload + ".") }
        expectIAPError(.malformedSignedData) { try verifier.transaction(header + "." + payload) }
    }

    @Test("A header without alg: malformedSignedData")
    func missingAlg() throws {
        let token = try minter.sign(header: minter.header(["alg": NSNull()]), payload: Payloads.transaction())
        let error = expectIAPError(.malformedSignedData) { try verifier.transaction(token) }
        #expect(error?.message.contains("alg") == true)
    }

    @Test("A crit header: malformedSignedData")
    func critical() throws {
        let token = try minter.sign(
            header: minter.header(["crit": ["exp"], "exp": 1]),
            payload: Payloads.transaction()
        )
        let error = expectIAPError(.malformedSignedData) { try verifier.transaction(token) }
        #expect(error?.message.contains("critical") == true)
    }

    // MARK: - x5c

    @Test("A header without x5c: malformedSignedData")
    func missingX5C() throws {
        let token = try minter.sign(header: minter.header(["x5c": NSNull()]), payload: Payloads.transaction())
        let error = expectIAPError(.malformedSignedData) { try verifier.transaction(token) }
        #expect(error?.message.contains("x5c") == true)
    }

    @Test("x5c with 0, 1, 2 or 4 certificates: malformedSignedData", arguments: [0, 1, 2, 4])
    func x5cCount(count: Int) throws {
        let x5c = Array((minter.pki.x5c + [minter.pki.x5c[2]]).prefix(count))
        let token = try minter.sign(header: minter.header(["x5c": x5c]), payload: Payloads.transaction())
        let error = expectIAPError(.malformedSignedData) { try verifier.transaction(token) }
        #expect(error?.message.contains("found \(count)") == true)
    }

    @Test("An x5c entry that is not standard base64: malformedSignedData")
    func x5cEncoding() throws {
        let leaf = minter.pki.x5c[0]
        let urlAlphabet = leaf.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        try #require(urlAlphabet != leaf)
        let unpadded = leaf.replacingOccurrences(of: "=", with: "")
        var variants = [
            "not base64!", urlAlphabet, urlAlphabet.replacingOccurrences(of: "=", with: ""), "", " " + leaf,
        ]
        if unpadded != leaf {
            variants.append(unpadded)
        }
        for variant in variants {
            let x5c = [variant, minter.pki.x5c[1], minter.pki.x5c[2]]
            let token = try minter.sign(header: minter.header(["x5c": x5c]), payload: Payloads.transaction())
            expectIAPError(.malformedSignedData) { try verifier.transaction(token) }
        }
        // Not a string at all.
        let token = try minter.sign(header: minter.header(["x5c": [1, 2, 3]]), payload: Payloads.transaction())
        expectIAPError(.malformedSignedData) { try verifier.transaction(token) }
    }

    @Test("An x5c entry that is base64 but not a certificate: certificateInvalid")
    func x5cNotCertificate() throws {
        for (index, name) in [(0, "leaf"), (1, "intermediate")] {
            var x5c = minter.pki.x5c
            x5c[index] = B64.standard(Array("abc123".utf8))
            let token = try minter.sign(header: minter.header(["x5c": x5c]), payload: Payloads.transaction())
            let error = expectIAPError(.certificateInvalid) { try verifier.transaction(token) }
            #expect(error?.message.contains(name) == true)
        }
    }

    // MARK: - Trust

    @Test("A complete chain to the attacker's own root (carried in x5c): untrustedRoot")
    func attackerRoot() throws {
        let attacker = Minter(try Minted.pki())
        let token = try attacker.sign(Payloads.transaction())
        #expect(throws: Never.self) { try attacker.verifier().transaction(token) }
        expectIAPError(.untrustedRoot) { try verifier.transaction(token) }
        // Also when the attacker's PKI uses entirely different names.
        let renamed = Minter(try Minted.pki { $0.commonNamePrefix = "Apple" })
        expectIAPError(.untrustedRoot) { try verifier.transaction(try renamed.sign(Payloads.transaction())) }
    }

    @Test("x5c[2] is the trusted root but the leaf and intermediate come from another PKI: untrustedRoot")
    func trustedRootInX5CWithForeignChain() throws {
        let attacker = Minter(try Minted.pki())
        let x5c = [attacker.pki.x5c[0], attacker.pki.x5c[1], minter.pki.x5c[2]]
        let token = try attacker.sign(header: attacker.header(["x5c": x5c]), payload: Payloads.transaction())
        expectIAPError(.untrustedRoot) { try verifier.transaction(token) }
    }

    @Test("The attacker's leaf with the trusted intermediate: rejected as untrustedRoot")
    func foreignLeafUnderTrustedIntermediate() throws {
        let attacker = Minter(try Minted.pki())
        let x5c = [attacker.pki.x5c[0], minter.pki.x5c[1], minter.pki.x5c[2]]
        let token = try attacker.sign(header: attacker.header(["x5c": x5c]), payload: Payloads.transaction())
        expectIAPError(.untrustedRoot) { try verifier.transaction(token) }
    }

    @Test("A leaf or intermediate without Apple's marker: missingAppleMarker")
    func missingMarkers() throws {
        let noLeafMarker = Minter(try Minted.pki { $0.leafHasMarker = false })
        let leafError = expectIAPError(.missingAppleMarker) {
            try noLeafMarker.verifier().transaction(try noLeafMarker.sign(Payloads.transaction()))
        }
        #expect(leafError?.message.contains(AppStoreSignedDataVerifier.leafMarkerOID) == true)

        let noIntermediateMarker = Minter(try Minted.pki { $0.intermediateHasMarker = false })
        let intermediateError = expectIAPError(.missingAppleMarker) {
            try noIntermediateMarker.verifier().transaction(try noIntermediateMarker.sign(Payloads.transaction()))
        }
        #expect(intermediateError?.message.contains(AppStoreSignedDataVerifier.intermediateMarkerOID) == true)
    }

    @Test("A non-CA intermediate: certificateChainInvalid")
    func nonCAIntermediate() throws {
        let bad = Minter(try Minted.pki { $0.intermediateIsCA = false })
        expectIAPError(.certificateChainInvalid) {
            try bad.verifier().transaction(try bad.sign(Payloads.transaction()))
        }
    }

    @Test("Leaf and intermediate swapped in x5c: certificateChainInvalid")
    func swappedOrder() throws {
        let x5c = [minter.pki.x5c[1], minter.pki.x5c[0], minter.pki.x5c[2]]
        for key in [minter.pki.leafKey, minter.pki.intermediateKey] {
            let token = try minter.sign(header: minter.header(["x5c": x5c]), payload: Payloads.transaction(), key: key)
            expectIAPError(.certificateChainInvalid) { try verifier.transaction(token) }
        }
    }

    // MARK: - Validity periods

    @Test("An expired leaf, a not-yet-valid leaf, an expired intermediate at signedDate: certificateExpired")
    func validityPeriods() throws {
        let beforeSigning = Date(millisecondsSince1970: Minted.signedDateMs - 86_400_000)
        let afterSigning = Date(millisecondsSince1970: Minted.signedDateMs + 86_400_000)
        let cases: [(String, (inout TestPKI.Options) -> Void)] = [
            ("expired leaf", { $0.leafNotAfter = beforeSigning }),
            ("not yet valid leaf", { $0.leafNotBefore = afterSigning }),
            ("expired intermediate", { $0.intermediateNotAfter = beforeSigning }),
            ("not yet valid intermediate", { $0.intermediateNotBefore = afterSigning }),
        ]
        for (name, configure) in cases {
            let minter = Minter(try Minted.pki(configure))
            let error = expectIAPError(.certificateExpired) {
                try minter.verifier().transaction(try minter.sign(Payloads.transaction()))
            }
            #expect(error != nil, "\(name)")
        }
    }

    @Test("An expired leaf still passes when signedDate lies inside its validity (Apple's offline rule)")
    func expiredLeafSignedInTime() throws {
        let leafExpiry = Date(millisecondsSince1970: Minted.signedDateMs + 86_400_000)
        let minter = Minter(try Minted.pki { $0.leafNotAfter = leafExpiry })
        let token = try minter.sign(Payloads.transaction())
        let later = ManualClock(now: Instants.dec2026)
        let offline = try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [minter.pki.root],
                bundleId: nil,
                environment: nil,
                skippedChecks: .all,
                clock: later
            )
        )
        #expect(try offline.transaction(token).transactionId == "2000000123456789")
        let online = try AppStoreSignedDataVerifier(
            configuration: .init(
                rootCertificates: [minter.pki.root],
                bundleId: nil,
                environment: nil,
                skippedChecks: .all,
                validationTime: .now,
                clock: later
            )
        )
        expectIAPError(.certificateExpired) { try online.transaction(token) }
    }

    // MARK: - Identity

    @Test("Wrong bundle id, environment or App Apple ID: the matching mismatch code")
    func identity() throws {
        expectIAPError(.bundleIdMismatch) {
            try verifier.transaction(try minter.sign(Payloads.transaction(bundleId: "com.attacker.app")))
        }
        expectIAPError(.environmentMismatch) {
            try verifier.transaction(try minter.sign(Payloads.transaction(environment: "Production")))
        }
        expectIAPError(.environmentMismatch) {
            try verifier.renewalInfo(try minter.sign(Payloads.renewal(environment: "Production")))
        }
        let production = try minter.verifier(environment: .production, appAppleId: Minted.appAppleId)
        let wrongApp = try minter.sign(Payloads.appTransaction(receiptType: "Production", appAppleId: 42))
        let error = expectIAPError(.appAppleIdMismatch) { try production.appTransaction(wrongApp) }
        #expect(error?.message.contains("42") == true)
        // Production data that names no App Apple ID is refused when one is expected.
        let unnamed = try minter.sign(Payloads.appTransaction(receiptType: "Production"))
        expectIAPError(.appAppleIdMismatch) { try production.appTransaction(unnamed) }
        let right = try minter.sign(Payloads.appTransaction(receiptType: "Production", appAppleId: Minted.appAppleId))
        #expect(try production.appTransaction(right).appAppleId == Minted.appAppleId)
    }

    // MARK: - Sizes

    @Test("A header over 16 KiB or a payload over 256 KiB: malformedSignedData")
    func oversized() throws {
        let bigHeader = try minter.sign(
            header: minter.header(["pad": String(repeating: "a", count: 17 * 1024)]),
            payload: Payloads.transaction()
        )
        let headerError = expectIAPError(.malformedSignedData) { try verifier.transaction(bigHeader) }
        #expect(headerError?.message.contains("header") == true)

        var payload = Payloads.transaction()
        payload["pad"] = String(repeating: "a", count: 257 * 1024)
        let bigPayload = try minter.sign(payload)
        let payloadError = expectIAPError(.malformedSignedData) { try verifier.transaction(bigPayload) }
        #expect(payloadError?.message.contains("more than") == true)

        // Just inside the limits is fine.
        payload["pad"] = String(repeating: "a", count: 180 * 1024)
        let large = try minter.sign(
            header: minter.header(["pad": String(repeating: "a", count: 8 * 1024)]),
            payload: payload
        )
        #expect(throws: Never.self) { try verifier.transaction(large) }
    }

    // MARK: - Payload shape

    @Test(
        "A payload that is not a JSON object: malformedSignedData",
        arguments: ["hello", "[1,2]", "\"text\"", "null", "42", "{", "\u{FEFF}{}", "{}{}"]
    )
    func payloadNotObject(payload: String) throws {
        let token = try minter.sign(payloadBytes: Array(payload.utf8))
        for kind in SignedDataKind.allCases {
            expectIAPError(.malformedSignedData) { try verifier.verify(token, as: kind) }
        }
    }

    @Test("A date field of the wrong type: malformedSignedData, naming the field")
    func wrongFieldType() throws {
        let cases: [(SignedDataKind, String)] = [
            (.transaction, "signedDate"), (.renewal, "signedDate"), (.notification, "signedDate"),
            (.appTransaction, "receiptCreationDate"),
        ]
        for (kind, field) in cases {
            let token = try minter.sign(payloadBytes: Array("{\"\(field)\":\"yesterday\"}".utf8))
            let error = expectIAPError(.malformedSignedData) { try verifier.verify(token, as: kind) }
            #expect(error?.message.contains(field) == true, "\(kind)")
        }
    }

    @Test("A header that is not a JSON object: malformedSignedData", arguments: ["[]", "null", "ES256", "{"])
    func headerNotObject(header: String) throws {
        let token = try minter.assemble(
            headerSegment: B64.url(header),
            payloadSegment: try B64.url(json: Payloads.transaction())
        )
        expectIAPError(.malformedSignedData) { try verifier.transaction(token) }
    }

    // MARK: - Encoding

    @Test("Bytes outside base64url in any segment: malformedSignedData", arguments: [0, 1, 2])
    func nonBase64URL(segment: Int) throws {
        let original = parts(try valid())
        for replacement in ["+", "/", " ", "é", "\n", "%", "\u{0}"] {
            var segments = original
            var characters = Array(segments[segment])
            characters[5] = Character(replacement)
            segments[segment] = String(characters)
            expectIAPError(.malformedSignedData) { try verifier.transaction(segments.joined(separator: ".")) }
        }
    }

    @Test("Empty segments: malformedSignedData")
    func emptySegments() throws {
        let segments = parts(try valid())
        for token in [
            "", ".", "..", "...",
            "." + segments[1] + "." + segments[2],
            segments[0] + ".." + segments[2],
            segments[0] + "." + segments[1] + ".",
            segments.joined(separator: ".") + ".",
        ] {
            expectIAPError(.malformedSignedData) { try verifier.transaction(token) }
        }
    }

    @Test("Surrounding whitespace is not trimmed: malformedSignedData")
    func whitespace() throws {
        let token = try valid()
        expectIAPError(.malformedSignedData) { try verifier.transaction(" " + token) }
        expectIAPError(.malformedSignedData) { try verifier.transaction(token + "\n") }
    }

    // MARK: - Duplicate keys

    /// JSON text of an object with sorted keys, as the App Store writes it.
    func text(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// `json` with `member` (`"key":value`) added as its first member, before the key it repeats.
    func prepending(_ member: String, to json: String) -> String {
        "{" + member + "," + String(json.dropFirst())
    }

    func token(header: String? = nil, payload: String) throws -> String {
        try minter.assemble(
            headerSegment: B64.url(header ?? (try text(minter.header()))),
            payloadSegment: B64.url(payload)
        )
    }

    @Test(
        "A header with alg twice: malformedSignedData, whichever value comes first",
        arguments: [#""alg":"ES256","alg":"none""#, #""alg":"none","alg":"ES256""#, #""alg":"ES256","alg":"ES256""#]
    )
    func headerWithAlgTwice(algs: String) throws {
        let x5c = minter.pki.x5c.map { "\"\($0)\"" }.joined(separator: ",")
        let header = "{\(algs),\"x5c\":[\(x5c)]}"
        let token = try token(header: header, payload: try text(Payloads.transaction()))
        let error = expectIAPError(.malformedSignedData) { try verifier.transaction(token) }
        #expect(error?.message.contains("'alg' twice") == true, "\(String(describing: error))")
    }

    /// Readers disagree on which `bundleId` counts: JSONDecoder kept the first, other languages the last.
    @Test("A payload with bundleId twice: malformedSignedData on the fast path and the fallback alike")
    func payloadWithBundleIdTwice() throws {
        let plain = try text(Payloads.transaction())
        for payload in [
            prepending(#""bundleId":"com.attacker.app""#, to: plain),
            // After the real one: the last value wins in most JSON readers.
            String(plain.dropLast()) + #","bundleId":"com.attacker.app"}"#,
            // Equal values are no better: the document is still ambiguous to a strict reader.
            prepending(#""bundleId":"com.example.app""#, to: plain),
            // An escape elsewhere sends the payload past the fast decoder, to JSONDecoder.
            prepending(#""bundleId":"com.attacker.app","storefront":"U\u0053A""#, to: plain),
        ] {
            let error = expectIAPError(.malformedSignedData) { try verifier.transaction(try token(payload: payload)) }
            #expect(error?.message.contains("'bundleId' twice") == true, "\(String(describing: error))")
        }
    }

    @Test("Keys equal once their escapes are read are one key: malformedSignedData")
    func keysEqualAfterUnescaping() throws {
        let plain = try text(Payloads.transaction())
        for member in [#""bundle\u0049d":"com.attacker.app""#, #""\u0062undleId":"x""#, #""bundleId\u0000":"x""#] {
            let payload = prepending(member, to: plain)
            if member.contains("0000") {
                // A key with a NUL after it is another key: it must still verify.
                #expect(throws: Never.self) { try verifier.transaction(try token(payload: payload)) }
            } else {
                expectIAPError(.malformedSignedData) { try verifier.transaction(try token(payload: payload)) }
            }
        }
        // An unknown key twice is refused too, on the fast path as on the fallback.
        let unknown = prepending(#""futureField":1,"futureField":2"#, to: plain)
        expectIAPError(.malformedSignedData) { try verifier.transaction(try token(payload: unknown)) }
    }

    /// Foundation's decoder reads a trailing comma, which JSON does not allow and the walk for repeated keys stops
    /// at: a repeat hidden behind one must not pass.
    @Test("A trailing comma, with or without a repeated key behind it: malformedSignedData")
    func trailingComma() throws {
        let plain = try text(Payloads.transaction())
        for payload in [
            String(plain.dropLast()) + ",}",
            #"{"futureField":[1,],"# + String(plain.dropFirst()),
            #"{"futureField":[1,],"bundleId":"com.attacker.app","# + String(plain.dropFirst()),
        ] {
            expectIAPError(.malformedSignedData) { try verifier.transaction(try token(payload: payload)) }
        }
        let header = String(try text(minter.header()).dropLast()) + ",}"
        expectIAPError(.malformedSignedData) {
            try verifier.transaction(try token(header: header, payload: plain))
        }
    }

    @Test("A duplicate deep inside the payload, in an array or a nested object: malformedSignedData")
    func duplicateDeepInside() throws {
        let plain = try text(Payloads.transaction())
        let deep = prepending(#""futureField":{"list":[{"a":1},{"b":{"c":true,"c":false}}]}"#, to: plain)
        let error = expectIAPError(.malformedSignedData) { try verifier.transaction(try token(payload: deep)) }
        #expect(error?.message.contains("'futureField.list[1].b'") == true, "\(String(describing: error))")
        // The same keys in sibling objects are not duplicates.
        let siblings = prepending(#""futureField":[{"c":1},{"c":2}],"other":{"c":3}"#, to: plain)
        #expect(throws: Never.self) { try verifier.transaction(try token(payload: siblings)) }
    }

    @Test("A notification whose data, or whose nested signedTransactionInfo, holds a key twice: malformedSignedData")
    func nestedNotificationData() throws {
        let transaction = try minter.sign(Payloads.transaction())
        let data = try text(Payloads.notificationData(signedTransactionInfo: transaction))
        let clean = try text(Payloads.notification(data: ["placeholder": true]))
        let notification = clean.replacingOccurrences(of: #"{"placeholder":true}"#, with: data)
        let verifier = try minter.verifier(appAppleId: Minted.appAppleId)
        #expect(throws: Never.self) { try verifier.notification(try token(payload: notification)) }

        let twice = clean.replacingOccurrences(
            of: #"{"placeholder":true}"#,
            with: prepending(#""bundleId":"com.attacker.app""#, to: data)
        )
        let error = expectIAPError(.malformedSignedData) { try verifier.notification(try token(payload: twice)) }
        #expect(error?.message.contains("'data'") == true, "\(String(describing: error))")

        let forgedInner = prepending(#""bundleId":"com.attacker.app""#, to: try text(Payloads.transaction()))
        let innerData = try text(
            Payloads.notificationData(signedTransactionInfo: try minter.sign(payloadBytes: Array(forgedInner.utf8)))
        )
        let nested = clean.replacingOccurrences(of: #"{"placeholder":true}"#, with: innerData)
        let nestedError = expectIAPError(.malformedSignedData) {
            try verifier.notification(try token(payload: nested))
        }
        #expect(nestedError?.message.hasPrefix("signedTransactionInfo: ") == true)
    }

    @Test("Renewal infos and app transactions refuse a repeated key too")
    func otherKinds() throws {
        let renewal = prepending(#""autoRenewStatus":0"#, to: try text(Payloads.renewal()))
        expectIAPError(.malformedSignedData) { try verifier.renewalInfo(try token(payload: renewal)) }
        let app = prepending(#""receiptType":"Production""#, to: try text(Payloads.appTransaction()))
        expectIAPError(.malformedSignedData) { try verifier.appTransaction(try token(payload: app)) }
    }

    // MARK: - What must still pass

    @Test("Unknown header fields and unknown payload fields are ignored")
    func unknownFields() throws {
        var payload = Payloads.transaction()
        payload["futureField"] = ["nested": [1, 2, 3]]
        payload["anotherOne"] = "value"
        let token = try minter.sign(
            header: minter.header(["typ": "JWT", "kid": "some-key", "x-future": ["a": true]]),
            payload: payload
        )
        let transaction = try verifier.transaction(token)
        #expect(transaction.productId == "com.example.app.monthly")
    }
}
