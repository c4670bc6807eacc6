internal import CIAPOpenSSL
import IAPCore

/// A NIST P-256 public key that verifies ES256 signatures.
///
/// The key owns an OpenSSL `EVP_PKEY` and never changes it after `init`. `openssl-threads(7)` allows any number of
/// threads to use an `EVP_PKEY` at once as long as none modifies it, and each verification runs on its own
/// `EVP_PKEY_CTX` (taken from a small pool, never shared by two threads at the same time), so the class is
/// `@unchecked Sendable`.
///
/// Verification hashes the message with SHA-256 and checks the ECDSA signature with `EVP_PKEY_verify` on a
/// context that was initialised once and is reused, which avoids OpenSSL 3.0's per-call algorithm fetch in
/// `EVP_DigestVerifyInit`.
public final class P256PublicKey: @unchecked Sendable {
    /// The `EVP_PKEY *`, owned.
    let pkey: OpaquePointer
    /// The SubjectPublicKeyInfo DER encoding (computed on demand: OpenSSL 3.0's encoders are slow, and the
    /// verification path never needs it).
    public var derRepresentation: [UInt8] {
        Self.subjectPublicKeyInfo(of: pkey) ?? []
    }
    /// Verification contexts ready for `EVP_PKEY_verify`; each is used by one thread at a time.
    private let verifyContexts = LockedValue<[VerifyContext]>([])
    /// How many idle contexts the pool keeps.
    private static let maximumPooledContexts = 16

    /// Creates a key from a DER SubjectPublicKeyInfo.
    ///
    /// - Parameter derRepresentation: The DER `SubjectPublicKeyInfo`, with nothing after it.
    /// - Throws: ``IAPError`` `.invalidKey` when the bytes are not one SubjectPublicKeyInfo of a P-256 key.
    public convenience init(derRepresentation: [UInt8]) throws {
        ERR_clear_error()
        guard !derRepresentation.isEmpty else {
            throw IAPError(.invalidKey, "The public key DER is empty")
        }
        let pkey = try derRepresentation.withUnsafeBufferPointer { buffer -> OpaquePointer in
            guard let base = buffer.baseAddress else {
                throw IAPError(.invalidKey, "The public key DER is empty")
            }
            var cursor: UnsafePointer<UInt8>? = base
            guard let pkey = d2i_PUBKEY(nil, &cursor, buffer.count) else {
                throw IAPError.openSSL(.invalidKey, "Cannot parse the SubjectPublicKeyInfo", operation: "d2i_PUBKEY")
            }
            guard cursor == base + buffer.count else {
                EVP_PKEY_free(pkey)
                throw IAPError(.invalidKey, "The SubjectPublicKeyInfo is followed by trailing bytes")
            }
            return pkey
        }
        try self.init(adopting: pkey)
    }

    /// Creates a key from a PEM `PUBLIC KEY` block (a SubjectPublicKeyInfo).
    ///
    /// - Parameter pemRepresentation: PEM text whose first block is `-----BEGIN PUBLIC KEY-----`.
    /// - Throws: ``IAPError`` `.invalidKey` when there is no such block or the key is not P-256.
    public convenience init(pemRepresentation: String) throws {
        let document = PEMBlock.read(pemRepresentation)
        guard let block = document.blocks.first else {
            throw IAPError(.invalidKey, document.emptyReason, underlying: document.failure)
        }
        guard block.label == "PUBLIC KEY", !block.hasHeaders else {
            throw IAPError(.invalidKey, "Expected a PEM \"PUBLIC KEY\" block, found \"\(block.label)\"")
        }
        try self.init(derRepresentation: block.der)
    }

    /// Takes ownership of an `EVP_PKEY`, which is freed if the key is not P-256.
    ///
    /// - Parameter pkey: An owned `EVP_PKEY *`.
    /// - Throws: ``IAPError`` `.invalidKey` when the key is not an EC P-256 key.
    init(adopting pkey: OpaquePointer) throws {
        guard Self.isP256(pkey) else {
            EVP_PKEY_free(pkey)
            throw IAPError(.invalidKey, "The key is not an EC P-256 key")
        }
        self.pkey = pkey
    }

    deinit {
        EVP_PKEY_free(pkey)
    }

    /// Tells whether a raw ES256 signature is valid for a message.
    ///
    /// The signature is JOSE's raw form: `r` then `s`, each a 32-byte big-endian integer. Signatures with a high
    /// `s` are accepted, as ES256 does not require low-S.
    ///
    /// - Parameters:
    ///   - rawSignature: The 64-byte `r‖s` signature. Any other length, or `r` or `s` equal to zero or not below
    ///     the group order, gives `false`.
    ///   - message: The signed bytes (for a JWS, the ASCII `header.payload`); they are hashed with SHA-256 here.
    /// - Returns: `true` only when the signature verifies.
    public func isValidSignature(_ rawSignature: UnsafeRawBufferPointer, for message: UnsafeRawBufferPointer) -> Bool {
        guard rawSignature.count == ECDSASignatureEncoding.rawByteCount,
            ECDSASignatureEncoding.isValidScalar(UnsafeRawBufferPointer(rebasing: rawSignature[0..<32])),
            ECDSASignatureEncoding.isValidScalar(UnsafeRawBufferPointer(rebasing: rawSignature[32..<64]))
        else {
            return false
        }
        return withUnsafeTemporaryAllocation(byteCount: ECDSASignatureEncoding.maximumDERByteCount, alignment: 1) {
            derBuffer in
            guard let derCount = ECDSASignatureEncoding.writeDER(raw: rawSignature, into: derBuffer) else {
                return false
            }
            return verify(der: UnsafeRawBufferPointer(rebasing: derBuffer[0..<derCount]), message: message)
        }
    }

