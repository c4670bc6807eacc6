import CIAPCRC32C

/// CRC-32C (Castagnoli), the checksum of every journal and snapshot record.
///
/// With the processor's CRC-32C instructions when it has them (x86-64 SSE 4.2, Armv8 CRC32: a tenth of the time,
/// which a million-record snapshot feels at open), else a table-driven "slicing by 8" implementation: eight bytes
/// per step, so checking a record costs little next to decoding it.
enum CRC32C {
    /// Whether the processor's instructions are used.
    static let usesHardware = iap_crc32c_hardware_available() != 0

    /// Eight lookup tables of 256 entries each, for the reflected polynomial 0x82F63B78.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
            }
            tables[byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[byte]
            for slice in 1..<8 {
                crc = tables[Int(crc & 0xFF)] ^ (crc >> 8)
                tables[slice * 256 + byte] = crc
            }
        }
        return tables
    }()

    /// The checksum of `bytes`.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard usesHardware, let base = bytes.baseAddress else {
            return tableChecksum(bytes)
        }
        return iap_crc32c_hardware(0xFFFF_FFFF, base, bytes.count) ^ 0xFFFF_FFFF
    }

    /// The checksum of `bytes`, from the tables (what runs without the instructions; tests compare the two).
    static func tableChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        tables.withUnsafeBufferPointer { table in
            var index = 0
            let count = bytes.count
            while index + 8 <= count {
                let low =
                    crc
                    ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16
                        | UInt32(bytes[index + 3]) << 24)
                crc =
                    table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(bytes[index + 4])] ^ table[2 * 256 + Int(bytes[index + 5])]
                    ^ table[1 * 256 + Int(bytes[index + 6])] ^ table[Int(bytes[index + 7])]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// The checksum of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// The checksum as eight lowercase hexadecimal digits.
    static func hex(_ value: UInt32) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        return (0..<8).map { digits[Int((value >> UInt32(28 - 4 * $0)) & 0xF)] }
    }
}
