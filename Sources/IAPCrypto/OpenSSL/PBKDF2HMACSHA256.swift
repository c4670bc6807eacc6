import CIAPOpenSSL
public import IAPCore

/// PBKDF2 with HMAC-SHA256 (RFC 8018), by OpenSSL's `PKCS5_PBKDF2_HMAC`: the ``PasswordKeyDerivation`` of the console's
/// operator passwords.
///
/// ```swift
/// let key = try PBKDF2HMACSHA256().derive(password: Array("correct horse".utf8), salt: salt, iterations: 310_000, length: 32)
/// ```
public struct PBKDF2HMACSHA256: PasswordKeyDerivation {
    /// `pbkdf2-sha256`.
    public let name = "pbkdf2-sha256"

    /// Creates the derivation.
    public init() {}

    public func derive(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) throws(IAPError) -> [UInt8] {
        guard (1...100_000_000).contains(iterations) else {
            throw IAPError(.invalidArgument, "PBKDF2 needs 1 to 100000000 iterations, not \(iterations)")
        }
        guard (1...64).contains(length), !salt.isEmpty, salt.count <= 1_024, password.count <= 4_096 else {
            throw IAPError(.invalidArgument, "PBKDF2 derives 1 to 64 bytes from a salt of 1 to 1024 bytes")
        }
        var output = [UInt8](repeating: 0, count: length)
        // OpenSSL accepts an empty password only through a valid pointer.
        let secret = password.isEmpty ? [0] : password
        let result = secret.withUnsafeBufferPointer { passwordBytes in
            salt.withUnsafeBufferPointer { saltBytes in
                output.withUnsafeMutableBufferPointer { outputBytes -> Int32 in
                    guard let base = passwordBytes.baseAddress else { return 0 }
                    return base.withMemoryRebound(to: CChar.self, capacity: secret.count) { text in
                        PKCS5_PBKDF2_HMAC(
                            text,
                            Int32(password.count),
                            saltBytes.baseAddress,
                            Int32(salt.count),
                            Int32(iterations),
                            EVP_sha256(),
                            Int32(length),
                            outputBytes.baseAddress
                        )
                    }
                }
            }
        }
        guard result == 1 else {
            throw IAPError(.internalError, "PBKDF2 failed in OpenSSL")
        }
        return output
    }
}
