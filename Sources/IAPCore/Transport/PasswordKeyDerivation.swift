/// A slow, salted key derivation for passwords (PBKDF2-HMAC-SHA256): what an operator's password is kept as, so that
/// a stolen operators file does not give the passwords away cheaply. `PBKDF2HMACSHA256` of `IAPCrypto` (OpenSSL) is
/// the one swift-iap ships; a target that must not link OpenSSL takes it as a value, as it takes a
/// ``MessageAuthenticator``.
///
/// ## Implementation requirements
/// - Deterministic: the same password, salt and iteration count always give the same bytes.
/// - Safe to call from many tasks at once; it may take a noticeable time (that is the point), so call it off any
///   latency-sensitive path.
public protocol PasswordKeyDerivation: Sendable {
    /// The name of the derivation as it is written beside each hash, such as `pbkdf2-sha256`.
    var name: String { get }

    /// Derives `length` bytes from a password.
    ///
    /// - Parameters:
    ///   - password: The password's bytes.
    ///   - salt: A random salt of the password's own.
    ///   - iterations: The work factor.
    ///   - length: The number of bytes to derive.
    /// - Returns: The derived bytes.
    /// - Throws: ``IAPError`` `invalidArgument` for an iteration count or a length it refuses.
    func derive(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) throws(IAPError) -> [UInt8]
}
