import IAPCore
import IAPCrypto
import Testing

@Suite("HMAC-SHA256")
struct HMACSHA256Tests {
    /// RFC 4231, test cases 2 (padded key rule aside) and 6 (a key longer than the block size).
    @Test func matchesTheRFC4231Vectors() throws {
        let key = [UInt8](repeating: 0x0b, count: 20)
        let code = try HMACSHA256(key: key).authenticationCode(for: Array("Hi There".utf8))
        #expect(Hex.encode(code) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")

        let long = [UInt8](repeating: 0xaa, count: 131)
        let message = Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
        #expect(
            Hex.encode(try HMACSHA256(key: long).authenticationCode(for: message))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        )
    }

    @Test func comparesCodesAndRefusesShortKeys() throws {
        let hmac = try HMACSHA256(key: [UInt8](repeating: 1, count: 32))
        let code = hmac.authenticationCode(for: [])
        #expect(hmac.isValid(code, for: []))
        var altered = code
        altered[31] ^= 1
        #expect(!hmac.isValid(altered, for: []))
        #expect(!hmac.isValid(Array(code.prefix(16)), for: []))
        #expect(throws: IAPError(.invalidKey)) { try HMACSHA256(key: Array("Jefe".utf8)) }
    }
}
