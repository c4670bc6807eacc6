#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Derives stable appAccountTokens for apps whose user or order ids are not UUIDs.
///
/// StoreKit's `appAccountToken` must be a UUID. A name-based UUID (version 5, RFC 9562 §5.5) turns any
/// string id into the same UUID every time, on the device and on the server alike, without storing a
/// mapping. Use a namespace of your own so that your tokens cannot collide with another app's.
///
/// ```swift
/// let namespace = UUID(uuidString: "6f1b7c7e-3f52-4a8e-9a1e-0c2d9f6b5a10")!  // yours, fixed forever
/// let token = AppAccountToken.derive(from: "user-42", namespace: namespace)
/// ```
public enum AppAccountToken {
    /// Derives the version 5 UUID of `name` in `namespace`.
    ///
    /// - Parameters:
    ///   - name: The business id (user id, order id, ...), hashed as UTF-8.
    ///   - namespace: The namespace UUID.
    /// - Returns: The UUID, the same for the same inputs on every platform.
    public static func derive(from name: String, namespace: UUID) -> UUID {
        let namespaceBytes = withUnsafeBytes(of: namespace.uuid) { Array($0) }
        var digest = SHA1.hash(namespaceBytes + Array(name.utf8))
        digest[6] = (digest[6] & 0x0F) | 0x50  // version 5
        digest[8] = (digest[8] & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(
            uuid: (
                digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7],
                digest[8], digest[9], digest[10], digest[11], digest[12], digest[13], digest[14], digest[15]
            )
        )
    }

    /// The canonical lowercase text of a token, as the ledger stores and compares it.
    ///
    /// - Parameter token: A UUID string in any case.
    /// - Returns: The lowercase form, or `nil` if `token` is not a UUID.
    public static func normalized(_ token: String) -> String? {
        UUID(uuidString: token).map { $0.uuidString.lowercased() }
    }
}

/// SHA-1, only for name-based UUIDs (RFC 9562 requires it there); never for security.
enum SHA1 {
    static func hash(_ message: [UInt8]) -> [UInt8] {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (
            0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0
        )
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 {
            padded.append(0)
        }
        let bitLength = UInt64(message.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) {
            padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                let base = chunk + i * 4
                w[i] =
                    UInt32(padded[base]) << 24 | UInt32(padded[base + 1]) << 16 | UInt32(padded[base + 2]) << 8
                    | UInt32(padded[base + 3])
            }
            for i in 16..<80 {
                w[i] = rotate(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1)
            }
            var (a, b, c, d, e) = h
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32) =
                    switch i {
                    case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
                    case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                    case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                    default: (b ^ c ^ d, 0xCA62_C1D6)
                    }
                let temp = rotate(a, 5) &+ f &+ e &+ k &+ w[i]
                e = d
                d = c
                c = rotate(b, 30)
                b = a
                a = temp
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
        }
        return [h.0, h.1, h.2, h.3, h.4].flatMap { word in
            [
                UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8),
                UInt8(truncatingIfNeeded: word),
            ]
        }
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
        value << count | value >> (32 - count)
    }
}
