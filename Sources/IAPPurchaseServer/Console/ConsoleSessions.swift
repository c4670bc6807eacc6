#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore
public import IAPHTTPServer

/// A signed-in operator's session, as its cookie carries it.
public struct ConsoleSession: Sendable, Hashable {
    /// Who signed in.
    public var operatorName: String
    /// Their role when they signed in.
    public var role: ConsoleRole
    /// A random identifier of the session, which its CSRF token is derived from.
    public var id: String
    /// When they signed in.
    public var issuedAt: Date
    /// When the session was last used.
    public var lastSeen: Date
}

/// Console sessions that need no server-side state, so that they work behind a load balancer with several instances
/// and no sticky sessions: the cookie `iap_console` carries the session, signed with HMAC-SHA256 under the console
/// secret (`--console-secret-file`, the same on every instance).
///
/// The cookie is `HttpOnly`, `SameSite=Strict`, `Path=/`, and `Secure` unless asked otherwise (plain-HTTP testing). A
/// session ends after ``idleTimeout`` without a request (every request renews the cookie) and ``lifetime`` after its
/// sign-in whatever happens; signing out removes the cookie from the browser. Each session has a CSRF token, derived
/// from its identifier under the secret, that every state-changing form carries.
public struct ConsoleSessions: Sendable {
    /// The cookie's name.
    public static let cookieName = "iap_console"
    /// How long a session lasts without a request.
    public let idleTimeout: Duration
    /// How long a session lasts at most.
    public let lifetime: Duration
    /// Whether the cookie is sent over HTTPS only.
    public let secureCookies: Bool
    private let authenticator: any MessageAuthenticator

    /// Creates the sessions.
    ///
    /// - Parameters:
    ///   - authenticator: HMAC-SHA256 under the console secret (`HMACSHA256(key:)` of `IAPCrypto`).
    ///   - secureCookies: `false` only to test over plain HTTP.
    ///   - idleTimeout: 30 minutes by default.
    ///   - lifetime: 12 hours by default.
    public init(
        authenticator: some MessageAuthenticator,
        secureCookies: Bool = true,
        idleTimeout: Duration = .seconds(30 * 60),
        lifetime: Duration = .seconds(12 * 3_600)
    ) {
        self.authenticator = authenticator
        self.secureCookies = secureCookies
        self.idleTimeout = idleTimeout
        self.lifetime = lifetime
    }

    /// A new session for an operator who just signed in, and its `Set-Cookie` value.
    public func issue(for signedIn: ConsoleOperator, at now: Date) -> (ConsoleSession, setCookie: String) {
        var generator = SystemRandomNumberGenerator()
        let id = Base64.encodeURL((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let session = ConsoleSession(
            operatorName: signedIn.name,
            role: signedIn.role,
            id: id,
            issuedAt: now,
            lastSeen: now
        )
        return (session, setCookie(for: session))
    }

    /// The session a request carries, if its cookie is one this secret signed and it has not expired.
    public func session(of request: HTTPServerRequest, at now: Date) -> ConsoleSession? {
        for header in request.headers.values(for: "Cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " || $0 == "\t" }
                guard trimmed.hasPrefix(Self.cookieName + "=") else { continue }
                if let session = session(fromCookie: String(trimmed.dropFirst(Self.cookieName.count + 1)), at: now) {
                    return session
                }
            }
        }
        return nil
    }

    /// The `Set-Cookie` value that renews a session: its last use moved to `now`.
    public func renewed(_ session: ConsoleSession, at now: Date) -> String {
        var renewed = session
        renewed.lastSeen = now
        return setCookie(for: renewed)
    }

    /// The `Set-Cookie` value that removes the session cookie.
    public var signOutCookie: String {
        "\(Self.cookieName)=; Path=/; HttpOnly; SameSite=Strict\(secureCookies ? "; Secure" : ""); Max-Age=0"
    }

    /// The session's CSRF token: every state-changing form carries it in its hidden field `csrf`.
    public func csrfToken(for session: ConsoleSession) -> String {
        Base64.encodeURL(authenticator.authenticationCode(for: Array("csrf:\(session.id)".utf8)))
    }

