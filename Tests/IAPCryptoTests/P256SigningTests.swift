import Foundation
import IAPCore
import Testing

@testable import IAPCrypto

@Suite("P-256 signing and verification")
struct P256SigningTests {
    let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJoZWxsbyI6IndvcmxkIn0".utf8)

    @Test("A raw ES256 signature round-trips through the public key")
    func rawRoundTrip() throws {
        let key = try P256PrivateKey()
        for _ in 0..<20 {
            let signature = try key.signature(for: message)
            #expect(signature.count == 64)
            #expect(key.publicKey.isValidSignature(signature, for: message))
        }
    }

    @Test("A DER signature round-trips, and converting it to raw and back gives the same bytes")
    func derRoundTrip() throws {
        let key = try P256PrivateKey()
        for _ in 0..<50 {
            let der = try key.derSignature(for: message)
            #expect(key.publicKey.isValidDERSignature(der, for: message))
            let raw = try #require(ECDSASignatureEncoding.raw(fromDER: der))
            #expect(key.publicKey.isValidSignature(raw, for: message))
            var rebuilt = [UInt8](repeating: 0, count: ECDSASignatureEncoding.maximumDERByteCount)
            let count = try #require(
                raw.withUnsafeBytes { rawBuffer in
                    rebuilt.withUnsafeMutableBytes { ECDSASignatureEncoding.writeDER(raw: rawBuffer, into: $0) }
                }
            )
            #expect(Array(rebuilt.prefix(count)) == der)
        }
    }

    @Test("Raw to DER handles leading zero bytes and high bits in r and s")
    func derEncodingEdgeCases() throws {
        // r = 00 00 7F 01 01 ... (30 significant bytes, no padding), s = 80 02 02 ... (needs a 00 pad byte).
        let r: [UInt8] = [0x00, 0x00, 0x7F] + [UInt8](repeating: 0x01, count: 29)
        let s: [UInt8] = [0x80] + [UInt8](repeating: 0x02, count: 31)
        var output = [UInt8](repeating: 0, count: ECDSASignatureEncoding.maximumDERByteCount)
        let raw = r + s
        let count = try #require(
            raw.withUnsafeBytes { rawBuffer in
                output.withUnsafeMutableBytes { ECDSASignatureEncoding.writeDER(raw: rawBuffer, into: $0) }
            }
        )
        let expected: [UInt8] =
            [0x30, 2 + 30 + 2 + 33, 0x02, 30] + Array(r.dropFirst(2)) + [0x02, 33, 0x00] + s
        #expect(Array(output.prefix(count)) == expected)
        #expect(ECDSASignatureEncoding.raw(fromDER: expected) == raw)

        // A one-byte r: 00 ... 00 05.
        let small = [UInt8](repeating: 0, count: 31) + [0x05] + s
        let smallCount = try #require(
            small.withUnsafeBytes { rawBuffer in
                output.withUnsafeMutableBytes { ECDSASignatureEncoding.writeDER(raw: rawBuffer, into: $0) }
            }
        )
        #expect(Array(output.prefix(6)) == [0x30, 3 + 35, 0x02, 0x01, 0x05, 0x02])
        #expect(ECDSASignatureEncoding.raw(fromDER: Array(output.prefix(smallCount))) == small)
    }

    @Test("DER to raw rejects malformed input and trailing bytes")
    func derToRawRejectsMalformedInput() throws {
        let key = try P256PrivateKey()
        let der = try key.derSignature(for: message)
        #expect(ECDSASignatureEncoding.raw(fromDER: []) == nil)
        #expect(ECDSASignatureEncoding.raw(fromDER: [0x30, 0x00]) == nil)
        #expect(ECDSASignatureEncoding.raw(fromDER: der + [0x00]) == nil)
        #expect(ECDSASignatureEncoding.raw(fromDER: Array(der.dropLast())) == nil)
        // A 33-byte r that does not fit in 32 bytes.
        let tooLong: [UInt8] = [0x30, 0x26, 0x02, 0x21, 0x01] + [UInt8](repeating: 1, count: 32) + [0x02, 0x01, 0x01]
        #expect(ECDSASignatureEncoding.raw(fromDER: tooLong) == nil)
    }

    @Test("A high-S variant (s' = n - s) of a valid signature still verifies")
    func highSVerifies() throws {
        let key = try P256PrivateKey()
        let signature = try key.signature(for: message)
        let r = Array(signature.prefix(32))
        let s = Array(signature.suffix(32))
        let flipped = r + Bytes.subtract(p256Order, s)
        #expect(flipped != signature)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(key.publicKey.isValidSignature(flipped, for: message))
    }

    @Test("A tampered message or signature fails")
    func tamperingFails() throws {
        let key = try P256PrivateKey()
        let signature = try key.signature(for: message)
        var tamperedMessage = message
        tamperedMessage[5] ^= 0x01
        #expect(!key.publicKey.isValidSignature(signature, for: tamperedMessage))
        for index in [0, 31, 32, 63] {
            var tampered = signature
            tampered[index] ^= 0x01
            #expect(!key.publicKey.isValidSignature(tampered, for: message))
        }
        let other = try P256PrivateKey()
        #expect(!other.publicKey.isValidSignature(signature, for: message))
        let der = try key.derSignature(for: message)
        #expect(!key.publicKey.isValidDERSignature(der, for: tamperedMessage))
        #expect(!key.publicKey.isValidDERSignature([0x30, 0x00], for: message))
        #expect(!key.publicKey.isValidDERSignature([], for: message))
        // The key still verifies after all those failures (pooled contexts stay usable).
        #expect(key.publicKey.isValidSignature(signature, for: message))
    }

    @Test("Signatures of the wrong length or with out-of-range scalars fail", arguments: [0, 1, 63, 65, 72, 128])
    func wrongLengthFails(length: Int) throws {
        let key = try P256PrivateKey()
        let signature = try key.signature(for: message)
        let resized = Array((signature + signature + signature).prefix(length))
        #expect(!key.publicKey.isValidSignature(resized, for: message))
    }

    @Test("r or s equal to zero, to n, or above n fails")
    func outOfRangeScalarsFail() throws {
        let key = try P256PrivateKey()
        let signature = try key.signature(for: message)
        let r = Array(signature.prefix(32))
        let s = Array(signature.suffix(32))
        let zero = [UInt8](repeating: 0, count: 32)
        let max = [UInt8](repeating: 0xFF, count: 32)
        for candidate in [zero + s, r + zero, p256Order + s, r + p256Order, max + s, r + max] {
            #expect(!key.publicKey.isValidSignature(candidate, for: message))
        }
        // The untouched signature still verifies.
        #expect(key.publicKey.isValidSignature(r + s, for: message))
    }

    @Test("An empty message can be signed and verified")
    func emptyMessage() throws {
        let key = try P256PrivateKey()
        let signature = try key.signature(for: [UInt8]())
        #expect(key.publicKey.isValidSignature(signature, for: []))
        #expect(!key.publicKey.isValidSignature(signature, for: [0]))
    }

    @Test("Eight tasks verifying with one shared key at once all succeed")
    func concurrentVerification() async throws {
        let key = try P256PrivateKey()
        let publicKey = key.publicKey
        let message = self.message
        let signature = try key.signature(for: message)
        var wrong = signature
        wrong[10] ^= 0xFF
        let badSignature = wrong
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var allCorrect = true
                    for round in 0..<200 {
                        if !publicKey.isValidSignature(signature, for: message) {
                            allCorrect = false
                        }
                        if round % 10 == 0 && publicKey.isValidSignature(badSignature, for: message) {
                            allCorrect = false
                        }
                    }
                    return allCorrect
                }
            }
            var collected: [Bool] = []
            for await result in group {
                collected.append(result)
            }
            return collected
        }
        #expect(results == [Bool](repeating: true, count: 8))
    }

    @Test("SHA-256 matches the FIPS 180-2 examples")
    func sha256KnownAnswers() {
        #expect(
            Bytes.hex(SHA256Digest.hash(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        #expect(
            Bytes.hex(SHA256Digest.hash([UInt8]()))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        )
    }

    @Test("ECDSABaseline reports a positive rate")
    func baselineRuns() {
        #expect(ECDSABaseline.p256VerificationsPerSecond(minimumDuration: .milliseconds(20)) > 0)
    }
}
