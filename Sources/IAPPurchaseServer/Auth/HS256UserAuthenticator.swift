#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore
public import IAPHTTPServer

/// The bundled ``UserAuthenticator``: the user is the `sub` of an HS256 JSON Web Token (RFC 7519) sent as
/// `Authorization: Bearer <token>`, signed with a secret the app's own backend shares with the purchase server.
///
/// A token is accepted only when all of these hold; anything else is `unauthenticated`:
/// - one `Authorization` header, scheme `Bearer`, a compact JWS of three base64url segments (no padding), at most
///   ``maximumTokenLength`` bytes;
/// - the header is a JSON object whose `alg` is exactly `HS256` and that has no `crit`; neither it nor the payload
///   names a member twice (JSON parsers disagree on which of two `sub` wins, so such a token is refused);
/// - the signature is HMAC-SHA256 of `header.payload` under the secret, compared in constant time
///   (``MessageAuthenticator/isValid(_:for:)``);
/// - the payload is a JSON object with a numeric `exp` later than now (the ``WallClock``; ``leeway`` allows for clock
///   skew), a numeric `nbf`, when present, not later than now, and a string `sub` that is a valid user id (1 to 256
///   characters, no control characters, not in the pipeline's reserved `unowned:` namespace);
/// - the token lives no longer than ``maximumLifetime``: `exp − iat` when it has a numeric `iat`, else `exp − now`
///   (24 hours by default, so that an `exp` a century ahead, or `1e308`, is refused).
///
/// ```swift
/// let users = HS256UserAuthenticator(secret: try HMACSHA256(key: secretBytes))  // HMACSHA256 of IAPCrypto
/// let userId = try await users.authenticate(request)
/// ```
///
/// Your backend mints the token when the user signs in, for instance in Python with PyJWT:
/// `jwt.encode({"sub": user_id, "exp": int(time.time()) + 3600}, secret, algorithm="HS256")`.
public struct HS256UserAuthenticator: UserAuthenticator {
    /// The longest token accepted, in bytes.
    public static let maximumTokenLength = 8 * 1024
    /// The longest user id accepted as `sub`.
    public static let maximumUserIdLength = 256

    private let secret: any MessageAuthenticator
    private let clock: any WallClock
    /// How far `exp` and `nbf` may be off the clock, for skew between the machines; zero by default.
    public let leeway: Duration
    /// The longest a token may live: `exp − iat`, or `exp − now` for a token without `iat`.
    public let maximumLifetime: Duration
    /// ``maximumLifetime`` by default: 24 hours.
    public static let defaultMaximumLifetime: Duration = .seconds(86_400)
    /// The shortest secret ``init(secret:keyedBy:clock:leeway:maximumLifetime:)`` and
    /// ``init(secretFile:keyedBy:clock:leeway:maximumLifetime:)`` accept, in bytes.
    public static let minimumSecretLength = 16

    /// Creates the authenticator.
    ///
    /// - Parameters:
    ///   - secret: HMAC-SHA256 keyed with the shared secret (`HMACSHA256` of `IAPCrypto`).
    ///   - clock: The clock `exp` and `nbf` are checked against.
    ///   - leeway: How far `exp` and `nbf` may be off the clock.
    ///   - maximumLifetime: The longest a token may live (`exp − iat`, or `exp − now` without `iat`); 24 hours by
    ///     default.
    public init(
        secret: some MessageAuthenticator,
        clock: some WallClock = SystemClock(),
        leeway: Duration = .zero,
        maximumLifetime: Duration = defaultMaximumLifetime
    ) {
        self.secret = secret
        self.clock = clock
        self.leeway = max(.zero, leeway)
        self.maximumLifetime = max(.zero, maximumLifetime)
    }

