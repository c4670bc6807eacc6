#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// Verifies App Store signed data: JWS ES256 with an `x5c` chain to Apple Root CA - G3.
///
/// For every token the verifier checks, in this order:
/// 1. the compact JWS shape: three unpadded base64url segments within size limits, a 64-byte signature;
/// 2. the header: a JSON object with `alg` = `ES256` and an `x5c` of exactly three standard-base64 DER
///    certificates (the third, the root, is never trusted);
/// 3. the payload: a JSON object of the expected kind (read before the chain, which is validated at
///    the payload's `signedDate`; nothing in it is trusted before step 5 passes);
/// 4. the chain: leaf ← intermediate ← one of the configured roots, valid at the validation instant
///    (the payload's `signedDate` by default, as Apple's offline verifier does), the leaf carrying
///    Apple's marker OID 1.2.840.113635.100.6.11.1 and the intermediate 1.2.840.113635.100.6.2.1;
/// 5. the ES256 signature with the leaf's P-256 key;
/// 6. the app's identity: bundle id, environment and App Apple ID where configured.
///
/// Header and payload must be strict JSON in which no object holds a key twice, at any depth, also after escapes
/// are read (`"bundleId"` and `"bundle\u0049d"` are one key): readers disagree on which of two values counts
/// (JSON decoders keep the first or the last), so such data is `malformedSignedData` whoever signed it.
///
/// A notification's nested signed transaction, renewal info and app transaction are verified the same
/// way, and must name the same app and environment as the notification.
///
/// Validated chains are cached (see ``Configuration/cacheCapacity``), so a token from a known chain
/// costs one ECDSA verification.
///
/// ```swift
/// let verifier = try AppStoreSignedDataVerifier(
///     configuration: .init(bundleId: "com.example.app", environment: .production, appAppleId: 1_234_567_890)
/// )
/// let transaction = try verifier.verifyTransaction(jws)
/// ```
public final class AppStoreSignedDataVerifier: Verifier {
    /// Which instant the certificate chain is validated at.
    public enum ValidationTime: Sendable, Hashable {
        /// The payload's `signedDate` (`receiptCreationDate` for an app transaction), or the clock's
        /// `now` when the payload has none. This is Apple's offline rule: data signed while its chain was
        /// valid stays verifiable after the leaf expires.
        case signedDate
        /// The configured clock's current instant: a chain that has since expired is rejected.
        case now
        /// A fixed instant.
        case fixed(Date)
    }

    /// The identity checks a configuration leaves out, each named: verifying data without knowing which app or
    /// environment it must be for is a choice a reviewer sees, never a default.
    public struct SkippedChecks: OptionSet, Sendable, Hashable {
        public let rawValue: Int

        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// Accept data of any bundle id (a tool that inspects data of any app).
        public static let bundleId = SkippedChecks(rawValue: 1 << 0)
        /// Accept data of any environment.
        public static let environment = SkippedChecks(rawValue: 1 << 1)
        /// Accept Production data without checking its App Apple ID.
        public static let appAppleId = SkippedChecks(rawValue: 1 << 2)
        /// No identity check at all: only the signature and the chain are checked (a tool that inspects data).
        public static let all: SkippedChecks = [.bundleId, .environment, .appAppleId]
    }

