import Foundation
import IAPCore
import IAPCrypto
import Testing

@Suite("X.509 parsing and chain validation")
struct X509ChainTests {
    let leafMarker = "1.2.840.113635.100.6.11.1"
    let intermediateMarker = "1.2.840.113635.100.6.2.1"

    func appleTestChain() throws -> (leaf: X509Certificate, intermediate: X509Certificate, root: X509Certificate) {
        (
            try Fixtures.certificate("testLeaf.pem"),
            try Fixtures.certificate("testIntermediate.pem"),
            try Fixtures.certificate("testCA.der")
        )
    }

    @Test("Apple's test chain validates at 2025-01-01 and returns leaf, intermediate, root")
    func appleTestChainValidates() throws {
        let chain = try appleTestChain()
        let store = try X509TrustStore(roots: [chain.root])
        let built = try store.validate(leaf: chain.leaf, intermediates: [chain.intermediate], at: Instants.jan2025)
        #expect(built.count == 3)
        #expect(built.map(\.derBytes) == [chain.leaf, chain.intermediate, chain.root].map(\.derBytes))
        #expect(built.last === chain.root)
    }

    @Test("Apple's test chain is expired in 2034")
    func appleTestChainExpires() throws {
        let chain = try appleTestChain()
        let store = try X509TrustStore(roots: [chain.root])
        do {
            _ = try store.validate(leaf: chain.leaf, intermediates: [chain.intermediate], at: Instants.jan2034)
            Issue.record("an expired chain validated")
        } catch let error as IAPError {
            #expect(error.code == .certificateExpired)
            #expect(error.message.contains("certificate has expired at depth"), "\(error.message)")
        }
    }

