import IAPCore

/// The App Store's trust anchors, shipped inside the package.
public enum AppleRootCertificates {
    /// The SHA-256 fingerprint of Apple Root CA - G3's DER encoding, pinned.
    public static let appleRootCAG3SHA256 = "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179"

    /// Apple Root CA - G3 (ECDSA P-384, valid 2014-04-30 to 2039-04-30): the root of every chain that
    /// signs App Store data.
    ///
    /// The bytes are compiled into the package and checked against ``appleRootCAG3SHA256`` when first
    /// used, so a damaged copy can never become a trust anchor.
    ///
    /// - Throws: ``IAPError`` with code `certificateInvalid` if the embedded bytes do not match the pin.
    public static func appleRootCAG3() throws -> X509Certificate {
        guard let der = Base64.decodeStandard(appleRootCAG3Base64) else {
            throw IAPError(.certificateInvalid, "the embedded Apple Root CA - G3 is not valid base64")
        }
        let certificate = try X509Certificate(derEncoded: der)
        let fingerprint = certificate.sha256Fingerprint.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
        guard fingerprint == appleRootCAG3SHA256 else {
            throw IAPError(.certificateInvalid, "the embedded Apple Root CA - G3 does not match its pinned SHA-256")
        }
        return certificate
    }

    private static let appleRootCAG3Base64 =
        "MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwSQXBwbGUgUm9vdCBDQSAtIEczMSYwJAYDVQQL"
        + "DB1BcHBsZSBDZXJ0aWZpY2F0aW9uIEF1dGhvcml0eTETMBEGA1UECgwKQXBwbGUgSW5jLjELMAkGA1UEBhMCVVMwHhcNMTQwNDMw"
        + "MTgxOTA2WhcNMzkwNDMwMTgxOTA2WjBnMRswGQYDVQQDDBJBcHBsZSBSb290IENBIC0gRzMxJjAkBgNVBAsMHUFwcGxlIENlcnRp"
        + "ZmljYXRpb24gQXV0aG9yaXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzB2MBAGByqGSM49AgEGBSuBBAAiA2IA"
        + "BJjpLz1AcqTtkyJygRMc3RCV8cWjTnHcFBbZDuWmBSp3ZHtfTjjTuxxEtX/1H7YyYl3J6YRbTzBPEVoA/VhYDKX1DyxNB0cTddqX"
        + "l5dvMVztK517IDvYuVTZXpmkOlEKMaNCMEAwHQYDVR0OBBYEFLuw3qFYM4iapIqZ3r6966/ayySrMA8GA1UdEwEB/wQFMAMBAf8w"
        + "DgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2gAMGUCMQCD6cHEFl4aXTQY2e3v9GwOAEZLuN+yRhHFD/3meoyhpmvOwgPUnPWT"
        + "xnS4at+qIxUCMG1mihDK1A3UT82NQz60imOlM27jbdoXt2QfyFMm+YhidDkLF1vLUagM6BgD56KyKA=="
}