    /// What a verifier trusts and expects.
    ///
    /// A bundle id is required, and so is at least one environment; accepting Production requires the App Apple
    /// ID, as Apple's own library does. Each can be left out only by naming it in ``skippedChecks``.
    public struct Configuration: Sendable {
        /// The trust anchors. Defaults to Apple Root CA - G3 alone.
        public var rootCertificates: [X509Certificate]
        /// The app's bundle id; `nil` only with ``SkippedChecks/bundleId``.
        public var bundleId: String?
        /// The App Store environments data may come from. A production server that also takes App Review's
        /// purchases accepts `[.production, .sandbox]` and keeps the two apart by each transaction's environment.
        /// Empty only with ``SkippedChecks/environment``.
        public var environments: Set<AppStoreEnvironment>
        /// The app's App Apple ID, required when ``environments`` holds Production (unless
        /// ``SkippedChecks/appAppleId``). Checked where the payload carries it (notifications and app
        /// transactions), and required of Production data that should carry it.
        public var appAppleId: Int64?
        /// The identity checks deliberately left out.
        public var skippedChecks: SkippedChecks
        /// Which instant chains are validated at.
        public var validationTime: ValidationTime
        /// Whether to accept data signed by Xcode's StoreKit Testing (environment `Xcode` or
        /// `LocalTesting`, a single self-signed certificate). Such data proves nothing about a purchase;
        /// never turn this on in production. Off by default.
        public var acceptsXcodeSignedData: Bool
        /// Whether to apply OpenSSL's strict X.509 checks (`X509_V_FLAG_X509_STRICT`). Apple's real chain
        /// passes them; Apple's own test certificates do not.
        public var strictX509: Bool
        /// How many validated chains to remember; `0` turns the cache off.
        public var cacheCapacity: Int
        /// The clock read when the validation instant is "now".
        public var clock: any WallClock

        /// Creates a configuration that accepts several environments.
        ///
        /// - Parameters:
        ///   - rootCertificates: The trust anchors; `nil` means Apple Root CA - G3.
        ///   - bundleId: The expected bundle id.
        ///   - environments: The accepted environments.
        ///   - appAppleId: The expected App Apple ID; required when Production is accepted.
        ///   - skippedChecks: The identity checks deliberately left out.
        ///   - validationTime: Which instant chains are validated at.
        ///   - acceptsXcodeSignedData: Whether to accept Xcode-signed data.
        ///   - strictX509: Whether to apply strict X.509 checks.
        ///   - cacheCapacity: How many validated chains to remember.
        ///   - clock: The clock for "now".
        public init(
            rootCertificates: [X509Certificate]? = nil,
            bundleId: String?,
            environments: Set<AppStoreEnvironment>,
            appAppleId: Int64? = nil,
            skippedChecks: SkippedChecks = [],
            validationTime: ValidationTime = .signedDate,
            acceptsXcodeSignedData: Bool = false,
            strictX509: Bool = false,
            cacheCapacity: Int = 64,
            clock: any WallClock = SystemClock()
        ) {
            self.rootCertificates = rootCertificates ?? []
            self.bundleId = bundleId
            self.environments = environments
            self.appAppleId = appAppleId
            self.skippedChecks = skippedChecks
            self.validationTime = validationTime
            self.acceptsXcodeSignedData = acceptsXcodeSignedData
            self.strictX509 = strictX509
            self.cacheCapacity = cacheCapacity
            self.clock = clock
        }

        /// Creates a configuration that accepts one environment.
        ///
        /// - Parameters:
        ///   - rootCertificates: The trust anchors; `nil` means Apple Root CA - G3.
        ///   - bundleId: The expected bundle id.
        ///   - environment: The accepted environment; `nil` only with ``SkippedChecks/environment``.
        ///   - appAppleId: The expected App Apple ID; required for Production.
        ///   - skippedChecks: The identity checks deliberately left out.
        ///   - validationTime: Which instant chains are validated at.
        ///   - acceptsXcodeSignedData: Whether to accept Xcode-signed data.
        ///   - strictX509: Whether to apply strict X.509 checks.
        ///   - cacheCapacity: How many validated chains to remember.
        ///   - clock: The clock for "now".
        public init(
            rootCertificates: [X509Certificate]? = nil,
            bundleId: String?,
            environment: AppStoreEnvironment?,
            appAppleId: Int64? = nil,
            skippedChecks: SkippedChecks = [],
            validationTime: ValidationTime = .signedDate,
            acceptsXcodeSignedData: Bool = false,
            strictX509: Bool = false,
            cacheCapacity: Int = 64,
            clock: any WallClock = SystemClock()
        ) {
            self.init(
                rootCertificates: rootCertificates,
                bundleId: bundleId,
                environments: environment.map { [$0] } ?? [],
                appAppleId: appAppleId,
                skippedChecks: skippedChecks,
                validationTime: validationTime,
                acceptsXcodeSignedData: acceptsXcodeSignedData,
                strictX509: strictX509,
                cacheCapacity: cacheCapacity,
                clock: clock
            )
        }
    }

