/// Computes a keyed message authentication code: what signs a webhook so its receiver knows it came from this
/// server and was not changed.
///
/// `HMACSHA256` in `IAPCrypto` is the implementation; the protocol lives here so that code which only needs to sign
/// (``FulfillmentHook`` implementations in other modules) does not link a crypto library.
///
/// ## Implementation requirements
/// - ``authenticationCode(for:)`` is deterministic for a key and a message, and safe to call from many tasks.
/// - ``isValid(_:for:)`` compares in constant time.
public protocol MessageAuthenticator: Sendable {
    /// The authentication code of `message` under the authenticator's key.
    ///
    /// - Parameter message: The bytes to authenticate.
    /// - Returns: The code (32 bytes for HMAC-SHA256).
    func authenticationCode(for message: [UInt8]) -> [UInt8]

    /// Whether `code` is the authentication code of `message`, compared in constant time.
    ///
    /// - Parameters:
    ///   - code: The code that came with the message.
    ///   - message: The bytes it claims to authenticate.
    /// - Returns: `true` only when the code matches.
    func isValid(_ code: [UInt8], for message: [UInt8]) -> Bool
}
