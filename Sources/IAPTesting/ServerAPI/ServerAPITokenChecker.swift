import Foundation
public import IAPCore
public import IAPCrypto

/// Checks the bearer token of an App Store Server API request as App Store Connect does.
///
/// The token must be a compact JWT signed with ES256 by the private key whose public half the emulator holds (the
/// `--auth-key` `.p8`), with header `alg` `ES256` and `kid` the key id, and claims `iss` the issuer id, `aud`
/// `appstoreconnect-v1`, `bid` the bundle id, and `exp` in the future and at most 60 minutes after `iat` (or after
/// now, when the token has no `iat`, as Apple's Python and Java clients send none).
///
/// Times are checked against real time, not a simulated store's clock: clients mint their tokens with their own
/// clocks, and moving the store's clock forward (`iap emulate`'s `/emulator/v1/clock/advance`) must not make every
/// token expire. `iap emulate` and ``SimulatedAppStoreTransport`` both check tokens with it.
public struct ServerAPITokenChecker: Sendable {
    /// The public half of the `.p8` key.
    public let publicKey: P256PublicKey
    /// The key id tokens must name in `kid`.
    public let keyId: String
    /// The issuer id tokens must carry in `iss`.
    public let issuerId: String
    /// The bundle id tokens must carry in `bid`.
    public let bundleId: String
    /// Real time.
    public let clock: any WallClock

    /// Creates a checker.
    ///
    /// - Parameters:
    ///   - publicKey: The public half of the `.p8` key that signs the tokens.
    ///   - keyId: The key id tokens must name in `kid`.
    ///   - issuerId: The issuer id tokens must carry in `iss`.
    ///   - bundleId: The bundle id tokens must carry in `bid`.
    ///   - clock: Real time, which token lifetimes are checked against.
    public init(publicKey: P256PublicKey, keyId: String, issuerId: String, bundleId: String, clock: any WallClock) {
        self.publicKey = publicKey
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.clock = clock
    }

    /// The longest lifetime App Store Connect accepts, in seconds.
    public static let maximumLifetime: Int64 = 60 * 60
    /// How far in the future `iat` may be, in seconds, for clocks that disagree a little.
    public static let allowedSkew: Int64 = 60

    private struct Header: Decodable {
        let alg: String?
        let kid: String?
        let typ: String?
    }

    private struct Claims: Decodable {
        let iss: String?
        let aud: String?
        let bid: String?
        let exp: Double?
        let iat: Double?
    }

    /// Checks the `Authorization` header of a request.
    ///
    /// - Parameter authorization: The header's value, or `nil` when the request has none.
    /// - Returns: `nil` when the token is valid, else why it is not.
    public func rejection(of authorization: String?) -> String? {
        guard let authorization else { return "no Authorization header" }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return "not a Bearer token" }
        let segments = parts[1].trimmingCharacters(in: .whitespaces).split(
            separator: ".",
            omittingEmptySubsequences: false
        )
        guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty && $0.count <= 16 * 1024 }) else {
            return "the token is not a compact JWS"
        }
        guard let headerBytes = Base64.decodeURL(segments[0]), let claimBytes = Base64.decodeURL(segments[1]),
            let signature = Base64.decodeURL(segments[2])
        else {
            return "the token is not base64url"
        }
        guard let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)) else {
            return "the token header is not JSON"
        }
        guard header.alg == "ES256" else { return "the token's alg is not ES256" }
        guard header.kid == keyId else { return "the token's kid is not the configured key id" }
        if let typ = header.typ, typ != "JWT" { return "the token's typ is not JWT" }
        let signingInput = Array("\(segments[0]).\(segments[1])".utf8)
        guard signature.count == 64, publicKey.isValidSignature(Array(signature), for: signingInput) else {
            return "the token's signature does not verify with the configured key"
        }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: Data(claimBytes)) else {
            return "the token's claims are not the expected JSON"
        }
        guard claims.iss == issuerId else { return "iss is not the configured issuer id" }
        guard claims.aud == Self.audience else { return "aud is not appstoreconnect-v1" }
        guard claims.bid == bundleId else { return "bid is not the configured bundle id" }
        let now = Int64(clock.now.timeIntervalSince1970.rounded(.down))
        guard let expiry = claims.exp, expiry.isFinite, expiry > Double(now) else { return "the token has expired" }
        if let issued = claims.iat {
            guard issued.isFinite, issued <= Double(now + Self.allowedSkew) else { return "iat is in the future" }
            guard expiry - issued <= Double(Self.maximumLifetime) else {
                return "exp is more than 60 minutes after iat"
            }
        } else if expiry - Double(now) > Double(Self.maximumLifetime) {
            return "exp is more than 60 minutes away"
        }
        return nil
    }

    /// The audience App Store Connect requires.
    public static let audience = "appstoreconnect-v1"

}