    /// Apple's marker on the leaf: "Receipt Signing".
    public static let leafMarkerOID = "1.2.840.113635.100.6.11.1"
    /// Apple's marker on the intermediate: "Apple WWDR intermediate".
    public static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"

    /// The configuration this verifier was created with.
    public let configuration: Configuration
    private let trustStore: X509TrustStore
    private let cache: VerifiedChainCache
    private let decoder: JSONDecoder

    /// Creates a verifier.
    ///
    /// - Parameter configuration: What to trust and expect.
    /// - Throws: ``IAPError`` with code `invalidConfiguration` when the configuration leaves a check out without
    ///   naming it in ``Configuration/skippedChecks`` (no bundle id, no environment, Production without its App
    ///   Apple ID), or is contradictory, such as expecting the Xcode environment without accepting Xcode-signed
    ///   data.
    public init(configuration: Configuration) throws {
        var configuration = configuration
        if configuration.rootCertificates.isEmpty {
            configuration.rootCertificates = [try AppleRootCertificates.appleRootCAG3()]
        }
        let skipped = configuration.skippedChecks
        if configuration.bundleId?.isEmpty ?? true, !skipped.contains(.bundleId) {
            throw IAPError(
                .invalidConfiguration,
                "a bundle id is required: data of another app would be accepted; "
                    + "name SkippedChecks.bundleId to verify data of any app knowingly"
            )
        }
        if configuration.environments.isEmpty, !skipped.contains(.environment) {
            throw IAPError(
                .invalidConfiguration,
                "at least one environment is required (Production, Sandbox or both); "
                    + "name SkippedChecks.environment to accept any knowingly"
            )
        }
        if configuration.environments.contains(.production), configuration.appAppleId == nil,
            !skipped.contains(.appAppleId)
        {
            throw IAPError(
                .invalidConfiguration,
                "accepting Production data requires the app's App Apple ID (App Store Connect, App Information); "
                    + "name SkippedChecks.appAppleId to leave the check out knowingly"
            )
        }
        if let environment = configuration.environments.first(where: Self.isUnsigned),
            !configuration.acceptsXcodeSignedData
        {
            throw IAPError(
                .invalidConfiguration,
                "the \(environment.rawValue) environment is not signed by the App Store; "
                    + "set acceptsXcodeSignedData to accept it knowingly"
            )
        }
        guard configuration.cacheCapacity >= 0 else {
            throw IAPError(.invalidConfiguration, "cacheCapacity must not be negative")
        }
        self.configuration = configuration
        self.trustStore = try X509TrustStore(roots: configuration.rootCertificates)
        self.cache = VerifiedChainCache(capacity: configuration.cacheCapacity)
        self.decoder = AppStoreJSON.makeDecoder()
    }

    /// The environments of ``Configuration/environments``, or `nil` when the configuration names none and so checks
    /// no environment (``SkippedChecks/environment``).
    public var acceptedEnvironments: Set<AppStoreEnvironment>? {
        configuration.environments.isEmpty ? nil : configuration.environments
    }

    /// The number of chains in the cache.
    public var cachedChainCount: Int { cache.count }

    // MARK: - Verifier

    public func verifyTransaction(_ signedTransaction: String) async throws -> TransactionPayload {
        try transaction(signedTransaction)
    }

    public func verifyRenewalInfo(_ signedRenewalInfo: String) async throws -> RenewalInfoPayload {
        try renewalInfo(signedRenewalInfo)
    }

    public func verifyNotification(_ signedPayload: String) async throws -> VerifiedNotification {
        try notification(signedPayload)
    }

