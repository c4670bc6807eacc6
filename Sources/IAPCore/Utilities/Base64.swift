#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The package's one base64 codec, strict: the URL alphabet without padding for the three segments of a JWS,
/// and the standard alphabet with padding for `x5c` certificates and signatures.
///
/// Decoding refuses any byte outside the alphabet, wrong padding and non-zero unused bits, so every byte
/// string has exactly one accepted encoding.
public enum Base64 {
    private static let invalid: UInt8 = 0xFF

    private static let urlTable: [UInt8] = makeTable("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    private static let standardTable: [UInt8] = makeTable(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    )
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let standardAlphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8
    )

    private static func makeTable(_ alphabet: String) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, byte) in alphabet.utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        return table
    }

    /// Decodes unpadded base64url. Returns nil for any byte outside the alphabet, for padding, for an
    /// impossible length, or for non-zero unused bits (so every byte string has exactly one encoding).
    public static func decodeURL(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        decode(input, table: urlTable, padded: false)
    }

    /// Decodes padded standard base64 (RFC 4648 §4), strictly: padding is required and canonical.
    public static func decodeStandard(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        decode(input, table: standardTable, padded: true)
    }

    /// Decodes padded standard base64 text.
    public static func decodeStandard(_ text: some StringProtocol) -> [UInt8]? {
        var string = String(text)
        return string.withUTF8 { decodeStandard($0) }
    }

    /// Decodes unpadded base64url text.
    public static func decodeURL(_ text: some StringProtocol) -> [UInt8]? {
        var string = String(text)
        return string.withUTF8 { decodeURL($0) }
    }

    private static func decode(_ input: UnsafeBufferPointer<UInt8>, table: [UInt8], padded: Bool) -> [UInt8]? {
        var count = input.count
        if padded {
            guard count % 4 == 0 else { return nil }
            if count > 0, input[count - 1] == UInt8(ascii: "=") { count -= 1 }
            if count > 0, input[count - 1] == UInt8(ascii: "=") { count -= 1 }
            // A third '=' or a '=' followed by data is caught below as an invalid byte.
        }
        let remainder = count % 4
        guard remainder != 1 else { return nil }
        if padded, input.count - count != (4 - remainder) % 4 { return nil }
        // Written in place into an array of the exact size: no per-byte append.
        let fullEnd = count - remainder
        let outputCount = fullEnd / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { output, initializedCount in
            table.withUnsafeBufferPointer { table in
                var index = 0
                var at = 0
                while index < fullEnd {
                    let a = table[Int(input[index])]
                    let b = table[Int(input[index + 1])]
                    let c = table[Int(input[index + 2])]
                    let d = table[Int(input[index + 3])]
                    guard (a | b | c | d) & 0xC0 == 0 else {
                        valid = false
                        return
                    }
                    let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    output[at] = UInt8(truncatingIfNeeded: value >> 16)
                    output[at + 1] = UInt8(truncatingIfNeeded: value >> 8)
                    output[at + 2] = UInt8(truncatingIfNeeded: value)
                    index += 4
                    at += 3
                }
                if remainder == 2 {
                    let a = table[Int(input[index])]
                    let b = table[Int(input[index + 1])]
                    guard (a | b) & 0xC0 == 0, b & 0x0F == 0 else {
                        valid = false
                        return
                    }
                    output[at] = a << 2 | b >> 4
                } else if remainder == 3 {
                    let a = table[Int(input[index])]
                    let b = table[Int(input[index + 1])]
                    let c = table[Int(input[index + 2])]
                    guard (a | b | c) & 0xC0 == 0, c & 0x03 == 0 else {
                        valid = false
                        return
                    }
                    output[at] = a << 2 | b >> 4
                    output[at + 1] = (b & 0x0F) << 4 | c >> 2
                }
            }
            // UInt8 needs no deinitialisation: a refused input's partly written bytes are simply dropped.
            initializedCount = valid ? outputCount : 0
        }
        return valid ? output : nil
    }

    /// Encodes as unpadded base64url.
    public static func encodeURL<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        encode(bytes, alphabet: urlAlphabet, padded: false)
    }

    /// Encodes as padded standard base64.
    public static func encodeStandard<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        encode(bytes, alphabet: standardAlphabet, padded: true)
    }

    private static func encode<Bytes: Collection>(
        _ bytes: Bytes,
        alphabet: [UInt8],
        padded: Bool
    ) -> String where Bytes.Element == UInt8 {
        var output = [UInt8]()
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let value = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(alphabet[Int(value >> 18 & 0x3F)])
            output.append(alphabet[Int(value >> 12 & 0x3F)])
            if second != nil {
                output.append(alphabet[Int(value >> 6 & 0x3F)])
            } else if padded {
                output.append(UInt8(ascii: "="))
            }
            if third != nil {
                output.append(alphabet[Int(value & 0x3F)])
            } else if padded {
                output.append(UInt8(ascii: "="))
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