    /// Creates the authenticator from the secret's bytes, refusing a secret shorter than ``minimumSecretLength``.
    ///
    /// ```swift
    /// let users = try HS256UserAuthenticator(secret: secretBytes, keyedBy: HMACSHA256.init(key:))  // IAPCrypto
    /// ```
    ///
    /// - Parameters:
    ///   - secret: The shared secret.
    ///   - makeAuthenticator: HMAC-SHA256 keyed with a secret: `HMACSHA256.init(key:)` of `IAPCrypto`.
    ///   - clock: The clock `exp` and `nbf` are checked against.
    ///   - leeway: How far `exp` and `nbf` may be off the clock.
    ///   - maximumLifetime: The longest a token may live; 24 hours by default.
    /// - Throws: ``IAPError`` `invalidKey` for a secret that is too short (its value never appears in the message),
    ///   or what `makeAuthenticator` throws.
    public init<Authenticator: MessageAuthenticator>(
        secret: [UInt8],
        keyedBy makeAuthenticator: ([UInt8]) throws -> Authenticator,
        clock: some WallClock = SystemClock(),
        leeway: Duration = .zero,
        maximumLifetime: Duration = defaultMaximumLifetime
    ) throws {
        guard secret.count >= Self.minimumSecretLength else {
            throw IAPError(
                .invalidKey,
                "the user token secret must be at least \(Self.minimumSecretLength) bytes; this one has \(secret.count)"
            )
        }
        self.init(
            secret: try makeAuthenticator(secret),
            clock: clock,
            leeway: leeway,
            maximumLifetime: maximumLifetime
        )
    }

    /// Creates the authenticator with the secret in a file, read by ``SecretFile`` (IAPCore) as `iap serve` reads
    /// `--user-jwt-secret-file`: a private file (mode 0600), one trailing newline not part of the secret, at least
    /// ``minimumSecretLength`` bytes.
    ///
    /// ```swift
    /// let users = try HS256UserAuthenticator(
    ///     secretFile: URL(filePath: "/etc/iap/user-jwt.secret"),
    ///     keyedBy: HMACSHA256.init(key:)  // IAPCrypto
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - secretFile: The file (made with `openssl rand -hex 32 > FILE`, say).
    ///   - makeAuthenticator: HMAC-SHA256 keyed with a secret: `HMACSHA256.init(key:)` of `IAPCrypto`.
    ///   - clock: The clock `exp` and `nbf` are checked against.
    ///   - leeway: How far `exp` and `nbf` may be off the clock.
    ///   - maximumLifetime: The longest a token may live; 24 hours by default.
    /// - Throws: ``IAPError`` `invalidConfiguration` for a file that cannot be read, is open to its group or others,
    ///   or is empty; `invalidKey` for a secret that is too short; what `makeAuthenticator` throws.
    public init<Authenticator: MessageAuthenticator>(
        secretFile: URL,
        keyedBy makeAuthenticator: ([UInt8]) throws -> Authenticator,
        clock: some WallClock = SystemClock(),
        leeway: Duration = .zero,
        maximumLifetime: Duration = defaultMaximumLifetime
    ) throws {
        try self.init(
            secret: try SecretFile.read(atPath: secretFile.path, describedAs: "the user token secret file"),
            keyedBy: makeAuthenticator,
            clock: clock,
            leeway: leeway,
            maximumLifetime: maximumLifetime
        )
    }

    public func authenticate(_ request: HTTPServerRequest) async throws -> String {
        try verify(String(try request.bearerToken()))
    }