    public func verifyAppTransaction(_ signedAppTransaction: String) async throws -> AppTransactionPayload {
        try appTransaction(signedAppTransaction)
    }

    // MARK: - Synchronous API

    /// Verifies a signed transaction.
    ///
    /// - Parameter token: The compact JWS.
    /// - Returns: The verified transaction.
    /// - Throws: ``IAPError`` naming the failed check.
    public func transaction(_ token: String) throws -> TransactionPayload {
        try withParsed(token) { try transaction($0, decoded: nil) }
    }

    /// Verifies a parsed signed transaction; `decoded` is its payload when the caller already decoded it with
    /// `FastTransactionDecoder` (as `decodePayload(_:as:)` would).
    private func transaction(_ jws: CompactJWS, decoded: TransactionPayload?) throws -> TransactionPayload {
        let payload = try verifiedPayload(jws, decoded: decoded) { transaction, bytes in
            // Every App Store transaction names itself; only a payload without an id can be another kind.
            if transaction.transactionId?.isEmpty ?? true {
                try Self.checkKind(bytes, expected: .transaction)
            }
        }
        try checkIdentity(bundleId: payload.bundleId, environment: payload.environment)
        return payload
    }

    /// Verifies a signed renewal info.
    ///
    /// - Parameter token: The compact JWS.
    /// - Returns: The verified renewal info.
    /// - Throws: ``IAPError`` naming the failed check.
    public func renewalInfo(_ token: String) throws -> RenewalInfoPayload {
        try withParsed(token, renewalInfo)
    }

    private func renewalInfo(_ jws: CompactJWS) throws -> RenewalInfoPayload {
        let payload = try verifiedPayload(jws, decoded: RenewalInfoPayload?.none) { _, bytes in
            try Self.checkKind(bytes, expected: .renewal)
        }
        // A renewal info carries no bundle id.
        try checkIdentity(bundleId: nil, environment: payload.environment, checksBundleId: false)
        return payload
    }

    /// Verifies a signed app transaction.
    ///
    /// - Parameter token: The compact JWS.
    /// - Returns: The verified app transaction.
    /// - Throws: ``IAPError`` naming the failed check.
    public func appTransaction(_ token: String) throws -> AppTransactionPayload {
        try withParsed(token, appTransaction)
    }

    private func appTransaction(_ jws: CompactJWS) throws -> AppTransactionPayload {
        let payload = try verifiedPayload(jws, decoded: AppTransactionPayload?.none) { _, bytes in
            try Self.checkKind(bytes, expected: .appTransaction)
        }
        try checkIdentity(bundleId: payload.bundleId, environment: payload.receiptType)
        try checkAppAppleId(payload.appAppleId, environment: payload.receiptType)
        return payload
    }

    /// Verifies a notification's `signedPayload` and the signed data nested in it.
    ///
    /// - Parameter token: The `signedPayload`.
    /// - Returns: The verified notification.
    /// - Throws: ``IAPError`` naming the failed check.
    public func notification(_ token: String) throws -> VerifiedNotification {
        try withParsed(token, notification)
    }

