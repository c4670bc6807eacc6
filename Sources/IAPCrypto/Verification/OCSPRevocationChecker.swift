#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// Optional online revocation checks of the certificates that sign App Store data: it asks each certificate's issuer,
/// over OCSP (RFC 6960), whether the certificate was revoked, as Apple's libraries do with their online checks. Off
/// unless you use it: ``RevocationCheckingVerifier`` wraps a verifier with it.
///
/// The request goes through a ``Transport`` (`POST`, `application/ocsp-request`) to ``Configuration/responderURL``, or
/// else to the responder the certificate names (its Authority Information Access). The answer must be successful,
/// signed by the issuer (or a responder it delegated to) under one of ``Configuration/roots``, about this certificate,
/// and fresh at the clock's instant (`thisUpdate` at most five minutes ahead; `nextUpdate`, when given, not passed).
/// A `good` answer is kept until its `nextUpdate` or ``Configuration/maximumCacheAge``, whichever comes first, so a
/// busy server asks once per certificate and period, not once per purchase.
///
/// Outcomes: `revoked` throws ``IAPError/Code/certificateRevoked`` (not retryable); an answer that does not verify or
/// says `unknown` throws `certificateChainInvalid`; no answer (a responder down, a timeout) throws a retryable
/// `transportFailure`, so the App Store sends a notification again and an app submits again later: the data is never
/// accepted unchecked once checks are on.
public final class OCSPRevocationChecker: Sendable {
    /// Where and how the checks are made.
    public struct Configuration: Sendable {
        /// Sends the OCSP requests.
        public var transport: any Transport
        /// The roots a response's signer must chain to: the verifier's.
        public var roots: [X509Certificate]
        /// Every request goes there, whatever responder the certificates name; `nil` to use theirs.
        public var responderURL: URL?
        /// How long one request may take.
        public var timeout: Duration
        /// The longest a `good` answer is kept.
        public var maximumCacheAge: Duration
        /// The instant answers must be fresh at.
        public var clock: any WallClock

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - transport: Sends the OCSP requests.
        ///   - roots: The trusted roots (the verifier's ``AppStoreSignedDataVerifier/Configuration/rootCertificates``).
        ///   - responderURL: A responder for every request; `nil` to use the one each certificate names.
        ///   - timeout: How long one request may take (5 seconds by default).
        ///   - maximumCacheAge: The longest a `good` answer is kept (an hour by default).
        ///   - clock: The instant answers must be fresh at.
        public init(
            transport: some Transport,
            roots: [X509Certificate],
            responderURL: URL? = nil,
            timeout: Duration = .seconds(5),
            maximumCacheAge: Duration = .seconds(3_600),
            clock: some WallClock = SystemClock()
        ) {
            self.transport = transport
            self.roots = roots
            self.responderURL = responderURL
            self.timeout = timeout
            self.maximumCacheAge = maximumCacheAge
            self.clock = clock
        }
    }

    /// The configuration.
    public let configuration: Configuration
    private let goodUntil = LockedValue<[String: Date]>([:])

    /// Creates a checker.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// The OCSP responder a certificate names in its Authority Information Access, if any.
    public static func responderURL(of certificate: X509Certificate) -> URL? {
        OCSPQuestion.responderURL(of: certificate)
    }

    /// How many `good` answers are kept.
    public var cachedAnswerCount: Int { goodUntil.withLock { $0.count } }

    /// Asks the issuer whether a certificate was revoked.
    ///
    /// - Parameters:
    ///   - subject: The certificate.
    ///   - issuer: The certificate that issued it.
    /// - Throws: ``IAPError`` as the type's documentation says.
    public func check(_ subject: X509Certificate, issuedBy issuer: X509Certificate) async throws {
        let key = Hex.encode(issuer.sha256Fingerprint) + ":" + subject.serialNumberHex
        let now = configuration.clock.now
        if let until = goodUntil.withLock({ $0[key] }), until > now {
            return
        }
        let question = try OCSPQuestion(subject: subject, issuer: issuer)
        guard let url = configuration.responderURL ?? question.responderURL else {
            throw IAPError(
                .certificateChainInvalid,
                "\(subject.subject) names no OCSP responder, and no responder URL is configured"
            )
        }
        let request = HTTPRequest(
            method: "POST",
            url: url,
            headers: ["Content-Type": "application/ocsp-request", "Accept": "application/ocsp-response"],
            body: Data(try question.requestDER()),
            timeout: configuration.timeout
        )
        let response: HTTPResponse
        do {
            response = try await configuration.transport.send(request)
        } catch {
            var failure = IAPError.wrapping(error, as: .transportFailure, "the OCSP responder \(url) did not answer")
            failure.isRetryable = true
            throw failure
        }
        guard response.status == 200 else {
            var failure = IAPError(
                .transportFailure,
                "the OCSP responder \(url) answered HTTP \(response.status)",
                isRetryable: true
            )
            failure.httpStatus = response.status
            throw failure
        }
        let answer = try question.read(Array(response.body), roots: configuration.roots)
        guard answer.thisUpdate <= now.addingTimeInterval(300) else {
            throw IAPError(.certificateChainInvalid, "the OCSP answer for \(subject.subject) is dated in the future")
        }
        if let next = answer.nextUpdate, next < now {
            throw IAPError(.certificateChainInvalid, "the OCSP answer for \(subject.subject) is out of date")
        }
        switch answer.status {
        case .good:
            let limit = now.addingTimeInterval(configuration.maximumCacheAge.timeInterval)
            let until = answer.nextUpdate.map { min($0, limit) } ?? limit
            goodUntil.withLock { cache in
                if cache.count >= 1_024 {
                    cache = cache.filter { $0.value > now }
                }
                cache[key] = until
            }
        case .revoked(let at):
            throw IAPError(
                .certificateRevoked,
                "\(subject.subject) was revoked by its issuer"
                    + (at.map { " on \($0.millisecondsSince1970) ms since 1970" } ?? "")
            )
        case .unknown:
            throw IAPError(.certificateChainInvalid, "the OCSP responder does not know \(subject.subject)")
        }
    }
}

