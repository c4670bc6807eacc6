import Foundation
import IAPCore
import IAPCrypto
import Testing

@Suite("TestPKI")
struct TestPKITests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14
    let end = Date(timeIntervalSince1970: 1_900_000_000)  // 2030-03-17
    let instant = Instants.jan2025

    @Test("A generated chain validates, also strictly, and carries the markers")
    func generatedChainValidates() throws {
        let pki = try TestPKI.generate(.init(notBefore: start, notAfter: end))
        let store = try X509TrustStore(roots: [pki.root])
        for strict in [false, true] {
            let built = try store.validate(
                leaf: pki.leaf,
                intermediates: [pki.intermediate],
                at: instant,
                strict: strict
            )
            #expect(built.count == 3)
            #expect(built[0] === pki.leaf)
            #expect(built[1] === pki.intermediate)
            #expect(built[2] === pki.root)
        }
        #expect(pki.leaf.hasExtension(oid: TestPKI.leafMarkerOID))
        #expect(pki.intermediate.hasExtension(oid: TestPKI.intermediateMarkerOID))
        #expect(!pki.root.hasExtension(oid: TestPKI.leafMarkerOID))
        #expect(pki.root.isCA && pki.intermediate.isCA && !pki.leaf.isCA)
        #expect(pki.leaf.notBefore == start && pki.leaf.notAfter == end)
        #expect(pki.leaf.subject.hasSuffix("CN=swift-iap test App Store Receipt Signing"))
    }

    @Test("x5c holds standard base64 DER of leaf, intermediate and root, and the leaf key signs for the leaf")
    func x5cAndLeafKey() throws {
        let pki = try TestPKI.generate(.init(notBefore: start, notAfter: end))
        let decoded = pki.x5c.compactMap { Data(base64Encoded: $0).map(Array.init) }
        #expect(decoded == [pki.leaf.derBytes, pki.intermediate.derBytes, pki.root.derBytes])
        let message = Array("header.payload".utf8)
        let leafKey = try #require(pki.leaf.p256PublicKey)
        #expect(leafKey.isValidSignature(try pki.leafKey.signature(for: message), for: message))
        #expect(leafKey.derRepresentation == pki.leafKey.publicKey.derRepresentation)
        #expect(pki.root.p256PublicKey?.derRepresentation == pki.rootKey.publicKey.derRepresentation)
    }

    @Test("Serial numbers are random, positive and 16 bytes long")
    func serials() throws {
        let first = try TestPKI.generate(.init(notBefore: start, notAfter: end))
        let second = try TestPKI.generate(.init(notBefore: start, notAfter: end))
        let serials = [first.root, first.intermediate, first.leaf, second.leaf].map(\.serialNumberHex)
        #expect(Set(serials).count == 4)
        for serial in serials {
            #expect(serial.count == 32)
            #expect("4567".contains(serial.first ?? "x"))
        }
    }

    @Test("A non-CA intermediate fails as certificateChainInvalid")
    func nonCAIntermediate() throws {
        var options = TestPKI.Options(notBefore: start, notAfter: end)
        options.intermediateIsCA = false
        let pki = try TestPKI.generate(options)
        #expect(!pki.intermediate.isCA)
        let store = try X509TrustStore(roots: [pki.root])
        do {
            _ = try store.validate(leaf: pki.leaf, intermediates: [pki.intermediate], at: instant)
            Issue.record("a non-CA intermediate was accepted")
        } catch let error as IAPError {
            #expect(error.code == .certificateChainInvalid)
            #expect(error.message.contains("at depth 1"), "\(error.message)")
        }
    }

    @Test("An expired leaf or a not-yet-valid intermediate fails as certificateExpired")
    func validityOverrides() throws {
        var expired = TestPKI.Options(notBefore: start, notAfter: end)
        expired.leafNotAfter = instant - 1
        let expiredPKI = try TestPKI.generate(expired)
        #expect(expiredPKI.leaf.notAfter == instant - 1)
        do {
            _ = try X509TrustStore(roots: [expiredPKI.root])
                .validate(leaf: expiredPKI.leaf, intermediates: [expiredPKI.intermediate], at: instant)
            Issue.record("an expired leaf was accepted")
        } catch let error as IAPError {
            #expect(error.code == .certificateExpired)
            #expect(error.message.contains("at depth 0 (C=US,"), "\(error.message)")
            #expect(error.message.contains("CN=swift-iap test App Store Receipt Signing)"), "\(error.message)")
        }

        var early = TestPKI.Options(notBefore: start, notAfter: end)
        early.intermediateNotBefore = instant + 86_400
        let earlyPKI = try TestPKI.generate(early)
        #expect(throws: IAPError(.certificateExpired)) {
            try X509TrustStore(roots: [earlyPKI.root])
                .validate(leaf: earlyPKI.leaf, intermediates: [earlyPKI.intermediate], at: instant)
        }
    }

    @Test("Markers can be left out")
    func missingMarkers() throws {
        var options = TestPKI.Options(notBefore: start, notAfter: end)
        options.leafHasMarker = false
        options.intermediateHasMarker = false
        options.commonNamePrefix = "marker-less"
        let pki = try TestPKI.generate(options)
        #expect(!pki.leaf.hasExtension(oid: TestPKI.leafMarkerOID))
        #expect(!pki.intermediate.hasExtension(oid: TestPKI.intermediateMarkerOID))
        #expect(pki.root.subject.contains("CN=marker-less Root CA"))
        // The chain itself is still valid; the markers are an App Store policy, not an X.509 rule.
        _ = try X509TrustStore(roots: [pki.root]).validate(
            leaf: pki.leaf,
            intermediates: [pki.intermediate],
            at: instant
        )
    }
}
