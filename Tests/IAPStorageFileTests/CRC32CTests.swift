import Foundation
import Testing

@testable import IAPStorageFile

/// The record checksum: the processor's instructions and the tables must agree on every length and alignment.
@Suite("CRC-32C")
struct CRC32CTests {
    @Test func theCheckValueIsCastagnolis() {
        // The check value of CRC-32C (RFC 3720, appendix B.4): "123456789".
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        let table = Array("123456789".utf8).withUnsafeBytes { CRC32C.tableChecksum($0) }
        #expect(table == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
    }

    @Test func instructionsAndTablesAgree() {
        var random = SystemRandomNumberGenerator()
        let buffer = (0..<4_200).map { _ in UInt8.random(in: 0...255, using: &random) }
        buffer.withUnsafeBytes { bytes in
            for start in 0..<9 {
                for length in [0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1_000, 4_096] {
                    let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)])
                    #expect(CRC32C.checksum(slice) == CRC32C.tableChecksum(slice), "start \(start), length \(length)")
                }
            }
        }
    }
}