    @Test("Apple's test chain fails strict validation (no key identifiers, non-critical basicConstraints)")
    func appleTestChainIsNotStrict() throws {
        let chain = try appleTestChain()
        let store = try X509TrustStore(roots: [chain.root])
        #expect(throws: IAPError(.certificateChainInvalid)) {
            try store.validate(
                leaf: chain.leaf,
                intermediates: [chain.intermediate],
                at: Instants.jan2025,
                strict: true
            )
        }
    }

    @Test("The real Apple chain validates at its effective date, also strictly, and expires later")
    func realAppleChain() throws {
        let leaf = try Fixtures.chainConstant("REAL_APPLE_SIGNING_CERTIFICATE_BASE64_ENCODED")
        let intermediate = try Fixtures.chainConstant("REAL_APPLE_INTERMEDIATE_BASE64_ENCODED")
        let root = try Fixtures.appleRoot()
        let store = try X509TrustStore(roots: [root])
        let effective = try Fixtures.chainDate("real_effective_date_ms")
        for strict in [false, true] {
            let built = try store.validate(leaf: leaf, intermediates: [intermediate], at: effective, strict: strict)
            #expect(built.count == 3)
            #expect(built.last === root)
        }
        // This leaf is valid until 2027-10-13; Apple's own "expired" instant is 2042.
        #expect(throws: IAPError(.certificateExpired)) {
            try store.validate(leaf: leaf, intermediates: [intermediate], at: Fixtures.chainDate("expired_date_ms"))
        }
        #expect(leaf.hasExtension(oid: leafMarker))
        #expect(intermediate.hasExtension(oid: intermediateMarker))
    }

    @Test("The chain of a real Apple JWS validates at its signedDate, strictly, and is expired on 2026-12-01")
    func realJWSChain() throws {
        let jws = try Fixtures.text("production-test-notification-2024-10-17.jws")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let header = try #require(jws.split(separator: ".").first.flatMap(Base64.decodeURL))
        let headerObject = try #require(try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any])
        let x5c = try #require(headerObject["x5c"] as? [String])
        try #require(x5c.count == 3)
        let certificates = try x5c.map { try X509Certificate(derEncoded: Array(try #require(Data(base64Encoded: $0)))) }
        let store = try X509TrustStore(roots: [try Fixtures.appleRoot()])
        let signedDate = Date(timeIntervalSince1970: 1_729_136_651.128)
        for strict in [false, true] {
            let built = try store.validate(
                leaf: certificates[0],
                intermediates: [certificates[1]],
                at: signedDate,
                strict: strict
            )
            #expect(built.count == 3)
        }
        #expect(throws: IAPError(.certificateExpired)) {
            try store.validate(leaf: certificates[0], intermediates: [certificates[1]], at: Instants.dec2026)
        }
    }

    @Test("Apple's test chain does not validate against Apple Root CA - G3")
    func testChainAgainstAppleRoot() throws {
        let chain = try appleTestChain()
        let store = try X509TrustStore(roots: [try Fixtures.appleRoot()])
        #expect(throws: IAPError(.untrustedRoot)) {
            try store.validate(leaf: chain.leaf, intermediates: [chain.intermediate, chain.root], at: Instants.jan2025)
        }
    }

    @Test("A chain that ends in a different self-signed root is untrusted")
    func foreignSelfSignedRoot() throws {
        let pki = try TestPKI.generate(.init(notBefore: Instants.jan2025 - 86_400, notAfter: Instants.jan2034))
        let store = try X509TrustStore(roots: [try Fixtures.certificate("testCA.der")])
        do {
            _ = try store.validate(leaf: pki.leaf, intermediates: [pki.intermediate, pki.root], at: Instants.jan2025)
            Issue.record("a chain to a foreign root validated")
        } catch let error as IAPError {
            #expect(error.code == .untrustedRoot)
            #expect(error.message.contains("self-signed certificate in certificate chain"), "\(error.message)")
        }
        // Without the foreign root in the chain, the intermediate's issuer is simply missing.
        #expect(throws: IAPError(.untrustedRoot)) {
            try store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: Instants.jan2025)
        }
        // A leaf without its intermediate cannot reach the root either.
        #expect(throws: IAPError(.untrustedRoot)) {
            try X509TrustStore(roots: [pki.root]).validate(leaf: pki.leaf, intermediates: [], at: Instants.jan2025)
        }
    }

    @Test("A trust store needs at least one root")
    func emptyTrustStore() {
        #expect(throws: IAPError(.invalidConfiguration)) {
            try X509TrustStore(roots: [])
        }
    }

    @Test("hasExtension finds Apple's marker OIDs, and not on the invalid-OID leaf")
    func markerExtensions() throws {
        let chain = try appleTestChain()
        #expect(chain.leaf.hasExtension(oid: leafMarker))
        #expect(!chain.leaf.hasExtension(oid: intermediateMarker))
        #expect(chain.intermediate.hasExtension(oid: intermediateMarker))
        #expect(!chain.intermediate.hasExtension(oid: leafMarker))
        let invalid = try Fixtures.certificate("testInvalidOIDLeaf.pem")
        #expect(!invalid.hasExtension(oid: leafMarker))
        #expect(invalid.hasExtension(oid: "1.2.840.113635.100.6.11.2"))
        #expect(!chain.leaf.hasExtension(oid: "not an oid"))
        #expect(chain.leaf.hasExtension(oid: "2.5.29.15"))  // keyUsage
    }

    @Test("Garbage, truncated or trailing DER is certificateInvalid")
    func malformedCertificates() throws {
        let der = try Fixtures.bytes("testCA.der")
        for bad in [
            [], [0x30, 0x03, 0x02, 0x01, 0x01], Array(der.dropLast()), der + [0x00],
            [UInt8](repeating: 0xAB, count: 40),
        ] {
            #expect(throws: IAPError(.certificateInvalid)) {
                try X509Certificate(derEncoded: bad)
            }
        }
        do {
            _ = try X509Certificate(derEncoded: [0x30, 0x03, 0x02, 0x01, 0x01])
        } catch let error as IAPError {
            #expect(error.message.contains("d2i_X509"), "\(error.message)")
        }
        #expect(throws: IAPError(.certificateInvalid)) {
            try X509Certificate(pemEncoded: try Fixtures.text("testLeaf.key"))
        }
        #expect(throws: IAPError(.certificateInvalid)) {
            try X509Certificate(pemEncoded: "no PEM here")
        }
    }

    @Test("Apple Root CA - G3 fields and fingerprint")
    func appleRootFields() throws {
        let root = try Fixtures.appleRoot()
        #expect(Bytes.hex(root.sha256Fingerprint) == "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
        // RFC 2253 prints the RDNs last to first; Apple encodes CN first, so it comes out last.
        #expect(root.subject == "C=US,O=Apple Inc.,OU=Apple Certification Authority,CN=Apple Root CA - G3")
        #expect(root.serialNumberHex == "2DC5FC88D2C54B95")
        #expect(root.notBefore == Date(timeIntervalSince1970: 1_398_881_946))
        #expect(root.notAfter == Date(timeIntervalSince1970: 2_187_800_346))
        #expect(root.isCA)
        #expect(root.p256PublicKey == nil)  // P-384

        let leaf = try Fixtures.certificate("testLeaf.pem")
        #expect(!leaf.isCA)
        #expect(leaf.p256PublicKey != nil)
        #expect(try Fixtures.certificate("testIntermediate.pem").isCA)
    }
}
