import Foundation
import IAPCore
import IAPCrypto
import Testing

@Suite("P-256 key loading")
struct P256KeyLoadingTests {
    @Test("The PKCS#8 .p8 key loads and verifies the promotional-offer signature made with it")
    func pkcs8KeyLoads() throws {
        let key = try P256PrivateKey(pemRepresentation: try Fixtures.text("testSigningKey.p8"))
        let vector = try Fixtures.json("promotional-offer-v1.json")
        let publicPEM = try #require(vector["public_key_pem"] as? String)
        let expectedPublic = try P256PublicKey(pemRepresentation: publicPEM)
        #expect(key.publicKey.derRepresentation == expectedPublic.derRepresentation)

        let payload = Bytes.fromHex(try #require(vector["payload_utf8_hex"] as? String))
        let signatureBase64 = try #require(vector["signature_base64_example"] as? String)
        let signature = Array(try #require(Data(base64Encoded: signatureBase64)))
        #expect(key.publicKey.isValidDERSignature(signature, for: payload))
        #expect(!key.publicKey.isValidDERSignature(signature, for: payload + [0x20]))

        let ours = try key.derSignature(for: payload)
        #expect(expectedPublic.isValidDERSignature(ours, for: payload))
    }

    @Test("A SEC1 EC PRIVATE KEY loads and matches its certificate")
    func sec1KeyLoads() throws {
        let key = try P256PrivateKey(pemRepresentation: try Fixtures.text("testLeaf.key"))
        let certificate = try Fixtures.certificate("testLeaf.pem")
        let certificateKey = try #require(certificate.p256PublicKey)
        #expect(key.publicKey.derRepresentation == certificateKey.derRepresentation)
        let message = Array("header.payload".utf8)
        #expect(certificateKey.isValidSignature(try key.signature(for: message), for: message))
    }

    @Test("A SEC1 key preceded by an EC PARAMETERS block loads")
    func sec1WithParametersLoads() throws {
        let key = try P256PrivateKey(pemRepresentation: try Fixtures.text("p256-sec1-with-params.pem"))
        let message = Array("m".utf8)
        #expect(key.publicKey.isValidSignature(try key.signature(for: message), for: message))
    }

    @Test("PEM and DER encodings round-trip")
    func encodingsRoundTrip() throws {
        let key = try P256PrivateKey()
        #expect(key.pemRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let fromPEM = try P256PrivateKey(pemRepresentation: key.pemRepresentation)
        let fromDER = try P256PrivateKey(derRepresentation: key.derRepresentation)
        #expect(fromPEM.derRepresentation == key.derRepresentation)
        #expect(fromDER.publicKey.derRepresentation == key.publicKey.derRepresentation)

        let publicKey = try P256PublicKey(derRepresentation: key.publicKey.derRepresentation)
        let message = Array("hello".utf8)
        #expect(publicKey.isValidSignature(try fromDER.signature(for: message), for: message))
    }

    @Test("P-384 keys are rejected as invalidKey", arguments: ["p384-pkcs8.pem", "p384-sec1.pem"])
    func p384PrivateKeyRejected(fixture: String) throws {
        let pem = try Fixtures.text(fixture)
        #expect(throws: IAPError(.invalidKey)) {
            try P256PrivateKey(pemRepresentation: pem)
        }
    }

    @Test("A P-384 public key is rejected as invalidKey")
    func p384PublicKeyRejected() throws {
        let pem = try Fixtures.text("p384-public.pem")
        #expect(throws: IAPError(.invalidKey)) {
            try P256PublicKey(pemRepresentation: pem)
        }
    }

    @Test("Malformed key input is rejected as invalidKey with OpenSSL's reason")
    func malformedKeysRejected() throws {
        let certificatePEM = try Fixtures.text("testLeaf.pem")
        #expect(throws: IAPError(.invalidKey)) { try P256PrivateKey(pemRepresentation: certificatePEM) }
        #expect(throws: IAPError(.invalidKey)) { try P256PrivateKey(pemRepresentation: "not a key") }
        #expect(throws: IAPError(.invalidKey)) { try P256PrivateKey(derRepresentation: []) }
        #expect(throws: IAPError(.invalidKey)) { try P256PublicKey(derRepresentation: [0x30, 0x03, 0x02, 0x01]) }
        let key = try P256PrivateKey()
        #expect(throws: IAPError(.invalidKey)) { try P256PrivateKey(derRepresentation: key.derRepresentation + [0]) }
        #expect(throws: IAPError(.invalidKey)) {
            try P256PublicKey(derRepresentation: key.publicKey.derRepresentation + [0])
        }
        let garbage = PEMText.wrap(label: "PRIVATE KEY", base64: "AAAAAAAA")
        do {
            _ = try P256PrivateKey(pemRepresentation: garbage)
            Issue.record("garbage PKCS#8 was accepted")
        } catch let error as IAPError {
            #expect(error.code == .invalidKey)
            #expect(error.message.contains("error:"), "message should carry OpenSSL's reason: \(error.message)")
        }
        do {
            _ = try P256PrivateKey(pemRepresentation: PEMText.wrap(label: "PRIVATE KEY", base64: "!!!!"))
            Issue.record("a PEM block with bad base64 was accepted")
        } catch let error as IAPError {
            #expect(error.code == .invalidKey)
            #expect(error.message.contains("error:"), "message should carry OpenSSL's reason: \(error.message)")
        }
    }

    @Test("A real Apple ES256 signature verifies with the x5c leaf key")
    func realAppleSignature() throws {
        let jws = try Fixtures.text("production-test-notification-2024-10-17.jws")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let header = try #require(Base64.decodeURL(parts[0]))
        let headerObject = try #require(try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any])
        let x5c = try #require(headerObject["x5c"] as? [String])
        let leaf = try X509Certificate(derEncoded: Array(try #require(Data(base64Encoded: x5c[0]))))
        let key = try #require(leaf.p256PublicKey)
        let signature = try #require(Base64.decodeURL(parts[2]))
        let signingInput = Array("\(parts[0]).\(parts[1])".utf8)
        #expect(signature.count == 64)
        #expect(key.isValidSignature(signature, for: signingInput))
        #expect(!key.isValidSignature(signature, for: signingInput + [0x41]))
    }
}

enum PEMText {
    static func wrap(label: String, base64: String) -> String {
        "-----BEGIN \(label)-----\n\(base64)\n-----END \(label)-----\n"
    }
}