    /// Whether a form's CSRF token is the session's, compared in constant time.
    public func isValid(csrfToken: String?, for session: ConsoleSession) -> Bool {
        guard let csrfToken, let code = Base64.decodeURL(csrfToken) else { return false }
        return authenticator.isValid(code, for: Array("csrf:\(session.id)".utf8))
    }

    // MARK: - The cookie

    private struct Payload: Codable {
        var n: String  // the operator
        var r: String  // the role
        var s: String  // the session's id
        var i: Int64  // issued, milliseconds
        var l: Int64  // last seen, milliseconds
    }

    private func setCookie(for session: ConsoleSession) -> String {
        let payload = Payload(
            n: session.operatorName,
            r: session.role.rawValue,
            s: session.id,
            i: session.issuedAt.millisecondsSince1970,
            l: session.lastSeen.millisecondsSince1970
        )
        let encoded = Base64.encodeURL((try? JSONEncoder().encode(payload)) ?? Data())
        let code = Base64.encodeURL(authenticator.authenticationCode(for: Array(encoded.utf8)))
        let maxAge = Int64(idleTimeout / .seconds(1))
        return "\(Self.cookieName)=\(encoded).\(code); Path=/; HttpOnly; SameSite=Strict"
            + (secureCookies ? "; Secure" : "") + "; Max-Age=\(maxAge)"
    }

    private func session(fromCookie value: String, at now: Date) -> ConsoleSession? {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count <= 2_048, let code = Base64.decodeURL(parts[1]),
            authenticator.isValid(code, for: Array(parts[0].utf8)),
            let json = Base64.decodeURL(parts[0]),
            let payload = try? JSONDecoder().decode(Payload.self, from: Data(json)),
            let role = ConsoleRole(rawValue: payload.r)
        else { return nil }
        let issued = Date(millisecondsSince1970: payload.i)
        let lastSeen = Date(millisecondsSince1970: payload.l)
        let idle = Double(idleTimeout / .milliseconds(1)) / 1_000
        let life = Double(lifetime / .milliseconds(1)) / 1_000
        guard lastSeen <= now.addingTimeInterval(60), now.timeIntervalSince(lastSeen) < idle,
            now.timeIntervalSince(issued) < life, issued <= lastSeen
        else { return nil }
        return ConsoleSession(operatorName: payload.n, role: role, id: payload.s, issuedAt: issued, lastSeen: lastSeen)
    }
}

/// Failed sign-ins counted per operator name and per client address: after ``limit`` failures within ``window``,
/// either one is refused until the oldest failure is older than the window (the answer is the same as a wrong
/// password's, so it tells nothing). Kept in memory, per instance.
public final class ConsoleSignInThrottle: Sendable {
    /// Failures allowed per name or address within the window.
    public static let limit = 5
    /// The window.
    public static let window: TimeInterval = 15 * 60
    private let failures = LockedValue<[String: [Date]]>([:])

    /// Creates an empty throttle.
    public init() {}

    /// Whether a sign-in of `name` from `address` is refused now.
    public func isThrottled(name: String, address: String?, at now: Date) -> Bool {
        failures.withLock { failures in
            keys(name: name, address: address).contains { key in
                (failures[key] ?? []).filter { now.timeIntervalSince($0) < Self.window }.count >= Self.limit
            }
        }
    }

    /// Counts a failed sign-in.
    public func recordFailure(name: String, address: String?, at now: Date) {
        failures.withLock { failures in
            for key in keys(name: name, address: address) {
                var recent = (failures[key] ?? []).filter { now.timeIntervalSince($0) < Self.window }
                recent.append(now)
                failures[key] = Array(recent.suffix(Self.limit * 4))
            }
            if failures.count > 100_000 {
                failures = failures.filter { $0.value.contains { now.timeIntervalSince($0) < Self.window } }
            }
        }
    }

    private func keys(name: String, address: String?) -> [String] {
        ["name:" + name] + (address.map { ["address:" + $0] } ?? [])
    }
}
