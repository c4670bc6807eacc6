import Foundation
import IAPCore
import IAPCrypto
import Testing

/// PBKDF2-HMAC-SHA256 against the published vectors of RFC 7914, section 11.
@Suite("PBKDF2-HMAC-SHA256")
struct PBKDF2Tests {
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.replacingOccurrences(of: " ", with: "").utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16) ?? 0
        }
    }

    @Test func theVectorsOfRFC7914Hold() throws {
        let pbkdf2 = PBKDF2HMACSHA256()
        #expect(pbkdf2.name == "pbkdf2-sha256")
        let one = try pbkdf2.derive(password: Array("passwd".utf8), salt: Array("salt".utf8), iterations: 1, length: 64)
        #expect(
            one
                == Self.hex(
                    "55 ac 04 6e 56 e3 08 9f ec 16 91 c2 25 44 b6 05 f9 41 85 21 6d de 04 65 e6 8b 9d 57 c2 0d ac bc "
                        + "49 ca 9c cc f1 79 b6 45 99 16 64 b3 9d 77 ef 31 7c 71 b8 45 b1 e3 0b d5 09 11 20 41 d3 a1 97 83"
                )
        )
        let many = try pbkdf2.derive(
            password: Array("Password".utf8),
            salt: Array("NaCl".utf8),
            iterations: 80_000,
            length: 64
        )
        #expect(
            many
                == Self.hex(
                    "4d dc d8 f6 0b 98 be 21 83 0c ee 5e f2 27 01 f9 64 1a 44 18 d0 4c 04 14 ae ff 08 87 6b 34 ab 56 "
                        + "a1 d4 25 a1 22 58 33 54 9a db 84 1b 51 c9 b3 17 6a 27 2b de bb a1 d0 78 47 8f 62 b3 97 f3 3c 8d"
                )
        )
    }

    @Test func nonsenseIsRefused() {
        let pbkdf2 = PBKDF2HMACSHA256()
        for (iterations, length, salt) in [
            (0, 32, [UInt8](repeating: 1, count: 16)), (1, 0, [1]), (1, 65, [1]), (1, 32, []),
        ] {
            #expect(throws: IAPError.self) {
                try pbkdf2.derive(password: [1], salt: salt, iterations: iterations, length: length)
            }
        }
    }
}
