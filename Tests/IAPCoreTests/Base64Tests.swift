import Foundation
import IAPCore
import Testing

/// The strict base64 codec the verifier decodes every JWS segment and `x5c` certificate with: every byte string has
/// exactly one accepted encoding, and anything else is refused.
@Suite("Strict base64")
struct Base64Tests {
    /// Deterministic bytes of every length up to 70, so every remainder and both tails are covered.
    static let samples: [[UInt8]] = (0...70).map { length in
        var state = UInt64(length) &+ 11
        return (0..<length).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }

    @Test func decodesWhatFoundationEncodes() throws {
        for bytes in Self.samples {
            let standard = Data(bytes).base64EncodedString()
            #expect(Base64.decodeStandard(standard) == bytes, "\(standard)")
            let url = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64.decodeURL(url) == bytes, "\(url)")
            #expect(Base64.encodeStandard(bytes) == standard)
            #expect(Base64.encodeURL(bytes) == url)
        }
    }

    @Test func refusesAByteOutsideTheAlphabetWherever() {
        for bytes in Self.samples where !bytes.isEmpty {
            let url = Array(Base64.encodeURL(bytes).utf8)
            for position in url.indices {
                for wrong in Array("=+/.\n ".utf8) + [0x00, 0x80, 0xFF] {
                    var broken = url
                    broken[position] = wrong
                    let decoded = broken.withUnsafeBufferPointer { Base64.decodeURL($0) }
                    #expect(decoded == nil, "\(bytes.count) bytes, \(wrong) at \(position)")
                }
            }
        }
    }

    @Test func refusesImpossibleLengthsUnusedBitsAndWrongPadding() {
        // One character over a group carries only 6 bits: no byte string encodes to it.
        #expect(Base64.decodeURL("QUJDR") == nil)
        #expect(Base64.decodeURL("A") == nil)
        // The unused low bits of the last character must be zero: "QQ" is the one encoding of "A", "QR" is not.
        #expect(Base64.decodeURL("QQ") == Array("A".utf8))
        #expect(Base64.decodeURL("QR") == nil)
        #expect(Base64.decodeURL("QUI") == Array("AB".utf8))
        #expect(Base64.decodeURL("QUJ") == nil)
        // The URL form has no padding; the standard form requires exactly the canonical padding.
        #expect(Base64.decodeURL("QQ==") == nil)
        #expect(Base64.decodeStandard("QQ==") == Array("A".utf8))
        #expect(Base64.decodeStandard("QQ") == nil)
        #expect(Base64.decodeStandard("QQ=") == nil)
        #expect(Base64.decodeStandard("Q===") == nil)
        #expect(Base64.decodeStandard("QUI==") == nil)
        #expect(Base64.decodeStandard("QR==") == nil)
        #expect(Base64.decodeStandard("QQ==QUJD") == nil)
        // The alphabets are not mixed.
        #expect(Base64.decodeURL("-_-_") == [0xFB, 0xFF, 0xBF])
        #expect(Base64.decodeStandard("-_-_") == nil)
        #expect(Base64.decodeURL("+/+/") == nil)
        #expect(Base64.decodeURL("") == [])
    }
}
