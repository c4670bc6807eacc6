internal import CIAPOpenSSL
import IAPCore

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A NIST P-256 private key that makes ES256 signatures.
///
/// Load an App Store Connect key (`AuthKey_XXXXXXXXXX.p8`, a PKCS#8 `PRIVATE KEY`) with
/// ``init(pemRepresentation:)``, or create a fresh key with ``init()`` for tests.
///
/// The key owns an OpenSSL `EVP_PKEY` and never changes it after `init`. `openssl-threads(7)` allows any number of
/// threads to use an `EVP_PKEY` at once as long as none modifies it, and every signature is made on its own
/// `EVP_MD_CTX`, so the class is `@unchecked Sendable`.
public final class P256PrivateKey: @unchecked Sendable {
    /// The `EVP_PKEY *`, owned.
    let pkey: OpaquePointer
    /// The public half.
    public let publicKey: P256PublicKey
    /// The PKCS#8 `PrivateKeyInfo` DER encoding.
    public let derRepresentation: [UInt8]

    /// The PKCS#8 PEM encoding (`-----BEGIN PRIVATE KEY-----`), the format of an App Store Connect `.p8` file.
    public var pemRepresentation: String {
        PEMBlock.encode(label: "PRIVATE KEY", der: derRepresentation)
    }

    /// Generates a new random P-256 key.
    ///
    /// - Throws: ``IAPError`` `.internalError` when OpenSSL cannot generate the key.
    public convenience init() throws {
        ERR_clear_error()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw IAPError.openSSL(
                .internalError,
                "Cannot create a key generation context",
                operation: "EVP_PKEY_CTX_new_from_name"
            )
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else {
            throw IAPError.openSSL(.internalError, "Cannot start key generation", operation: "EVP_PKEY_keygen_init")
        }
        guard EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 else {
            throw IAPError.openSSL(
                .internalError,
                "Cannot select the P-256 curve",
                operation: "EVP_PKEY_CTX_set_group_name"
            )
        }
        var pkey: OpaquePointer?
        guard EVP_PKEY_generate(context, &pkey) == 1, let pkey else {
            throw IAPError.openSSL(.internalError, "Cannot generate a P-256 key", operation: "EVP_PKEY_generate")
        }
        try self.init(adopting: pkey)
    }

    /// Loads a key from PEM.
    ///
    /// Accepts a PKCS#8 `PRIVATE KEY` block (App Store Connect `.p8` files) or a SEC1 `EC PRIVATE KEY` block
    /// (`openssl ecparam -genkey` output; a leading `EC PARAMETERS` block is skipped). Encrypted keys are not
    /// supported.
    ///
    /// - Parameter pemRepresentation: The PEM text.
    /// - Throws: ``IAPError`` `.invalidKey` when there is no such block, the block is encrypted or malformed, or the
    ///   key is not on P-256.
    public convenience init(pemRepresentation: String) throws {
        let document = PEMBlock.read(pemRepresentation)
        guard let block = document.blocks.first(where: { $0.label != "EC PARAMETERS" }) else {
            throw IAPError(.invalidKey, document.emptyReason, underlying: document.failure)
        }
        guard !block.hasHeaders else {
            throw IAPError(.invalidKey, "Encrypted PEM private keys are not supported")
        }
        switch block.label {
        case "PRIVATE KEY":
            try self.init(derRepresentation: block.der)
        case "EC PRIVATE KEY":
            try self.init(adopting: Self.parseSEC1(block.der))
        default:
            throw IAPError(
                .invalidKey,
                "Expected a PEM \"PRIVATE KEY\" or \"EC PRIVATE KEY\" block, found \"\(block.label)\""
            )
        }
    }

    /// Loads a key from a PKCS#8 `PrivateKeyInfo` DER encoding.
    ///
    /// - Parameter derRepresentation: The DER bytes, with nothing after them.
    /// - Throws: ``IAPError`` `.invalidKey` when the bytes are not one unencrypted PKCS#8 P-256 key.
    public convenience init(derRepresentation: [UInt8]) throws {
        try self.init(adopting: Self.parsePKCS8(derRepresentation))
    }

