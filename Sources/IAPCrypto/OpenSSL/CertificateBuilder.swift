internal import CIAPOpenSSL
import IAPCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Builds and signs X.509 v3 certificates with OpenSSL, for ``TestPKI``.
enum CertificateBuilder {
    /// An extension to put in a certificate.
    enum Extension {
        /// basicConstraints in OpenSSL's configuration syntax, such as `"critical,CA:TRUE,pathlen:0"`.
        case basicConstraints(String)
        /// keyUsage in OpenSSL's configuration syntax, such as `"critical,digitalSignature"`.
        case keyUsage(String)
        /// subjectKeyIdentifier, the SHA-1 hash of the subject public key.
        case subjectKeyIdentifier
        /// authorityKeyIdentifier, the issuer's subject key identifier.
        case authorityKeyIdentifier
        /// A non-critical extension with this OID whose value is DER NULL (`05 00`), like Apple's markers.
        case marker(String)
    }

    /// Creates, signs and parses one certificate.
    ///
    /// - Parameters:
    ///   - subject: The subject name's attributes in order, such as `[("C", "US"), ("CN", "Leaf")]`.
    ///   - subjectKey: The key the certificate certifies.
    ///   - issuer: The issuing certificate, or `nil` for a self-signed certificate.
    ///   - issuerKey: The key that signs (the subject's own for a self-signed certificate).
    ///   - notBefore: The start of validity.
    ///   - notAfter: The end of validity.
    ///   - extensions: The extensions, added in order.
    /// - Returns: The parsed certificate.
    /// - Throws: ``IAPError`` `.internalError` when OpenSSL fails, `.invalidArgument` for unrepresentable dates.
    static func build(
        subject: [(String, String)],
        subjectKey: P256PublicKey,
        issuer: X509Certificate?,
        issuerKey: P256PrivateKey,
        notBefore: Date,
        notAfter: Date,
        extensions: [Extension]
    ) throws -> X509Certificate {
        ERR_clear_error()
        guard let certificate = X509_new() else {
            throw IAPError.openSSL(.internalError, "Cannot create a certificate", operation: "X509_new")
        }
        defer { X509_free(certificate) }
        guard X509_set_version(certificate, Int(X509_VERSION_3)) == 1 else {
            throw IAPError.openSSL(.internalError, "Cannot set the version", operation: "X509_set_version")
        }
        try setRandomSerial(certificate)

        guard let name = X509_NAME_new() else {
            throw IAPError.openSSL(.internalError, "Cannot create a name", operation: "X509_NAME_new")
        }
        defer { X509_NAME_free(name) }
        for (field, value) in subject {
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, value, -1, -1, 0) == 1 else {
                throw IAPError.openSSL(
                    .internalError,
                    "Cannot add \(field) to a name",
                    operation: "X509_NAME_add_entry_by_txt"
                )
            }
        }
        guard X509_set_subject_name(certificate, name) == 1,
            X509_set_issuer_name(certificate, issuer.map { X509_get_subject_name($0.handle) } ?? name) == 1
        else {
            throw IAPError.openSSL(.internalError, "Cannot set the names", operation: "X509_set_subject_name")
        }
        guard X509_set_pubkey(certificate, subjectKey.pkey) == 1 else {
            throw IAPError.openSSL(.internalError, "Cannot set the public key", operation: "X509_set_pubkey")
        }
        try setTime(X509_getm_notBefore(certificate), notBefore)
        try setTime(X509_getm_notAfter(certificate), notAfter)

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.handle ?? certificate, certificate, nil, nil, 0)
        for item in extensions {
            try add(item, to: certificate, context: &context)
        }

        guard X509_sign(certificate, issuerKey.pkey, OpenSSLAlgorithms.shared.sha256) > 0 else {
            throw IAPError.openSSL(.internalError, "Cannot sign the certificate", operation: "X509_sign")
        }
        guard let der = DEREncoding.encode({ i2d_X509(certificate, $0) }) else {
            throw IAPError.openSSL(.internalError, "Cannot encode the certificate", operation: "i2d_X509")
        }
        return try withExtendedLifetime((subjectKey, issuer, issuerKey)) {
            try X509Certificate(derEncoded: der)
        }
    }

    /// Sets a random positive 16-byte serial number.
    private static func setRandomSerial(_ certificate: OpaquePointer) throws {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&bytes, Int32(bytes.count)) == 1 else {
            throw IAPError.openSSL(.internalError, "Cannot draw a serial number", operation: "RAND_bytes")
        }
        // Clear the sign bit and set the next one, so the INTEGER is positive and exactly 16 bytes long.
        bytes[0] = (bytes[0] & 0x7F) | 0x40
        guard let number = BN_bin2bn(bytes, Int32(bytes.count), nil) else {
            throw IAPError.openSSL(.internalError, "Cannot build a serial number", operation: "BN_bin2bn")
        }
        defer { BN_free(number) }
        guard let serial = BN_to_ASN1_INTEGER(number, nil) else {
            throw IAPError.openSSL(.internalError, "Cannot build a serial number", operation: "BN_to_ASN1_INTEGER")
        }
        defer { ASN1_INTEGER_free(serial) }
        guard X509_set_serialNumber(certificate, serial) == 1 else {
            throw IAPError.openSSL(.internalError, "Cannot set the serial number", operation: "X509_set_serialNumber")
        }
    }

    /// Sets an `ASN1_TIME` to a date (UTCTime until 2049, GeneralizedTime after, as RFC 5280 requires).
    private static func setTime(_ time: UnsafeMutablePointer<ASN1_TIME>?, _ date: Date) throws {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, let value = time_t(exactly: seconds) else {
            throw IAPError(.invalidArgument, "The certificate date \(date) is out of range")
        }
        guard ASN1_TIME_set(time, value) != nil else {
            throw IAPError.openSSL(.internalError, "Cannot set a validity date", operation: "ASN1_TIME_set")
        }
    }

    private static func add(
        _ item: Extension,
        to certificate: OpaquePointer,
        context: inout X509V3_CTX
    ) throws {
        let created: OpaquePointer?
        switch item {
        case .basicConstraints(let value):
            created = X509V3_EXT_nconf_nid(nil, &context, NID_basic_constraints, value)
        case .keyUsage(let value):
            created = X509V3_EXT_nconf_nid(nil, &context, NID_key_usage, value)
        case .subjectKeyIdentifier:
            created = X509V3_EXT_nconf_nid(nil, &context, NID_subject_key_identifier, "hash")
        case .authorityKeyIdentifier:
            created = X509V3_EXT_nconf_nid(nil, &context, NID_authority_key_identifier, "keyid:always")
        case .marker(let oid):
            created = try marker(oid)
        }
        guard let created else {
            throw IAPError.openSSL(
                .internalError,
                "Cannot create the extension \(item)",
                operation: "X509V3_EXT_nconf_nid"
            )
        }
        defer { X509_EXTENSION_free(created) }
        guard X509_add_ext(certificate, created, -1) == 1 else {
            throw IAPError.openSSL(.internalError, "Cannot add the extension \(item)", operation: "X509_add_ext")
        }
    }

    private static func marker(_ oid: String) throws -> OpaquePointer? {
        guard let object = OBJ_txt2obj(oid, 1) else {
            throw IAPError.openSSL(.internalError, "Invalid OID \(oid)", operation: "OBJ_txt2obj")
        }
        defer { ASN1_OBJECT_free(object) }
        guard let value = ASN1_OCTET_STRING_new() else {
            throw IAPError.openSSL(
                .internalError,
                "Cannot create an extension value",
                operation: "ASN1_OCTET_STRING_new"
            )
        }
        defer { ASN1_OCTET_STRING_free(value) }
        let derNull: [UInt8] = [0x05, 0x00]
        guard ASN1_OCTET_STRING_set(value, derNull, Int32(derNull.count)) == 1 else {
            throw IAPError.openSSL(.internalError, "Cannot set an extension value", operation: "ASN1_OCTET_STRING_set")
        }
        return X509_EXTENSION_create_by_OBJ(nil, object, 0, value)
    }
}
