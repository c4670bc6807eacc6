internal import CIAPOpenSSL
import IAPCore

/// OpenSSL's own P-256 verification speed in this process, the yardstick for swift-iap's verification benchmark.
package enum ECDSABaseline {
    /// Measures how many P-256 ECDSA verifications per second OpenSSL performs on the calling thread.
    ///
    /// The measurement follows `openssl speed ecdsap256`: one freshly generated key, one precomputed SHA-256
    /// digest and its DER signature, and `EVP_PKEY_verify` called in a loop on a single reused `EVP_PKEY_CTX`. No
    /// hashing, encoding or allocation happens inside the loop, so the figure is an upper bound for any complete
    /// verification built on the same library. Time is read from `ContinuousClock`.
    ///
    /// - Parameter minimumDuration: How long to keep verifying; the loop stops at the first check after this much
    ///   time has passed (checks happen every 64 verifications).
    /// - Returns: Verifications per second, or 0 when OpenSSL cannot set up the measurement or a verification
    ///   fails.
    package static func p256VerificationsPerSecond(minimumDuration: Duration) -> Double {
        guard let privateKey = try? P256PrivateKey() else {
            return 0
        }
        let digest = SHA256Digest.hash(Array("swift-iap ECDSA baseline".utf8))
        ERR_clear_error()
        guard let signContext = EVP_PKEY_CTX_new_from_pkey(nil, privateKey.pkey, nil) else {
            ERR_clear_error()
            return 0
        }
        defer { EVP_PKEY_CTX_free(signContext) }
        var signature = [UInt8](repeating: 0, count: ECDSASignatureEncoding.maximumDERByteCount)
        var signatureLength = signature.count
        guard EVP_PKEY_sign_init(signContext) == 1,
            EVP_PKEY_sign(signContext, &signature, &signatureLength, digest, digest.count) == 1
        else {
            ERR_clear_error()
            return 0
        }
        let publicKey = privateKey.publicKey
        guard let verifyContext = EVP_PKEY_CTX_new_from_pkey(nil, publicKey.pkey, nil) else {
            ERR_clear_error()
            return 0
        }
        defer { EVP_PKEY_CTX_free(verifyContext) }
        guard EVP_PKEY_verify_init(verifyContext) == 1 else {
            ERR_clear_error()
            return 0
        }

        let clock = ContinuousClock()
        let start = clock.now
        var count = 0
        var elapsed = Duration.zero
        while elapsed < minimumDuration || count == 0 {
            for _ in 0..<64 {
                guard EVP_PKEY_verify(verifyContext, signature, signatureLength, digest, digest.count) == 1 else {
                    ERR_clear_error()
                    return 0
                }
            }
            count += 64
            elapsed = clock.now - start
        }
        let seconds = elapsed.timeInterval
        return seconds > 0 ? Double(count) / seconds : 0
    }
}
