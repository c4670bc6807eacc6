internal import CIAPOpenSSL

/// Conversions between the two encodings of a P-256 ECDSA signature.
///
/// JWS (RFC 7518 §3.4) uses the raw form: `r` and `s` as 32-byte big-endian integers, concatenated (64 bytes).
/// OpenSSL and Apple's promotional-offer signatures use DER `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }`,
/// whose length varies (8 to 72 bytes) with the leading zeros and high bits of `r` and `s`.
enum ECDSASignatureEncoding {
    /// The length of a raw P-256 signature.
    static let rawByteCount = 64
    /// The longest DER encoding of a P-256 signature: `30 46 02 21 00 <32> 02 21 00 <32>`.
    static let maximumDERByteCount = 72

    /// The order `n` of the P-256 base point, big-endian.
    static let groupOrder: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]

    /// Tells whether a 32-byte big-endian scalar lies in `1 ..< n`, the range ECDSA allows for `r` and `s`.
    ///
    /// - Parameter scalar: Exactly 32 bytes.
    /// - Returns: `true` when the value is neither zero nor at least the group order.
    static func isValidScalar(_ scalar: UnsafeRawBufferPointer) -> Bool {
        guard scalar.count == 32 else {
            return false
        }
        var isZero = true
        var comparison = 0  // -1: scalar < n, 1: scalar > n, 0: equal so far
        for index in 0..<32 {
            let byte = scalar[index]
            if byte != 0 {
                isZero = false
            }
            if comparison == 0 && byte != groupOrder[index] {
                comparison = byte < groupOrder[index] ? -1 : 1
            }
        }
        return !isZero && comparison < 0
    }

    /// Writes the DER `ECDSA-Sig-Value` for a raw `r‖s` signature.
    ///
    /// Each integer is written minimally: leading zero bytes are dropped and a `00` byte is put back in front when
    /// the first remaining byte has its high bit set, so the INTEGER stays positive.
    ///
    /// - Parameters:
    ///   - raw: Exactly 64 bytes, `r` then `s`, both non-zero (check with ``isValidScalar(_:)``).
    ///   - output: At least ``maximumDERByteCount`` bytes.
    /// - Returns: The number of bytes written, or `nil` when `raw` is not 64 bytes or a scalar is zero.
    static func writeDER(raw: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int? {
        guard raw.count == rawByteCount, output.count >= maximumDERByteCount else {
            return nil
        }
        func integerLayout(at offset: Int) -> (start: Int, pad: Bool)? {
            var start = offset
            while start < offset + 32 && raw[start] == 0 {
                start += 1
            }
            guard start < offset + 32 else {
                return nil
            }
            return (start, raw[start] >= 0x80)
        }
        guard let r = integerLayout(at: 0), let s = integerLayout(at: 32) else {
            return nil
        }
        let rLength = 32 - r.start + (r.pad ? 1 : 0)
        let sLength = 64 - s.start + (s.pad ? 1 : 0)
        var position = 0
        func append(_ byte: UInt8) {
            output[position] = byte
            position += 1
        }
        func appendInteger(start: Int, pad: Bool, length: Int, end: Int) {
            append(0x02)
            append(UInt8(length))
            if pad {
                append(0x00)
            }
            for index in start..<end {
                append(raw[index])
            }
        }
        append(0x30)
        append(UInt8(2 + rLength + 2 + sLength))
        appendInteger(start: r.start, pad: r.pad, length: rLength, end: 32)
        appendInteger(start: s.start, pad: s.pad, length: sLength, end: 64)
        return position
    }

    /// Converts a DER `ECDSA-Sig-Value` to the raw 64-byte `r‖s` form.
    ///
    /// Parsing is OpenSSL's (`d2i_ECDSA_SIG`), and the whole input must be consumed. Each integer is left-padded
    /// to 32 bytes with `BN_bn2binpad`, which refuses integers longer than 32 bytes.
    ///
    /// - Parameter der: The DER signature.
    /// - Returns: The raw signature, or `nil` when the input is not one DER signature with both integers below 2^256.
    static func raw(fromDER der: [UInt8]) -> [UInt8]? {
        guard !der.isEmpty else {
            return nil
        }
        return der.withUnsafeBufferPointer { buffer -> [UInt8]? in
            guard let base = buffer.baseAddress else {
                return nil
            }
            var cursor: UnsafePointer<UInt8>? = base
            guard let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else {
                ERR_clear_error()
                return nil
            }
            defer { ECDSA_SIG_free(signature) }
            guard cursor == base + buffer.count,
                let r = ECDSA_SIG_get0_r(signature),
                let s = ECDSA_SIG_get0_s(signature)
            else {
                return nil
            }
            var raw = [UInt8](repeating: 0, count: rawByteCount)
            let written = raw.withUnsafeMutableBufferPointer { output -> Bool in
                guard let start = output.baseAddress else {
                    return false
                }
                return BN_bn2binpad(r, start, 32) == 32 && BN_bn2binpad(s, start + 32, 32) == 32
            }
            guard written else {
                ERR_clear_error()
                return nil
            }
            return raw
        }
    }
}