    /// Tells whether a raw ES256 signature is valid for a message.
    ///
    /// - Parameters:
    ///   - rawSignature: The 64-byte `r‖s` signature.
    ///   - message: The signed bytes.
    /// - Returns: `true` only when the signature verifies.
    public func isValidSignature(_ rawSignature: [UInt8], for message: [UInt8]) -> Bool {
        rawSignature.withUnsafeBytes { signature in
            message.withUnsafeBytes { isValidSignature(signature, for: $0) }
        }
    }

    /// Tells whether a DER ECDSA signature over SHA-256 is valid for a message.
    ///
    /// The DER must be a canonical `ECDSA-Sig-Value` (OpenSSL rejects other encodings), as Apple's
    /// promotional-offer signatures are.
    ///
    /// - Parameters:
    ///   - der: The DER `ECDSA-Sig-Value`.
    ///   - message: The signed bytes; they are hashed with SHA-256 here.
    /// - Returns: `true` only when the signature verifies.
    public func isValidDERSignature(_ der: [UInt8], for message: [UInt8]) -> Bool {
        guard !der.isEmpty, der.count <= ECDSASignatureEncoding.maximumDERByteCount else {
            return false
        }
        return der.withUnsafeBytes { signature in
            message.withUnsafeBytes { verify(der: signature, message: $0) }
        }
    }

    /// Hashes `message` and verifies a DER signature over the digest on a pooled context.
    private func verify(der: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> Bool {
        guard let derBase = der.baseAddress else {
            return false
        }
        return withUnsafeTemporaryAllocation(byteCount: SHA256Digest.byteCount, alignment: 1) { digest in
            SHA256Digest.hash(message, into: digest)
            guard let digestBase = digest.baseAddress, let context = takeVerifyContext() else {
                return false
            }
            ERR_clear_error()
            let status = EVP_PKEY_verify(
                context.handle,
                derBase.assumingMemoryBound(to: UInt8.self),
                der.count,
                digestBase.assumingMemoryBound(to: UInt8.self),
                SHA256Digest.byteCount
            )
            if status == 1 {
                returnVerifyContext(context)
                return true
            }
            // A mismatch (0) leaves reasons on this thread's queue. A negative status is an error inside OpenSSL;
            // the context is then dropped rather than reused.
            ERR_clear_error()
            if status == 0 {
                returnVerifyContext(context)
            }
            return false
        }
    }

    private func takeVerifyContext() -> VerifyContext? {
        if let pooled = verifyContexts.withLock({ $0.popLast() }) {
            return pooled
        }
        return VerifyContext(pkey: pkey)
    }

    private func returnVerifyContext(_ context: VerifyContext) {
        verifyContexts.withLock { contexts in
            if contexts.count < Self.maximumPooledContexts {
                contexts.append(context)
            }
        }
    }

    /// Tells whether an `EVP_PKEY` is an elliptic-curve key on P-256.
    ///
    /// - Parameter pkey: The key to inspect (borrowed).
    /// - Returns: `true` for a P-256 key.
    static func isP256(_ pkey: OpaquePointer) -> Bool {
        guard EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC else {
            return false
        }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pkey, &name, name.count, &length) == 1 else {
            ERR_clear_error()
            return false
        }
        let groupName = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return groupName == "prime256v1" || groupName == "P-256" || groupName == "secp256r1"
    }

    /// Encodes the public half of an `EVP_PKEY` as DER SubjectPublicKeyInfo.
    ///
    /// - Parameter pkey: The key (borrowed).
    /// - Returns: The DER bytes, or `nil` when OpenSSL cannot encode the key (its error queue is left as is).
    static func subjectPublicKeyInfo(of pkey: OpaquePointer) -> [UInt8]? {
        DEREncoding.encode { i2d_PUBKEY(pkey, $0) }
    }
}

/// An `EVP_PKEY_CTX` initialised for `EVP_PKEY_verify`, owned.
///
/// Used by one thread at a time: ``P256PublicKey`` takes it out of its pool under a lock and puts it back after
/// the call. `openssl-threads(7)` allows different threads to use different `EVP_PKEY_CTX` objects over the same
/// key at once; moving a context between threads between uses is fine, so the class is `@unchecked Sendable`.
private final class VerifyContext: @unchecked Sendable {
    let handle: OpaquePointer

    init?(pkey: OpaquePointer) {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else {
            ERR_clear_error()
            return nil
        }
        guard EVP_PKEY_verify_init(context) == 1 else {
            EVP_PKEY_CTX_free(context)
            ERR_clear_error()
            return nil
        }
        handle = context
    }

    deinit {
        EVP_PKEY_CTX_free(handle)
    }
}
