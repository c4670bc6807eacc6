internal import CIAPOpenSSL
public import IAPCore

/// HMAC-SHA256 (RFC 2104) computed by OpenSSL: signs webhooks and HS256 tokens.
///
/// ```swift
/// let hmac = try HMACSHA256(key: Array(secret.utf8))
/// let code = hmac.authenticationCode(for: Array("1767225600.{}".utf8))
/// ```
public struct HMACSHA256: MessageAuthenticator {
    /// The length of an HMAC-SHA256 code in bytes.
    public static let byteCount = 32

    private let key: [UInt8]

    /// Creates an authenticator with a secret key.
    ///
    /// - Parameter key: The secret; at least 16 bytes (RFC 2104 advises no less than the hash's output length, 32).
    /// - Throws: ``IAPError`` `invalidKey` for a key shorter than 16 bytes.
    public init(key: [UInt8]) throws {
        guard key.count >= 16 else {
            throw IAPError(.invalidKey, "an HMAC key must be at least 16 bytes; this one has \(key.count)")
        }
        self.key = key
    }

    public func authenticationCode(for message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Self.byteCount)
        var written = 0
        // EVP_Q_mac accepts a NULL data pointer only with a zero length; give it a valid one either way.
        var empty: UInt8 = 0
        let result = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                withUnsafeMutablePointer(to: &empty) { emptyPointer in
                    output.withUnsafeMutableBytes { outputBytes in
                        EVP_Q_mac(
                            nil,
                            "HMAC",
                            nil,
                            "SHA256",
                            nil,
                            keyBytes.baseAddress,
                            keyBytes.count,
                            messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                                ?? UnsafePointer(emptyPointer),
                            messageBytes.count,
                            outputBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                            outputBytes.count,
                            &written
                        )
                    }
                }
            }
        }
        // EVP_Q_mac fails only when OpenSSL cannot allocate memory or lacks SHA-256, neither of which a process that
        // verified anything survives; a wrong code must never be returned.
        guard result != nil, written == Self.byteCount else {
            preconditionFailure("EVP_Q_mac(HMAC-SHA256) failed: \(OpenSSLError.drain(after: "EVP_Q_mac"))")
        }
        return output
    }

    public func isValid(_ code: [UInt8], for message: [UInt8]) -> Bool {
        guard code.count == Self.byteCount else { return false }
        let expected = authenticationCode(for: message)
        return expected.withUnsafeBytes { expectedBytes in
            code.withUnsafeBytes { codeBytes in
                CRYPTO_memcmp(expectedBytes.baseAddress, codeBytes.baseAddress, Self.byteCount) == 0
            }
        }
    }
}
