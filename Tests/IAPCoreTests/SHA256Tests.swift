import IAPCore
import IAPCrypto
import IAPTestSupport
import Testing

/// The Swift SHA-256 that chains the support audit gives the digests of the standard and of OpenSSL.
@Suite struct SHA256Tests {
    /// FIPS 180-4's examples (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf") and the empty input.
    @Test(
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                    + "mnopqrstnopqrstu",
                "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
            ),
        ]
    )
    func nistVectors(message: String, digest: String) {
        #expect(SHA256.hexDigest(Array(message.utf8)) == digest)
    }

    @Test func oneMillionTimesTheLetterA() {
        var digest = SHA256()
        // Fed in uneven pieces, so that blocks straddle the calls.
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 999)
        for _ in 0..<1001 {
            digest.update(piece)
        }
        digest.update([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000 - 999 * 1001))
        #expect(
            Hex.encode(digest.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }

    /// Every length around the padding boundaries (55, 56, 63, 64 bytes and their multiples), random bytes.
    @Test func agreesWithOpenSSLOnEveryLengthUpTo300Bytes() {
        var random = SplitMix64(seed: 0x5A5A)
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            #expect(SHA256.hash(bytes) == SHA256Digest.hash(bytes), "length \(length)")
        }
    }
}
