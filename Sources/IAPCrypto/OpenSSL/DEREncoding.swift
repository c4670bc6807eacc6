internal import CIAPOpenSSL

/// OpenSSL's two-pass `i2d_*` convention in one place: call once for the length, then again to write.
enum DEREncoding {
    /// Encodes with an `i2d_*` call.
    ///
    /// - Parameter i2d: Calls the `i2d_*` function with the given output cursor (`nil` asks for the length).
    /// - Returns: The DER bytes, or `nil` when OpenSSL cannot encode (its error queue is left as is).
    static func encode(_ i2d: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8]? {
        let length = i2d(nil)
        guard length > 0 else {
            return nil
        }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d(&cursor)
        }
        return written == length ? der : nil
    }
}