    /// Verifies a token and returns its subject.
    ///
    /// - Parameter token: The compact JWT.
    /// - Returns: The `sub` claim: the user id.
    /// - Throws: ``IAPError`` `unauthenticated` naming the check that failed.
    public func verify(_ token: String) throws -> String {
        func refuse(_ reason: String) -> IAPError {
            IAPError(.unauthenticated, "the bearer token is refused: \(reason)")
        }
        guard token.utf8.count <= Self.maximumTokenLength else {
            throw refuse("it is longer than \(Self.maximumTokenLength) bytes")
        }
        let segments = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty }) else {
            throw refuse("it is not a compact JWS of three segments")
        }
        guard let headerBytes = Base64.decodeURL(Substring(segments[0])),
            let payloadBytes = Base64.decodeURL(Substring(segments[1])),
            let signature = Base64.decodeURL(Substring(segments[2]))
        else {
            throw refuse("a segment is not unpadded base64url")
        }
        guard let header = try? JSONDecoder().decode(Fields.self, from: Data(headerBytes)) else {
            throw refuse("its header is not a JSON object")
        }
        guard !JSONMemberNames.hasDuplicate(headerBytes) else {
            throw refuse("its header names a member twice")
        }
        guard case .string(let algorithm)? = header.values["alg"], algorithm == "HS256" else {
            throw refuse("its alg is not HS256")
        }
        guard header.values["crit"] == nil else {
            throw refuse("its header has crit, which this server does not understand")
        }
        let signingInput = Array(token.utf8[..<segments[1].endIndex])
        guard secret.isValid(signature, for: signingInput) else {
            throw refuse("the signature does not match the secret")
        }
        guard let claims = try? JSONDecoder().decode(Fields.self, from: Data(payloadBytes)) else {
            throw refuse("its payload is not a JSON object")
        }
        guard !JSONMemberNames.hasDuplicate(payloadBytes) else {
            throw refuse("its payload names a claim twice")
        }
        let now = clock.now.timeIntervalSince1970
        let slack = leeway.timeInterval
        guard case .number(let expiry)? = claims.values["exp"] else {
            throw refuse("it has no numeric exp")
        }
        guard now < expiry + slack else {
            throw refuse("it expired")
        }
        let lifetime: Double
        switch claims.values["iat"] {
        case nil:
            lifetime = expiry - now
        case .number(let issuedAt)?:
            guard issuedAt <= now + slack else {
                throw refuse("it was issued in the future (iat)")
            }
            // Whatever iat says, it never lives longer than the limit from now.
            lifetime = max(expiry - issuedAt, expiry - now)
        default:
            throw refuse("its iat is not numeric")
        }
        guard lifetime <= maximumLifetime.timeInterval + slack else {
            throw refuse("it lives longer than \(maximumLifetime) (exp - iat, or exp - now without iat)")
        }
        if let notBefore = claims.values["nbf"] {
            guard case .number(let notBefore) = notBefore else {
                throw refuse("its nbf is not numeric")
            }
            guard now >= notBefore - slack else {
                throw refuse("it is not valid yet (nbf)")
            }
        }
        guard case .string(let subject)? = claims.values["sub"] else {
            throw refuse("it has no string sub")
        }
        guard !subject.isEmpty, subject.count <= Self.maximumUserIdLength,
            !subject.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }),
            (try? DeliveryPipeline.validate(userId: subject)) != nil
        else {
            throw refuse("its sub is not a valid user id")
        }
        return subject
    }

    /// The members of a JSON object that a token's checks read: strings and finite numbers; any other value (an
    /// object, an array, a Boolean, null) is kept as `.other`, so that a claim of the wrong type is refused.
    private struct Fields: Decodable {
        enum Value {
            case string(String)
            case number(Double)
            case other
        }

        struct Key: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }

            init(stringValue: String) {
                self.stringValue = stringValue
            }

            init?(intValue: Int) {
                nil
            }
        }

        var values: [String: Value] = [:]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            for key in container.allKeys {
                if (try? container.decode(Bool.self, forKey: key)) != nil {
                    values[key.stringValue] = .other
                } else if let text = try? container.decode(String.self, forKey: key) {
                    values[key.stringValue] = .string(text)
                } else if let number = try? container.decode(Double.self, forKey: key), number.isFinite {
                    values[key.stringValue] = .number(number)
                } else {
                    values[key.stringValue] = .other
                }
            }
        }
    }
}
