internal import CIAPOpenSSL
import IAPCore

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A fixed set of trusted root certificates that validates certificate chains with OpenSSL.
///
/// Only the configured roots are trust anchors. Intermediates supplied with a chain (such as `x5c[1]` of an App
/// Store JWS) help build the path but are never trusted on their own, and a root that arrives with the chain
/// (`x5c[2]`) is ignored unless it is one of the configured roots. Validation uses RFC 5280 path validation as
/// implemented by `X509_verify_cert`, at an instant the caller chooses.
///
/// The store holds only immutable ``X509Certificate`` values; each validation builds its own `X509_STORE` and
/// `X509_STORE_CTX` and frees them before returning, so one store can be used from any number of tasks at once.
public final class X509TrustStore: Sendable {
    /// The trusted roots.
    public let roots: [X509Certificate]

    /// Creates a trust store.
    ///
    /// - Parameter roots: The trust anchors, such as Apple Root CA - G3.
    /// - Throws: ``IAPError`` `.invalidConfiguration` when `roots` is empty.
    public init(roots: [X509Certificate]) throws {
        guard !roots.isEmpty else {
            throw IAPError(.invalidConfiguration, "A trust store needs at least one root certificate")
        }
        self.roots = roots
    }

    /// Validates a certificate chain at a given instant.
    ///
    /// Builds a path from `leaf` through `intermediates` to one of the configured roots and checks every signature,
    /// validity period and CA constraint at `instant` (`X509_VERIFY_PARAM_set_time`). Partial chains are never
    /// accepted: the path must end in a configured root.
    ///
    /// - Parameters:
    ///   - leaf: The end-entity certificate.
    ///   - intermediates: Untrusted certificates that may be used to build the path, in any order.
    ///   - instant: The validation time; for App Store data in offline mode this is the payload's `signedDate`.
    ///   - strict: Whether to turn on OpenSSL's `X509_V_FLAG_X509_STRICT` RFC 5280 checks (critical
    ///     basicConstraints on CAs, key identifiers, ...). Apple's production chain passes them.
    /// - Returns: The chain that was built, leaf first and the trusted root last.
    /// - Throws: ``IAPError`` `.certificateExpired` when a certificate is outside its validity period at `instant`;
    ///   `.untrustedRoot` when the path does not reach a configured root; `.certificateChainInvalid` for any other
    ///   failure (bad signature, a non-CA issuer, path length, an unhandled critical extension, ...);
    ///   `.invalidArgument` when `instant` cannot be represented as a `time_t`.
    public func validate(
        leaf: X509Certificate,
        intermediates: [X509Certificate],
        at instant: Date,
        strict: Bool = false
    ) throws -> [X509Certificate] {
        let seconds = instant.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, let validationTime = time_t(exactly: seconds) else {
            throw IAPError(.invalidArgument, "The validation instant \(instant) is out of range")
        }
        return try withExtendedLifetime((leaf, intermediates, roots)) {
            try validate(leaf: leaf, intermediates: intermediates, time: validationTime, strict: strict)
        }
    }

    private func validate(
        leaf: X509Certificate,
        intermediates: [X509Certificate],
        time: time_t,
        strict: Bool
    ) throws -> [X509Certificate] {
        ERR_clear_error()
        guard let store = X509_STORE_new() else {
            throw IAPError.openSSL(.internalError, "Cannot create a certificate store", operation: "X509_STORE_new")
        }
        defer { X509_STORE_free(store) }
        for root in roots {
            // X509_STORE_add_cert takes its own reference.
            guard X509_STORE_add_cert(store, root.handle) == 1 else {
                throw IAPError.openSSL(
                    .internalError,
                    "Cannot add a root certificate",
                    operation: "X509_STORE_add_cert"
                )
            }
        }
        guard let untrusted = ciap_sk_X509_new_null() else {
            throw IAPError.openSSL(.internalError, "Cannot create a certificate stack", operation: "sk_X509_new_null")
        }
        // sk_X509_free frees the stack only; the certificates stay owned by their X509Certificate objects.
        defer { ciap_sk_X509_free(untrusted) }
        for intermediate in intermediates {
            guard ciap_sk_X509_push(untrusted, intermediate.handle) > 0 else {
                throw IAPError.openSSL(.internalError, "Cannot collect the intermediates", operation: "sk_X509_push")
            }
        }
        guard let context = X509_STORE_CTX_new() else {
            throw IAPError.openSSL(
                .internalError,
                "Cannot create a validation context",
                operation: "X509_STORE_CTX_new"
            )
        }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.handle, untrusted) == 1 else {
            throw IAPError.openSSL(.internalError, "Cannot start validation", operation: "X509_STORE_CTX_init")
        }
        guard let parameters = X509_STORE_CTX_get0_param(context) else {
            throw IAPError(.internalError, "The validation context has no parameters")
        }
        X509_VERIFY_PARAM_set_time(parameters, time)
        if strict {
            X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_X509_STRICT))
        }

        guard X509_verify_cert(context) == 1 else {
            throw Self.validationError(context)
        }
        guard let chain = X509_STORE_CTX_get0_chain(context) else {
            throw IAPError(.internalError, "Validation succeeded but OpenSSL returned no chain")
        }
        let known = [leaf] + intermediates + roots
        var result: [X509Certificate] = []
        for index in 0..<ciap_sk_X509_num(chain) {
            guard let certificate = ciap_sk_X509_value(chain, index) else {
                throw IAPError(.internalError, "The validated chain has a hole at depth \(index)")
            }
            if let match = known.first(where: { $0.handle == certificate }) {
                result.append(match)
            } else {
                result.append(try Self.copy(certificate))
            }
        }
        return result
    }

    /// Turns a failed `X509_verify_cert` into an ``IAPError`` with a precise code.
    private static func validationError(_ context: OpaquePointer) -> IAPError {
        let code = X509_STORE_CTX_get_error(context)
        let depth = X509_STORE_CTX_get_error_depth(context)
        let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
        var subject = "unknown certificate"
        if let current = X509_STORE_CTX_get_current_cert(context), let name = X509_get_subject_name(current) {
            subject = X509Certificate.oneLine(name)
        }
        let details = OpenSSLError.drain(after: "X509_verify_cert")
        let underlying = OpenSSLError(
            operation: "X509_verify_cert",
            reasons: ["X509_V_ERR \(code): \(reason)"] + details.reasons
        )
        return IAPError(errorCode(for: code), "\(reason) at depth \(depth) (\(subject))", underlying: underlying)
    }

    /// Maps an `X509_V_ERR_*` value to an ``IAPError/Code``.
    ///
    /// - Parameter verifyError: The value of `X509_STORE_CTX_get_error`.
    /// - Returns: `.certificateExpired`, `.untrustedRoot` or `.certificateChainInvalid`.
    static func errorCode(for verifyError: Int32) -> IAPError.Code {
        switch verifyError {
        case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID:
            return .certificateExpired
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
            X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
            X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
            X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            return .untrustedRoot
        default:
            return .certificateChainInvalid
        }
    }

    /// Wraps a certificate OpenSSL put in the chain that is none of the inputs (not expected to happen).
    private static func copy(_ certificate: OpaquePointer) throws -> X509Certificate {
        guard let der = DEREncoding.encode({ i2d_X509(certificate, $0) }) else {
            throw IAPError.openSSL(.internalError, "Cannot encode a chain certificate", operation: "i2d_X509")
        }
        return try X509Certificate(derEncoded: der)
    }
}