    /// Takes ownership of an `EVP_PKEY`, which is freed if it is not a P-256 private key.
    ///
    /// - Parameter pkey: An owned `EVP_PKEY *`.
    /// - Throws: ``IAPError`` `.invalidKey` when the key is not an EC P-256 key or cannot be encoded.
    init(adopting pkey: OpaquePointer) throws {
        guard P256PublicKey.isP256(pkey) else {
            EVP_PKEY_free(pkey)
            throw IAPError(.invalidKey, "The key is not an EC P-256 key")
        }
        do {
            self.derRepresentation = try Self.pkcs8(of: pkey)
            guard let spki = P256PublicKey.subjectPublicKeyInfo(of: pkey) else {
                throw IAPError.openSSL(.invalidKey, "Cannot encode the public key", operation: "i2d_PUBKEY")
            }
            self.publicKey = try P256PublicKey(derRepresentation: spki)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        self.pkey = pkey
    }

    deinit {
        EVP_PKEY_free(pkey)
    }

    /// Signs a message with ES256 and returns the JOSE raw signature.
    ///
    /// The message is hashed with SHA-256 and signed with ECDSA using fresh randomness for each call.
    ///
    /// - Parameter message: The bytes to sign (for a JWS, the ASCII `header.payload`).
    /// - Returns: 64 bytes: `r` then `s`, each a 32-byte big-endian integer.
    /// - Throws: ``IAPError`` `.internalError` when OpenSSL fails to sign.
    public func signature<D: ContiguousBytes>(for message: D) throws -> [UInt8] {
        let der = try derSignature(for: message)
        guard let raw = ECDSASignatureEncoding.raw(fromDER: der) else {
            throw IAPError(.internalError, "OpenSSL produced a signature that is not a P-256 ECDSA-Sig-Value")
        }
        return raw
    }

    /// Signs a message with ECDSA over SHA-256 and returns the DER signature.
    ///
    /// This is the form Apple's promotional-offer (V1) signature uses, base64-encoded.
    ///
    /// - Parameter message: The bytes to sign.
    /// - Returns: A DER `ECDSA-Sig-Value`.
    /// - Throws: ``IAPError`` `.internalError` when OpenSSL fails to sign.
    public func derSignature<D: ContiguousBytes>(for message: D) throws -> [UInt8] {
        ERR_clear_error()
        guard let context = EVP_MD_CTX_new() else {
            throw IAPError.openSSL(.internalError, "Cannot create a signing context", operation: "EVP_MD_CTX_new")
        }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, OpenSSLAlgorithms.shared.sha256, nil, pkey) == 1 else {
            throw IAPError.openSSL(.internalError, "Cannot start signing", operation: "EVP_DigestSignInit")
        }
        return try message.withUnsafeBytes { buffer -> [UInt8] in
            var empty: UInt8 = 0
            return try withUnsafeMutablePointer(to: &empty) { emptyPointer -> [UInt8] in
                let data = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(emptyPointer)
                var length = 0
                guard EVP_DigestSign(context, nil, &length, data, buffer.count) == 1, length > 0 else {
                    throw IAPError.openSSL(.internalError, "Cannot size the signature", operation: "EVP_DigestSign")
                }
                var signature = [UInt8](repeating: 0, count: length)
                guard EVP_DigestSign(context, &signature, &length, data, buffer.count) == 1 else {
                    throw IAPError.openSSL(.internalError, "Cannot sign", operation: "EVP_DigestSign")
                }
                return Array(signature.prefix(length))
            }
        }
    }

    private static func parsePKCS8(_ der: [UInt8]) throws -> OpaquePointer {
        ERR_clear_error()
        return try der.withUnsafeBufferPointer { buffer -> OpaquePointer in
            guard let base = buffer.baseAddress else {
                throw IAPError(.invalidKey, "The private key DER is empty")
            }
            var cursor: UnsafePointer<UInt8>? = base
            guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count) else {
                throw IAPError.openSSL(
                    .invalidKey,
                    "Cannot parse the PKCS#8 private key",
                    operation: "d2i_PKCS8_PRIV_KEY_INFO"
                )
            }
            defer { PKCS8_PRIV_KEY_INFO_free(info) }
            guard cursor == base + buffer.count else {
                throw IAPError(.invalidKey, "The PKCS#8 private key is followed by trailing bytes")
            }
            guard let pkey = EVP_PKCS82PKEY(info) else {
                throw IAPError.openSSL(.invalidKey, "Cannot decode the PKCS#8 private key", operation: "EVP_PKCS82PKEY")
            }
            return pkey
        }
    }

    private static func parseSEC1(_ der: [UInt8]) throws -> OpaquePointer {
        ERR_clear_error()
        return try der.withUnsafeBufferPointer { buffer -> OpaquePointer in
            guard let base = buffer.baseAddress else {
                throw IAPError(.invalidKey, "The EC private key is empty")
            }
            var cursor: UnsafePointer<UInt8>? = base
            guard let pkey = d2i_PrivateKey(EVP_PKEY_EC, nil, &cursor, buffer.count) else {
                throw IAPError.openSSL(.invalidKey, "Cannot parse the SEC1 EC private key", operation: "d2i_PrivateKey")
            }
            guard cursor == base + buffer.count else {
                EVP_PKEY_free(pkey)
                throw IAPError(.invalidKey, "The SEC1 EC private key is followed by trailing bytes")
            }
            return pkey
        }
    }

    private static func pkcs8(of pkey: OpaquePointer) throws -> [UInt8] {
        ERR_clear_error()
        guard let info = EVP_PKEY2PKCS8(pkey) else {
            throw IAPError.openSSL(.invalidKey, "Cannot encode the private key as PKCS#8", operation: "EVP_PKEY2PKCS8")
        }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        guard let der = DEREncoding.encode({ i2d_PKCS8_PRIV_KEY_INFO(info, $0) }) else {
            throw IAPError.openSSL(.invalidKey, "Cannot encode the private key", operation: "i2d_PKCS8_PRIV_KEY_INFO")
        }
        return der
    }
}
