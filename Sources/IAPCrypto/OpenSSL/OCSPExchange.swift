#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import CIAPOpenSSL
import IAPCore

/// One certificate's OCSP question to its issuer, and the reading of the answer (RFC 6960), on OpenSSL.
final class OCSPQuestion: @unchecked Sendable {
    /// The OCSP `CertID` of the certificate (SHA-1 of the issuer's name and key, and the serial number).
    private let certificateId: OpaquePointer
    let subject: X509Certificate
    let issuer: X509Certificate

    init(subject: X509Certificate, issuer: X509Certificate) throws {
        guard let id = OCSP_cert_to_id(nil, subject.handle, issuer.handle) else {
            throw IAPError(.certificateInvalid, "cannot make the OCSP id of \(subject.subject)")
        }
        certificateId = id
        self.subject = subject
        self.issuer = issuer
    }

    deinit {
        OCSP_CERTID_free(certificateId)
    }

    /// The DER of an OCSP request for the certificate (no nonce: Apple's responders answer from a cache, and the
    /// answer's `thisUpdate` and `nextUpdate` say how fresh it is).
    func requestDER() throws -> [UInt8] {
        guard let request = OCSP_REQUEST_new() else {
            throw IAPError(.internalError, "cannot allocate an OCSP request")
        }
        defer { OCSP_REQUEST_free(request) }
        guard let id = OCSP_CERTID_dup(certificateId), OCSP_request_add0_id(request, id) != nil else {
            throw IAPError(.internalError, "cannot add the certificate to the OCSP request")
        }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_OCSP_REQUEST(request, &out)
        guard length > 0, let out else {
            throw IAPError(.internalError, "cannot encode the OCSP request")
        }
        defer { ciap_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// What the responder said of the certificate.
    struct Answer: Sendable, Hashable {
        enum Status: Sendable, Hashable {
            case good
            case revoked(at: Date?)
            case unknown
        }

        var status: Status
        var thisUpdate: Date
        var nextUpdate: Date?
    }

    /// Reads an OCSP response: successful, signed by the issuer (or a responder it delegated to) under a trusted
    /// root, about this certificate.
    ///
    /// - Parameters:
    ///   - der: The response body.
    ///   - roots: The trusted roots.
    /// - Throws: ``IAPError`` `certificateChainInvalid` for a response that is not successful, does not verify, or
    ///   says nothing of the certificate.
    func read(_ der: [UInt8], roots: [X509Certificate]) throws -> Answer {
        let response: OpaquePointer = try der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let parsed = d2i_OCSP_RESPONSE(nil, &cursor, buffer.count) else {
                throw Self.failure("the OCSP response is not DER")
            }
            return parsed
        }
        defer { OCSP_RESPONSE_free(response) }
        let status = OCSP_response_status(response)
        guard status == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            throw Self.failure("the OCSP responder answered status \(status)")
        }
        guard let basic = OCSP_response_get1_basic(response) else {
            throw Self.failure("the OCSP response has no basic response")
        }
        defer { OCSP_BASICRESP_free(basic) }
        guard let store = X509_STORE_new() else {
            throw IAPError(.internalError, "cannot allocate a certificate store")
        }
        defer { X509_STORE_free(store) }
        for root in roots {
            X509_STORE_add_cert(store, root.handle)
        }
        guard let issuers = ciap_sk_X509_new_null() else {
            throw IAPError(.internalError, "cannot allocate a certificate stack")
        }
        defer { ciap_sk_X509_free(issuers) }
        _ = ciap_sk_X509_push(issuers, issuer.handle)
        ERR_clear_error()
        guard OCSP_basic_verify(basic, issuers, store, 0) == 1 else {
            throw Self.failure("the OCSP response is not signed by the issuer or a responder it named")
        }
        var certStatus: Int32 = -1
        var reason: Int32 = -1
        var revoked: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        guard
            OCSP_resp_find_status(basic, certificateId, &certStatus, &reason, &revoked, &thisUpdate, &nextUpdate)
                == 1, let thisUpdate, let this = Self.date(thisUpdate)
        else {
            throw Self.failure("the OCSP response says nothing of \(subject.subject)")
        }
        let answer: Answer.Status =
            switch certStatus {
            case V_OCSP_CERTSTATUS_GOOD: .good
            case V_OCSP_CERTSTATUS_REVOKED: .revoked(at: revoked.flatMap(Self.date))
            default: .unknown
            }
        return Answer(status: answer, thisUpdate: this, nextUpdate: nextUpdate.flatMap(Self.date))
    }

    /// The responder URL of the subject's Authority Information Access, if it names one.
    var responderURL: URL? { Self.responderURL(of: subject) }

    /// The responder URL of a certificate's Authority Information Access, if it names one.
    static func responderURL(of certificate: X509Certificate) -> URL? {
        guard let text = ciap_ocsp_url(certificate.handle) else { return nil }
        defer { ciap_OPENSSL_free(text) }
        return URL(string: String(cString: text))
    }

    private static func failure(_ message: String) -> IAPError {
        ERR_clear_error()
        return IAPError(.certificateChainInvalid, message)
    }

    /// An `ASN1_GENERALIZEDTIME` as a date.
    private static func date(_ time: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>) -> Date? {
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
