internal import CIAPOpenSSL
import IAPCore

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A parsed X.509 certificate.
///
/// Everything the package reads from a certificate (validity, subject, serial number, CA flag, public key) is
/// extracted once in `init`. The class owns an OpenSSL `X509` and never changes it afterwards;
/// `openssl-threads(7)` allows any number of threads to use an `X509` at once as long as none modifies it, so the
/// class is `@unchecked Sendable`.
public final class X509Certificate: @unchecked Sendable {
    /// The `X509 *`, owned.
    let handle: OpaquePointer
    /// The DER encoding, exactly as given.
    public let derBytes: [UInt8]
    /// The start of the validity period.
    public let notBefore: Date
    /// The end of the validity period.
    public let notAfter: Date
    /// The subject name on one line, RFC 2253 style (`CN=…,OU=…,O=…,C=…`).
    public var subject: String {
        Fields.oneLine(X509_get_subject_name(handle))
    }
    /// The serial number as upper-case hexadecimal, without separators (`47C287CDD9F9E7867F528ADA74DC7DB7`).
    public var serialNumberHex: String {
        Fields.hex(X509_get0_serialNumber(handle)) ?? ""
    }
    /// Whether the basicConstraints extension says this is a CA certificate.
    public let isCA: Bool
    /// The subject public key, when it is an EC P-256 key; `nil` for any other key.
    public let p256PublicKey: P256PublicKey?

    /// The SHA-256 hash of the DER encoding, the certificate's usual fingerprint.
    public var sha256Fingerprint: [UInt8] {
        SHA256Digest.hash(derBytes)
    }

    /// Parses a DER certificate.
    ///
    /// - Parameter derEncoded: One DER `Certificate`, with nothing after it.
    /// - Throws: ``IAPError`` `.certificateInvalid` when the bytes are not exactly one well-formed certificate.
    public init(derEncoded: [UInt8]) throws {
        ERR_clear_error()
        let handle = try derEncoded.withUnsafeBufferPointer { buffer -> OpaquePointer in
            guard let base = buffer.baseAddress else {
                throw IAPError(.certificateInvalid, "The certificate DER is empty")
            }
            var cursor: UnsafePointer<UInt8>? = base
            guard let certificate = d2i_X509(nil, &cursor, buffer.count) else {
                throw IAPError.openSSL(.certificateInvalid, "Cannot parse the certificate", operation: "d2i_X509")
            }
            guard cursor == base + buffer.count else {
                X509_free(certificate)
                throw IAPError(
                    .certificateInvalid,
                    "The certificate is followed by \(base + buffer.count - (cursor ?? base)) trailing bytes"
                )
            }
            return certificate
        }
        let fields: Fields
        do {
            fields = try Fields(of: handle)
        } catch {
            X509_free(handle)
            throw error
        }
        self.handle = handle
        self.derBytes = derEncoded
        self.notBefore = fields.notBefore
        self.notAfter = fields.notAfter
        self.isCA = fields.isCA
        self.p256PublicKey = fields.p256PublicKey
    }

    /// Parses a PEM certificate.
    ///
    /// - Parameter pemEncoded: PEM text whose first block is `-----BEGIN CERTIFICATE-----`.
    /// - Throws: ``IAPError`` `.certificateInvalid` when there is no such block or it is not a well-formed certificate.
    public convenience init(pemEncoded: String) throws {
        let document = PEMBlock.read(pemEncoded)
        guard let block = document.blocks.first else {
            throw IAPError(.certificateInvalid, document.emptyReason, underlying: document.failure)
        }
        guard block.label == "CERTIFICATE", !block.hasHeaders else {
            throw IAPError(.certificateInvalid, "Expected a PEM \"CERTIFICATE\" block, found \"\(block.label)\"")
        }
        try self.init(derEncoded: block.der)
    }

    deinit {
        X509_free(handle)
    }

    /// Tells whether the certificate carries an extension, critical or not.
    ///
    /// - Parameter oid: The extension's object identifier in dotted form, such as `"1.2.840.113635.100.6.11.1"`.
    /// - Returns: `true` when the extension is present; `false` when it is absent or `oid` is not a dotted OID.
    public func hasExtension(oid: String) -> Bool {
        ERR_clear_error()
        guard let object = OBJ_txt2obj(oid, 1) else {
            ERR_clear_error()
            return false
        }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(handle, object, -1) >= 0
    }