    private func notification(_ jws: CompactJWS) throws -> VerifiedNotification {
        let payload = try verifiedPayload(jws, decoded: NotificationPayload?.none) { _, bytes in
            try Self.checkKind(bytes, expected: .notification)
        }
        let identity = Self.identity(of: payload)
        if configuration.bundleId != nil, identity.bundleId == nil {
            throw IAPError(.bundleIdMismatch, "the notification names no app (no data, summary, token or app data)")
        }
        try checkIdentity(bundleId: identity.bundleId, environment: identity.environment)
        try checkAppAppleId(identity.appAppleId, environment: identity.environment)

        var verified = VerifiedNotification(payload: payload)
        if let signed = payload.data?.signedTransactionInfo {
            let transaction = try nested("signedTransactionInfo") { try self.transaction(signed) }
            try Self.checkConsistency(
                bundleId: transaction.bundleId,
                environment: transaction.environment,
                with: identity,
                field: "signedTransactionInfo"
            )
            verified.transaction = transaction
        }
        if let signed = payload.data?.signedRenewalInfo {
            let renewal = try nested("signedRenewalInfo") { try self.renewalInfo(signed) }
            try Self.checkConsistency(
                bundleId: nil,
                environment: renewal.environment,
                with: identity,
                field: "signedRenewalInfo"
            )
            verified.renewalInfo = renewal
        }
        if let signed = payload.appData?.signedAppTransactionInfo {
            let app = try nested("signedAppTransactionInfo") { try self.appTransaction(signed) }
            try Self.checkConsistency(
                bundleId: app.bundleId,
                environment: app.receiptType,
                with: identity,
                field: "signedAppTransactionInfo"
            )
            verified.appTransaction = app
        }
        return verified
    }

    /// Verifies signed data of a given kind, or of the kind its payload shows.
    ///
    /// - Parameters:
    ///   - token: The compact JWS.
    ///   - kind: The expected kind, or `nil` to detect it from the payload's fields.
    /// - Returns: The verified data.
    /// - Throws: ``IAPError`` naming the failed check.
    public func verify(_ token: String, as kind: SignedDataKind? = nil) throws -> VerifiedSignedData {
        // The token is parsed once: the kind is told from the same decoded payload that is then verified, and a
        // plain transaction's payload, decoded to tell its kind, is not decoded again.
        try withParsed(token) { jws in
            var decoded: TransactionPayload?
            let resolved: SignedDataKind
            if let kind {
                resolved = kind
            } else if let transaction = SignedDataKindDetector.plainTransaction(jws.payload) {
                decoded = transaction
                resolved = .transaction
            } else {
                resolved = try SignedDataKindDetector.detectWithJSONDecoder(payload: jws.payload)
            }
            switch resolved {
            case .transaction: return .transaction(try transaction(jws, decoded: decoded))
            case .renewal: return .renewal(try renewalInfo(jws))
            case .notification: return .notification(try notification(jws))
            case .appTransaction: return .appTransaction(try appTransaction(jws))
            }
        }
    }

    /// Detects the kind of signed data from its payload, without verifying anything.
    ///
    /// - Parameter token: The compact JWS.
    /// - Returns: The kind the payload's fields show.
    /// - Throws: ``IAPError`` with code `malformedSignedData` or `unexpectedPayload`.
    public func detectKind(_ token: String) throws -> SignedDataKind {
        try withParsed(token) { try SignedDataKindDetector.detect(payload: $0.payload) }
    }

    // MARK: - The pipeline

    /// Parses a token's shape (``CompactJWS``) and hands it to `body`, which must not keep it.
    private func withParsed<Result>(_ token: String, _ body: (CompactJWS) throws -> Result) throws -> Result {
        var token = token
        return try token.withUTF8 { bytes in
            try body(CompactJWS(bytes))
        }
    }

    /// Verifies a parsed token and decodes its payload; `checkKind` sees the decoded payload and its bytes once the
    /// signature held, and throws when the payload is another kind of signed data than the one asked for.
    /// `decoded` is the payload when the caller already decoded it exactly as `decodePayload(_:as:)` would.
    private func verifiedPayload<Payload: SignedPayload>(
        _ jws: CompactJWS,
        decoded: Payload?,
        checkKind: (Payload, [UInt8]) throws -> Void
    ) throws -> Payload {
        // A header seen before already passed its checks; any other is checked before the payload is
        // read, so a refused algorithm or a malformed header is reported as such whatever the payload holds.
        let headerEntry = cache.entry(forHeader: jws.header)
        let checkedHeader = headerEntry == nil ? try jws.decodeHeader() : nil
        let payload = try decoded ?? decodePayload(jws.payload, as: Payload.self)
        try verifySignedBytes(jws, payload: payload, headerEntry: headerEntry, checkedHeader: checkedHeader)
        try checkKind(payload, jws.payload)
        return payload
    }

