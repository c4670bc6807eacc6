internal import CIAPOpenSSL

/// Algorithms fetched from the default provider once per process.
///
/// OpenSSL 3.0 looks an algorithm up in its method store every time it is named implicitly (`EVP_sha256()`,
/// `EVP_DigestVerifyInit` with a name), which costs a lock and a hash lookup per call. An explicitly fetched
/// `EVP_MD` skips that. The holder is immutable after initialisation, and `openssl-threads(7)` allows any number
/// of threads to use one `EVP_MD` at once, so it is `@unchecked Sendable`.
final class OpenSSLAlgorithms: @unchecked Sendable {
    /// The process-wide instance.
    static let shared = OpenSSLAlgorithms()

    /// SHA-256 (`const EVP_MD *`).
    let sha256: OpaquePointer
    private let ownsSHA256: Bool

    private init() {
        if let fetched = EVP_MD_fetch(nil, "SHA256", nil) {
            sha256 = fetched
            ownsSHA256 = true
        } else {
            // The default provider is always available to libcrypto; fall back to the implicit fetch anyway.
            ERR_clear_error()
            sha256 = EVP_sha256()
            ownsSHA256 = false
        }
    }

    deinit {
        if ownsSHA256 {
            EVP_MD_free(sha256)
        }
    }
}