    /// Prints an `X509_NAME` on one line, RFC 2253 style, keeping UTF-8 as is.
    ///
    /// - Parameter name: The name (borrowed).
    /// - Returns: The one-line form, or an empty string when OpenSSL cannot print it.
    static func oneLine(_ name: OpaquePointer?) -> String {
        Fields.oneLine(name)
    }

    /// The values read from an `X509` once.
    private struct Fields {
        var notBefore: Date
        var notAfter: Date
        var isCA: Bool
        var p256PublicKey: P256PublicKey?

        init(of handle: OpaquePointer) throws {
            guard let notBefore = Self.date(from: X509_get0_notBefore(handle)),
                let notAfter = Self.date(from: X509_get0_notAfter(handle))
            else {
                throw IAPError.openSSL(
                    .certificateInvalid,
                    "The certificate's validity period cannot be read",
                    operation: "ASN1_TIME_to_tm"
                )
            }
            self.notBefore = notBefore
            self.notAfter = notAfter
            guard let serial = X509_get0_serialNumber(handle), ASN1_STRING_length(serial) > 0 else {
                throw IAPError(.certificateInvalid, "The certificate has no serial number")
            }
            // X509_get_extension_flags also makes OpenSSL parse and cache the extensions now, while the object is
            // still private to this thread.
            let flags = X509_get_extension_flags(handle)
            self.isCA = flags & UInt32(EXFLAG_CA) != 0
            if let borrowed = X509_get0_pubkey(handle), P256PublicKey.isP256(borrowed),
                EVP_PKEY_up_ref(borrowed) == 1
            {
                self.p256PublicKey = try? P256PublicKey(adopting: borrowed)
            } else {
                self.p256PublicKey = nil
            }
            ERR_clear_error()
        }

        /// Converts an `ASN1_TIME` to a `Date` through `ASN1_TIME_to_tm`, without reading the clock.
        static func date(from time: UnsafePointer<ASN1_TIME>?) -> Date? {
            guard let time else {
                return nil
            }
            var components = tm()
            guard ASN1_TIME_to_tm(time, &components) == 1 else {
                return nil
            }
            let days = daysSinceEpoch(
                year: Int(components.tm_year) + 1900,
                month: Int(components.tm_mon) + 1,
                day: Int(components.tm_mday)
            )
            let seconds =
                days * 86_400 + Int(components.tm_hour) * 3_600 + Int(components.tm_min) * 60 + Int(components.tm_sec)
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }

        /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
        static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
            let shiftedYear = month <= 2 ? year - 1 : year
            let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
            let yearOfEra = shiftedYear - era * 400
            let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            return era * 146_097 + dayOfEra - 719_468
        }

        /// Prints an `X509_NAME` on one line, RFC 2253 style, keeping UTF-8 as is.
        static func oneLine(_ name: OpaquePointer?) -> String {
            guard let name, let bio = BIO_new(BIO_s_mem()) else {
                ERR_clear_error()
                return ""
            }
            defer { BIO_free(bio) }
            guard X509_NAME_print_ex(bio, name, 0, ciap_XN_FLAG_RFC2253_UTF8()) >= 0 else {
                ERR_clear_error()
                return ""
            }
            var data: UnsafeMutablePointer<CChar>?
            let length = ciap_BIO_get_mem_data(bio, &data)
            guard let data, length > 0 else {
                return ""
            }
            let bytes = UnsafeRawBufferPointer(start: data, count: length)
            return String(decoding: bytes, as: UTF8.self)
        }

        /// Formats an `ASN1_INTEGER` as upper-case hexadecimal.
        static func hex(_ integer: UnsafePointer<ASN1_INTEGER>?) -> String? {
            guard let integer, let number = ASN1_INTEGER_to_BN(integer, nil) else {
                return nil
            }
            defer { BN_free(number) }
            guard let text = BN_bn2hex(number) else {
                return nil
            }
            defer { ciap_OPENSSL_free(text) }
            return String(cString: text)
        }
    }
}