    private func verifySignedBytes<Payload: SignedPayload>(
        _ jws: CompactJWS,
        payload: Payload,
        headerEntry: VerifiedChainCache.Entry?,
        checkedHeader: CompactJWS.Header?
    ) throws {
        let instant = validationInstant(for: payload)

        if let headerEntry, headerEntry.covers(instant) {
            try checkSignature(jws, key: headerEntry.leafKey)
            return
        }

        let header = try checkedHeader ?? jws.decodeHeader()
        if header.certificateChain.count == 1, header.keyId == "Apple_Xcode_Key" || isUnsignedEnvironment(payload) {
            try verifyXcodeSigned(jws, header: header, payload: payload)
            return
        }
        guard header.certificateChain.count == 3 else {
            throw IAPError(
                .malformedSignedData,
                "x5c must hold exactly 3 certificates (leaf, intermediate, root), found \(header.certificateChain.count)"
            )
        }
        let key = VerifiedChainCache.ChainKey(
            leaf: header.certificateChain[0],
            intermediate: header.certificateChain[1]
        )
        if let entry = cache.entry(for: key), entry.covers(instant) {
            try checkSignature(jws, key: entry.leafKey)
            cache.insert(entry, for: key, header: jws.header)
            return
        }

        let entry = try validateChain(leaf: key.leaf, intermediate: key.intermediate, at: instant)
        try checkSignature(jws, key: entry.leafKey)
        cache.insert(entry, for: key, header: jws.header)
    }

    private func validateChain(leaf leafDER: [UInt8], intermediate intermediateDER: [UInt8], at instant: Date) throws
        -> VerifiedChainCache.Entry
    {
        let leaf: X509Certificate
        let intermediate: X509Certificate
        do {
            leaf = try X509Certificate(derEncoded: leafDER)
        } catch let error as IAPError {
            throw IAPError(.certificateInvalid, "x5c[0] (leaf): \(error.message)", underlying: error)
        }
        do {
            intermediate = try X509Certificate(derEncoded: intermediateDER)
        } catch let error as IAPError {
            throw IAPError(.certificateInvalid, "x5c[1] (intermediate): \(error.message)", underlying: error)
        }
        guard let leafKey = leaf.p256PublicKey else {
            throw IAPError(.certificateInvalid, "the leaf certificate's key is not an EC P-256 key, as ES256 requires")
        }
        let chain = try trustStore.validate(
            leaf: leaf,
            intermediates: [intermediate],
            at: instant,
            strict: configuration.strictX509
        )
        guard chain.count == 3 else {
            throw IAPError(
                .certificateChainInvalid,
                "the chain must be leaf, intermediate and root (3 certificates), built \(chain.count)"
            )
        }
        guard chain[0].hasExtension(oid: Self.leafMarkerOID) else {
            throw IAPError(
                .missingAppleMarker,
                "the leaf certificate lacks Apple's marker extension \(Self.leafMarkerOID)"
            )
        }
        guard chain[1].hasExtension(oid: Self.intermediateMarkerOID) else {
            throw IAPError(
                .missingAppleMarker,
                "the intermediate certificate lacks Apple's marker extension \(Self.intermediateMarkerOID)"
            )
        }
        let validFrom = chain.map(\.notBefore).max() ?? instant
        let validUntil = chain.map(\.notAfter).min() ?? instant
        return VerifiedChainCache.Entry(leafKey: leafKey, validFrom: validFrom, validUntil: validUntil)
    }

    private func checkSignature(_ jws: CompactJWS, key: P256PublicKey) throws {
        let valid = jws.signature.withUnsafeBytes { signature in
            key.isValidSignature(signature, for: UnsafeRawBufferPointer(jws.signingInput))
        }
        guard valid else {
            throw IAPError(.signatureInvalid, "the ES256 signature does not match the signed data")
        }
    }

