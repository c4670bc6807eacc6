internal import CIAPOpenSSL

/// SHA-256, computed by OpenSSL.
public enum SHA256Digest {
    /// The length of a SHA-256 digest in bytes.
    static let byteCount = 32

    /// Computes the SHA-256 digest of some bytes.
    ///
    /// The digest algorithm is fetched from OpenSSL's default provider once per process.
    ///
    /// - Parameter bytes: The bytes to hash; may be empty.
    /// - Returns: The 32-byte digest.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { output, initializedCount in
            hash(bytes, into: UnsafeMutableRawBufferPointer(output))
            initializedCount = byteCount
        }
    }

    /// Computes the SHA-256 digest of some bytes.
    ///
    /// - Parameter bytes: The bytes to hash; may be empty.
    /// - Returns: The 32-byte digest.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// Writes the SHA-256 digest of `bytes` into `output`, which must hold at least 32 bytes.
    ///
    /// `EVP_Digest` with an explicitly fetched `EVP_MD` fails only when memory allocation fails, which the Swift
    /// runtime does not survive either; that case stops the process rather than return a wrong digest.
    ///
    /// - Parameters:
    ///   - bytes: The bytes to hash.
    ///   - output: Where the digest goes.
    static func hash(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= byteCount, "SHA-256 output buffer too small")
        // EVP_Digest accepts a NULL pointer only together with a zero length; give it a valid one either way.
        var empty: UInt8 = 0
        let status = withUnsafeMutablePointer(to: &empty) { emptyPointer in
            EVP_Digest(
                bytes.baseAddress ?? UnsafeRawPointer(emptyPointer),
                bytes.count,
                output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                nil,
                OpenSSLAlgorithms.shared.sha256,
                nil
            )
        }
        guard status == 1 else {
            preconditionFailure("EVP_Digest(SHA-256) failed: \(OpenSSLError.drain(after: "EVP_Digest"))")
        }
    }
}