/// A ``Verifier`` that verifies with an ``AppStoreSignedDataVerifier`` and then checks, online, that neither the leaf
/// nor the intermediate certificate of the data (and of the data nested in a notification) was revoked
/// (``OCSPRevocationChecker``). Xcode-signed data, which has no chain, is not checked.
///
/// ```swift
/// let verifier = RevocationCheckingVerifier(
///     verifier: try AppStoreSignedDataVerifier(configuration: configuration),
///     checker: OCSPRevocationChecker(.init(transport: URLSessionTransport(), roots: configuration.rootCertificates))
/// )
/// ```
public struct RevocationCheckingVerifier: Verifier {
    /// The verifier that checks everything else.
    public let verifier: AppStoreSignedDataVerifier
    /// The online checks.
    public let checker: OCSPRevocationChecker

    /// Creates a verifier.
    public init(verifier: AppStoreSignedDataVerifier, checker: OCSPRevocationChecker) {
        self.verifier = verifier
        self.checker = checker
    }

    public var acceptedEnvironments: Set<AppStoreEnvironment>? { verifier.acceptedEnvironments }

    public func acceptedEnvironments(bundleId: String?) -> Set<AppStoreEnvironment>? {
        verifier.acceptedEnvironments(bundleId: bundleId)
    }

    public var bundleIds: Set<String>? { verifier.bundleIds }

    public func verifyTransaction(_ signedTransaction: String) async throws -> TransactionPayload {
        let payload = try await verifier.verifyTransaction(signedTransaction)
        try await checkChain(of: signedTransaction)
        return payload
    }

    public func verifyRenewalInfo(_ signedRenewalInfo: String) async throws -> RenewalInfoPayload {
        let payload = try await verifier.verifyRenewalInfo(signedRenewalInfo)
        try await checkChain(of: signedRenewalInfo)
        return payload
    }

    public func verifyNotification(_ signedPayload: String) async throws -> VerifiedNotification {
        let notification = try await verifier.verifyNotification(signedPayload)
        try await checkChain(of: signedPayload)
        let nested = [
            notification.payload.data?.signedTransactionInfo, notification.payload.data?.signedRenewalInfo,
            notification.payload.appData?.signedAppTransactionInfo,
        ]
        for token in nested.compactMap(\.self) {
            try await checkChain(of: token)
        }
        return notification
    }

    public func verifyAppTransaction(_ signedAppTransaction: String) async throws -> AppTransactionPayload {
        let payload = try await verifier.verifyAppTransaction(signedAppTransaction)
        try await checkChain(of: signedAppTransaction)
        return payload
    }

    /// Checks the leaf and the intermediate of a verified token's `x5c`: the leaf with the intermediate, the
    /// intermediate with the configured root that issued it.
    private func checkChain(of token: String) async throws {
        let chain = try verifier.withParsed(token) { try $0.decodeHeader().certificateChain }
        guard chain.count == 3 else { return }
        let leaf = try X509Certificate(derEncoded: chain[0])
        let intermediate = try X509Certificate(derEncoded: chain[1])
        let presented = try X509Certificate(derEncoded: chain[2])
        let roots = verifier.configuration.rootCertificates
        guard
            let root = roots.first(where: { $0.sha256Fingerprint == presented.sha256Fingerprint })
                ?? (roots.count == 1 ? roots.first : nil)
        else {
            throw IAPError(.untrustedRoot, "no configured root issued \(intermediate.subject)")
        }
        try await checker.check(leaf, issuedBy: intermediate)
        try await checker.check(intermediate, issuedBy: root)
    }
}
