import IAPCore

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A throwaway three-level PKI shaped like Apple's App Store signing chain, for tests and fakes.
///
/// ``generate(_:)`` creates a self-signed root, an intermediate CA under it and a leaf under the intermediate, all
/// with fresh P-256 keys and `ecdsa-with-SHA256` signatures. The certificates carry what Apple's real chain
/// carries: subject names encoded CN first, critical basicConstraints (root `CA:TRUE`, intermediate
/// `CA:TRUE, pathlen:0`, leaf `CA:FALSE`), critical keyUsage, subject and authority key identifiers, and Apple's
/// marker extensions (the leaf's `1.2.840.113635.100.6.11.1` and the intermediate's `1.2.840.113635.100.6.2.1`,
/// non-critical, value DER NULL).
/// The chain therefore validates against ``root`` even with `strict: true`.
///
/// ```swift
/// let pki = try TestPKI.generate(.init(notBefore: start, notAfter: end))
/// let store = try X509TrustStore(roots: [pki.root])
/// let header = #"{"alg":"ES256","x5c":["\#(pki.x5c.joined(separator: "\",\""))"]}"#
/// let signature = try pki.leafKey.signature(for: Array(signingInput.utf8))
/// ```
///
/// > Warning: For tests only. Never configure a generated root in production.
public struct TestPKI: Sendable {
    /// What to generate.
    public struct Options: Sendable {
        /// The start of the validity period of every certificate that has no override.
        public var notBefore: Date
        /// The end of the validity period of every certificate that has no override.
        public var notAfter: Date
        /// The leaf's own start of validity, instead of ``notBefore``.
        public var leafNotBefore: Date?
        /// The leaf's own end of validity, instead of ``notAfter``.
        public var leafNotAfter: Date?
        /// The intermediate's own start of validity, instead of ``notBefore``.
        public var intermediateNotBefore: Date?
        /// The intermediate's own end of validity, instead of ``notAfter``.
        public var intermediateNotAfter: Date?
        /// Whether the leaf carries Apple's receipt-signing marker `1.2.840.113635.100.6.11.1`.
        public var leafHasMarker: Bool = true
        /// Whether the intermediate carries Apple's WWDR marker `1.2.840.113635.100.6.2.1`.
        public var intermediateHasMarker: Bool = true
        /// Whether the intermediate is a CA; `false` makes a chain that fails validation.
        public var intermediateIsCA: Bool = true
        /// The start of every certificate's common name.
        public var commonNamePrefix: String = "swift-iap test"

        /// Creates options with one validity period for all three certificates and every other value at its
        /// default.
        ///
        /// - Parameters:
        ///   - notBefore: The start of the validity period.
        ///   - notAfter: The end of the validity period.
        public init(notBefore: Date, notAfter: Date) {
            self.notBefore = notBefore
            self.notAfter = notAfter
        }
    }

    /// The OID of the marker extension Apple puts on App Store receipt-signing (leaf) certificates.
    public static let leafMarkerOID = "1.2.840.113635.100.6.11.1"
    /// The OID of the marker extension Apple puts on its WWDR intermediate certificates.
    public static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"

    /// The self-signed root certificate.
    public let root: X509Certificate
    /// The root's private key.
    public let rootKey: P256PrivateKey
    /// The intermediate certificate, issued by the root.
    public let intermediate: X509Certificate
    /// The intermediate's private key.
    public let intermediateKey: P256PrivateKey
    /// The leaf certificate, issued by the intermediate.
    public let leaf: X509Certificate
    /// The leaf's private key, which signs test JWS.
    public let leafKey: P256PrivateKey

    /// The chain as a JWS `x5c` header value: standard base64 DER of the leaf, the intermediate and the root.
    public var x5c: [String] {
        [leaf, intermediate, root].map { Data($0.derBytes).base64EncodedString() }
    }