    private func verifyXcodeSigned<Payload: SignedPayload>(
        _ jws: CompactJWS,
        header: CompactJWS.Header,
        payload: Payload
    ) throws {
        guard configuration.acceptsXcodeSignedData else {
            throw IAPError(
                .unsignedEnvironmentRejected,
                "this data was signed by Xcode's StoreKit Testing, not by the App Store; "
                    + "accept it only in development (acceptsXcodeSignedData; iap verify --environment Xcode)"
            )
        }
        guard isUnsignedEnvironment(payload) else {
            throw IAPError(
                .unsignedEnvironmentRejected,
                "a single self-signed certificate is only acceptable for Xcode or LocalTesting data"
            )
        }
        // Not proof of a purchase, but proof the token is intact: check it against its own certificate.
        guard let der = header.certificateChain.first else {
            throw IAPError(.malformedSignedData, "x5c is empty")
        }
        let certificate: X509Certificate
        do {
            certificate = try X509Certificate(derEncoded: der)
        } catch let error as IAPError {
            throw IAPError(.certificateInvalid, "x5c[0]: \(error.message)", underlying: error)
        }
        guard let key = certificate.p256PublicKey else {
            throw IAPError(.certificateInvalid, "the Xcode certificate's key is not an EC P-256 key")
        }
        try checkSignature(jws, key: key)
    }

    private func decodePayload<Payload: SignedPayload>(_ bytes: [UInt8], as type: Payload.Type) throws -> Payload {
        guard CompactJWS.isJSONObject(bytes) else {
            throw IAPError(.malformedSignedData, "the JWS payload is not a JSON object")
        }
        // The fast decoder answers only for flat objects whose keys are all distinct.
        if type == TransactionPayload.self,
            let fast = bytes.withUnsafeBytes({ FastTransactionDecoder.decode($0) }) as? Payload
        {
            return fast
        }
        let strict = try CompactJWS.checkDistinctKeys(bytes, segment: "payload")
        let payload: Payload
        do {
            payload = try decoder.decode(type, from: Data(bytes))
        } catch {
            throw IAPError(
                .malformedSignedData,
                "the JWS payload is not a valid \(Self.kindName(type)): \(Self.describe(error))",
                underlying: SendableErrorBox(error)
            )
        }
        guard strict else {
            throw CompactJWS.notStrictJSON("payload")
        }
        return payload
    }

    private func validationInstant(for payload: some SignedPayload) -> Date {
        switch configuration.validationTime {
        case .signedDate: payload.signingDate ?? configuration.clock.now
        case .now: configuration.clock.now
        case .fixed(let instant): instant
        }
    }

    // MARK: - Identity

    private struct Identity {
        var bundleId: String?
        var environment: AppStoreEnvironment?
        var appAppleId: Int64?
    }

    private static func identity(of payload: NotificationPayload) -> Identity {
        if let data = payload.data {
            return Identity(bundleId: data.bundleId, environment: data.environment, appAppleId: data.appAppleId)
        }
        if let summary = payload.summary {
            return Identity(
                bundleId: summary.bundleId,
                environment: summary.environment,
                appAppleId: summary.appAppleId
            )
        }
        if let token = payload.externalPurchaseToken {
            return Identity(
                bundleId: token.bundleId,
                environment: token.derivedEnvironment,
                appAppleId: token.appAppleId
            )
        }
        if let appData = payload.appData {
            return Identity(
                bundleId: appData.bundleId,
                environment: appData.environment,
                appAppleId: appData.appAppleId
            )
        }
        return Identity()
    }

    private func checkIdentity(
        bundleId: String?,
        environment: AppStoreEnvironment?,
        checksBundleId: Bool = true
    ) throws {
        if checksBundleId, let expected = configuration.bundleId, bundleId != expected {
            throw IAPError(
                .bundleIdMismatch,
                "the data is for bundle id '\(bundleId ?? "none")', expected '\(expected)'"
            )
        }
        if !configuration.environments.isEmpty, !(environment.map(configuration.environments.contains) ?? false) {
            throw IAPError(
                .environmentMismatch,
                "the data is from the \(environment?.rawValue ?? "unnamed") environment, expected "
                    + configuration.environments.map(\.rawValue).sorted().joined(separator: " or ")
            )
        }
    }

