#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// Signs compact JWS with ES256, the way the App Store signs its data and App Store Connect expects
/// tokens.
///
/// Used by the App Store Server API bearer token, the offer signature creators, the test fakes and
/// the simulated App Store (which signs with a ``TestPKI`` exactly in Apple's format).
public struct JWSSigner: Sendable {
    /// The signing key.
    public let key: P256PrivateKey
    /// The `kid` header, if any.
    public let keyId: String?
    /// The `typ` header, if any.
    public let type: String?
    /// The `x5c` header: DER certificates, leaf first, encoded as standard base64.
    public let certificateChain: [String]?

    /// Creates a signer.
    ///
    /// - Parameters:
    ///   - key: The P-256 signing key.
    ///   - keyId: The `kid` header value, or `nil` to omit it.
    ///   - type: The `typ` header value, or `nil` to omit it.
    ///   - certificateChain: The `x5c` header value, or `nil` to omit it.
    public init(key: P256PrivateKey, keyId: String? = nil, type: String? = nil, certificateChain: [String]? = nil) {
        self.key = key
        self.keyId = keyId
        self.type = type
        self.certificateChain = certificateChain
    }

    private struct Header: Encodable {
        let alg = "ES256"
        let kid: String?
        let typ: String?
        let x5c: [String]?
    }

    /// Signs a payload that is already JSON.
    ///
    /// - Parameter payload: The payload bytes (normally a JSON object).
    /// - Returns: The compact JWS: `header.payload.signature`.
    /// - Throws: ``IAPError`` if signing fails.
    public func sign(payload: Data) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header: Data
        do {
            header = try encoder.encode(Header(kid: keyId, typ: type, x5c: certificateChain))
        } catch {
            throw IAPError.wrapping(error, as: .internalError, "encoding the JWS header failed")
        }
        let signingInput = Base64.encodeURL(header) + "." + Base64.encodeURL(payload)
        let signature = try key.signature(for: Array(signingInput.utf8))
        return signingInput + "." + Base64.encodeURL(signature)
    }

    /// Encodes a value with Apple's JSON conventions and signs it.
    ///
    /// - Parameter payload: The value to encode as the payload.
    /// - Returns: The compact JWS.
    /// - Throws: ``IAPError`` if encoding or signing fails.
    public func sign(_ payload: some Encodable) throws -> String {
        let data: Data
        do {
            data = try AppStoreJSON.makeEncoder().encode(payload)
        } catch {
            throw IAPError.wrapping(error, as: .internalError, "encoding the JWS payload failed")
        }
        return try sign(payload: data)
    }
}