    /// Assembles a PKI from certificates and keys made earlier, for example to sign with the same chain after a
    /// restart.
    ///
    /// Nothing is checked here: a verifier rejects a chain whose certificates do not belong together.
    ///
    /// - Parameters:
    ///   - root: The self-signed root certificate.
    ///   - rootKey: The root's private key.
    ///   - intermediate: The intermediate certificate, issued by the root.
    ///   - intermediateKey: The intermediate's private key.
    ///   - leaf: The leaf certificate, issued by the intermediate.
    ///   - leafKey: The leaf's private key.
    public init(
        root: X509Certificate,
        rootKey: P256PrivateKey,
        intermediate: X509Certificate,
        intermediateKey: P256PrivateKey,
        leaf: X509Certificate,
        leafKey: P256PrivateKey
    ) {
        self.root = root
        self.rootKey = rootKey
        self.intermediate = intermediate
        self.intermediateKey = intermediateKey
        self.leaf = leaf
        self.leafKey = leafKey
    }

    /// Generates a new PKI.
    ///
    /// - Parameter options: Validity periods, marker extensions and names.
    /// - Returns: The three certificates and their keys.
    /// - Throws: ``IAPError`` `.internalError` when OpenSSL cannot build or sign a certificate, `.invalidArgument`
    ///   when a date cannot be represented.
    public static func generate(_ options: Options) throws -> TestPKI {
        let rootKey = try P256PrivateKey()
        let intermediateKey = try P256PrivateKey()
        let leafKey = try P256PrivateKey()
        let prefix = options.commonNamePrefix

        let root = try CertificateBuilder.build(
            subject: [
                ("CN", "\(prefix) Root CA"), ("OU", "\(prefix) Certification Authority"), ("O", "swift-iap"),
                ("C", "US"),
            ],
            subjectKey: rootKey.publicKey,
            issuer: nil,
            issuerKey: rootKey,
            notBefore: options.notBefore,
            notAfter: options.notAfter,
            extensions: [
                .basicConstraints("critical,CA:TRUE"),
                .keyUsage("critical,keyCertSign,cRLSign"),
                .subjectKeyIdentifier,
            ]
        )
        let intermediate = try CertificateBuilder.build(
            subject: [
                ("CN", "\(prefix) Worldwide Developer Relations CA"), ("OU", "G6"), ("O", "swift-iap"), ("C", "US"),
            ],
            subjectKey: intermediateKey.publicKey,
            issuer: root,
            issuerKey: rootKey,
            notBefore: options.intermediateNotBefore ?? options.notBefore,
            notAfter: options.intermediateNotAfter ?? options.notAfter,
            extensions: [
                .basicConstraints(options.intermediateIsCA ? "critical,CA:TRUE,pathlen:0" : "critical,CA:FALSE"),
                .keyUsage(options.intermediateIsCA ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature"),
                .subjectKeyIdentifier,
                .authorityKeyIdentifier,
            ] + (options.intermediateHasMarker ? [.marker(intermediateMarkerOID)] : [])
        )
        let leaf = try CertificateBuilder.build(
            subject: [
                ("CN", "\(prefix) App Store Receipt Signing"), ("OU", "\(prefix)"), ("O", "swift-iap"), ("C", "US"),
            ],
            subjectKey: leafKey.publicKey,
            issuer: intermediate,
            issuerKey: intermediateKey,
            notBefore: options.leafNotBefore ?? options.notBefore,
            notAfter: options.leafNotAfter ?? options.notAfter,
            extensions: [
                .basicConstraints("critical,CA:FALSE"),
                .keyUsage("critical,digitalSignature"),
                .subjectKeyIdentifier,
                .authorityKeyIdentifier,
            ] + (options.leafHasMarker ? [.marker(leafMarkerOID)] : [])
        )
        return TestPKI(
            root: root,
            rootKey: rootKey,
            intermediate: intermediate,
            intermediateKey: intermediateKey,
            leaf: leaf,
            leafKey: leafKey
        )
    }
}
