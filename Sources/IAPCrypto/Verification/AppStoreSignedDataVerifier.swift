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
    let trustStore: X509TrustStore
    let cache: VerifiedChainCache
    let decoder: JSONDecoder

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

    /// The app of ``Configuration/bundleId``, or `nil` when the bundle id is not checked.
    public var bundleIds: Set<String>? {
        guard let bundleId = configuration.bundleId, !configuration.skippedChecks.contains(.bundleId) else {
            return nil
        }
        return [bundleId]
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
}