    private func checkAppAppleId(_ appAppleId: Int64?, environment: AppStoreEnvironment?) throws {
        guard let expected = configuration.appAppleId else { return }
        if let appAppleId {
            guard appAppleId == expected else {
                throw IAPError(.appAppleIdMismatch, "the data is for App Apple ID \(appAppleId), expected \(expected)")
            }
        } else if environment == .production {
            throw IAPError(.appAppleIdMismatch, "Production data must name its App Apple ID, expected \(expected)")
        }
    }

    private static func checkConsistency(
        bundleId: String?,
        environment: AppStoreEnvironment?,
        with identity: Identity,
        field: String
    ) throws {
        if let bundleId, let outer = identity.bundleId, bundleId != outer {
            throw IAPError(
                .bundleIdMismatch,
                "\(field) is for bundle id '\(bundleId)' but the notification is for '\(outer)'"
            )
        }
        if let environment, let outer = identity.environment, environment != outer {
            throw IAPError(
                .environmentMismatch,
                "\(field) is from \(environment.rawValue) but the notification is from \(outer.rawValue)"
            )
        }
    }

    private func nested<T>(_ field: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as IAPError {
            error.message = "\(field): \(error.message)"
            throw error
        }
    }

    private static func isUnsigned(_ environment: AppStoreEnvironment) -> Bool {
        environment == .xcode || environment == .localTesting
    }

    private func isUnsignedEnvironment(_ payload: some SignedPayload) -> Bool {
        let environment: AppStoreEnvironment? =
            switch payload {
            case let transaction as TransactionPayload: transaction.environment
            case let renewal as RenewalInfoPayload: renewal.environment
            case let app as AppTransactionPayload: app.receiptType
            case let notification as NotificationPayload: Self.identity(of: notification).environment
            default: nil
            }
        return environment.map(Self.isUnsigned) ?? false
    }

    /// Throws unless the payload is of the expected kind, naming both.
    private static func checkKind(_ payload: [UInt8], expected: SignedDataKind) throws {
        let found = try? SignedDataKindDetector.detect(payload: payload)
        guard found == expected else {
            try refuseKind(payload, expected: expected, found: found)
            return
        }
    }

    private static func refuseKind(_ payload: [UInt8], expected: SignedDataKind, found: SignedDataKind?) throws {
        throw IAPError(
            .unexpectedPayload,
            "expected \(article(expected)) \(expected.displayName), got "
                + (found.map { "\(article($0)) \($0.displayName)" } ?? "a payload of no App Store kind")
        )
    }

    private static func article(_ kind: SignedDataKind) -> String {
        kind == .appTransaction ? "an" : "a"
    }

    private static func kindName<Payload>(_ type: Payload.Type) -> String {
        switch type {
        case is TransactionPayload.Type: "transaction"
        case is RenewalInfoPayload.Type: "renewal info"
        case is NotificationPayload.Type: "notification"
        case is AppTransactionPayload.Type: "app transaction"
        default: "payload"
        }
    }

    private static func describe(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else { return String(describing: error) }
        func path(_ context: DecodingError.Context) -> String {
            let joined = context.codingPath.map(\.stringValue).joined(separator: ".")
            return joined.isEmpty ? "" : " at '\(joined)'"
        }
        switch decoding {
        case .typeMismatch(_, let context): return "wrong type\(path(context)): \(context.debugDescription)"
        case .valueNotFound(_, let context): return "missing value\(path(context))"
        case .keyNotFound(let key, let context): return "missing key '\(key.stringValue)'\(path(context))"
        case .dataCorrupted(let context): return "invalid JSON\(path(context)): \(context.debugDescription)"
        @unknown default: return String(describing: error)
        }
    }
}
