#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

/// Signs App Store Server API bearer tokens with an App Store Connect in-app purchase key (`.p8`).
///
/// Each token is an ES256 JWT with header `kid` and `typ: JWT`, and claims `iss` (issuer id), `iat`,
/// `exp`, `aud` = `appstoreconnect-v1` and `bid` (bundle id). A token is reused until
/// ``refreshMargin`` before it expires, so a busy server signs one token every few minutes, not one
/// per request.
public final class AppStoreServerAPITokenProvider: BearerTokenProvider {
    /// The audience App Store Connect requires.
    public static let audience = "appstoreconnect-v1"
    /// The longest lifetime accepted here; App Store Connect rejects tokens that live too long.
    public static let maximumLifetime: Duration = .seconds(20 * 60)

    /// The issuer id from App Store Connect (Users and Access → Integrations).
    public let issuerId: String
    /// The key id of the `.p8` key.
    public let keyId: String
    /// The app's bundle id.
    public let bundleId: String
    /// How long each token is valid.
    public let lifetime: Duration
    /// How long before expiry a token stops being reused.
    public let refreshMargin: Duration

    private let signer: JWSSigner
    private let clock: any WallClock
    private let cached = LockedValue<(token: String, expires: Date)?>(nil)

    /// Creates a token provider.
    ///
    /// - Parameters:
    ///   - privateKey: The App Store Connect key.
    ///   - keyId: Its key id.
    ///   - issuerId: The issuer id.
    ///   - bundleId: The app's bundle id.
    ///   - lifetime: How long each token is valid: more than a minute and at most 20 minutes; 5 by default.
    ///   - clock: The clock for `iat` and `exp`.
    /// - Throws: ``IAPError`` with code `invalidConfiguration` for an empty id or an out-of-range lifetime.
    public init(
        privateKey: P256PrivateKey,
        keyId: String,
        issuerId: String,
        bundleId: String,
        lifetime: Duration = .seconds(300),
        clock: any WallClock = SystemClock()
    ) throws {
        guard !keyId.isEmpty, !issuerId.isEmpty, !bundleId.isEmpty else {
            throw IAPError(.invalidConfiguration, "the key id, issuer id and bundle id must not be empty")
        }
        guard lifetime > .seconds(60), lifetime <= Self.maximumLifetime else {
            throw IAPError(
                .invalidConfiguration,
                "the token lifetime must be more than 1 minute and at most 20 minutes"
            )
        }
        self.issuerId = issuerId
        self.keyId = keyId
        self.bundleId = bundleId
        self.lifetime = lifetime
        self.refreshMargin = .seconds(60)
        self.signer = JWSSigner(key: privateKey, keyId: keyId, type: "JWT")
        self.clock = clock
    }

    /// Creates a token provider from the PEM text of a `.p8` file.
    ///
    /// - Parameters:
    ///   - pemRepresentation: The contents of the `.p8` file.
    ///   - keyId: Its key id.
    ///   - issuerId: The issuer id.
    ///   - bundleId: The app's bundle id.
    ///   - clock: The clock for `iat` and `exp`.
    /// - Throws: ``IAPError`` with code `invalidKey` or `invalidConfiguration`.
    public convenience init(
        pemRepresentation: String,
        keyId: String,
        issuerId: String,
        bundleId: String,
        clock: any WallClock = SystemClock()
    ) throws {
        try self.init(
            privateKey: try P256PrivateKey(pemRepresentation: pemRepresentation),
            keyId: keyId,
            issuerId: issuerId,
            bundleId: bundleId,
            clock: clock
        )
    }

    private struct Claims: Encodable {
        let iss: String
        let iat: Int64
        let exp: Int64
        let aud: String
        let bid: String
    }

    public func token() async throws -> String {
        try currentToken()
    }

    public func invalidate() async {
        cached.withLock { $0 = nil }
    }

    /// Returns the reused token, or signs a new one when it is missing or close to expiry.
    ///
    /// - Returns: The compact JWT.
    /// - Throws: ``IAPError`` if signing fails.
    public func currentToken() throws -> String {
        let now = clock.now
        if let cached = cached.withLock({ $0 }),
            cached.expires.timeIntervalSince(now) > refreshMargin.timeInterval
        {
            return cached.token
        }
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        let expires = issuedAt + lifetime.wholeSeconds
        let token = try signer.sign(
            Claims(iss: issuerId, iat: issuedAt, exp: expires, aud: Self.audience, bid: bundleId)
        )
        let entry = (token: token, expires: Date(timeIntervalSince1970: Double(expires)))
        cached.withLock { $0 = entry }
        return token
    }
}
