import Foundation
import IAPCore
import IAPHTTPServer

/// The checks every request to `iap emulate` passes before it is routed, so that only the developer's own tools
/// drive the store: not a web page they visit, not a DNS-rebound name, not another machine without the token.
///
/// In this order, the first failure answers:
///
/// 1. `Host` (every path): exactly one, naming a loopback name (`localhost`, `127.0.0.1`, `[::1]`) or the bound
///    address (any IP literal when bound to a wildcard address), with the listening port or none. Missing or
///    repeated is `400`; another name is `421` — a rebound DNS name never reaches a handler.
/// 2. `Origin` (every path), when present: exactly the emulator's own, `http://HOST:PORT` as listening; another is
///    `403` — a page in a browser never drives the store, and never reads an answer.
/// 3. `X-Emulator-Control-Token` (control paths, `/emulator/...`): exactly one, equal to the token (compared in
///    constant time); missing, repeated or wrong is `401`.
/// 4. `Content-Type` (control `POST`s): `application/json`, parameters allowed; another or none is `415` — an HTML
///    form or a `text/plain` fetch cannot send one without a preflight.
///
/// The App Store Server API paths (`/inApps/...`) pass 1 and 2, then check their bearer token as App Store Connect
/// does. The order puts the checks that need no secret first: a request from the wrong place learns nothing about
/// the token.
struct EmulatorControlPlane: Sendable {
    /// The header that carries the control token.
    static let tokenHeader = "X-Emulator-Control-Token"

    /// The control token.
    let token: String
    /// The emulator's origin, `http://HOST:PORT` as listening.
    let origin: String
    /// The listening port.
    let port: UInt16
    /// The bound host as a URL names it (`127.0.0.1`, `[::1]`, `0.0.0.0`).
    let host: String

    /// Whether a host is a loopback address or name: `localhost`, `127.0.0.0/8`, `::1`.
    static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") {
            name = String(name.dropFirst().dropLast())
        }
        if name == "localhost" || name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// A new random token: 32 bytes from the system's secure generator, in hexadecimal.
    static func generateToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.encode((0..<32).map { _ in generator.next() as UInt8 })
    }

    /// Checks a token given with `--control-token`: 16 to 256 visible ASCII characters.
    static func validate(token: String) -> String? {
        guard (16...256).contains(token.utf8.count) else { return "--control-token must be 16 to 256 characters" }
        guard token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return "--control-token must be visible ASCII characters, without spaces"
        }
        return nil
    }

    /// The answer that refuses a request, or `nil` when it may go on.
    ///
    /// - Parameter request: The request.
    func refusal(of request: HTTPServerRequest) -> HTTPServerResponse? {
        let hosts = request.headers.values(for: "Host")
        guard hosts.count == 1, let hostHeader = hosts.first else {
            return .error(400, "the request needs exactly one Host header")
        }
        guard allows(host: hostHeader) else {
            return .error(421, "this server does not answer for the host '\(hostHeader)'")
        }
        let origins = request.headers.values(for: "Origin")
        if !origins.isEmpty, origins != [origin] {
            return .error(403, "requests from another origin are refused")
        }
        guard request.pathSegments.first == "emulator" else { return nil }
        let tokens = request.headers.values(for: Self.tokenHeader)
        guard tokens.count == 1, let given = tokens.first, Self.constantTimeEqual(given, token) else {
            return .error(401, "control requests need the header \(Self.tokenHeader) with the emulator's token")
        }
        if request.method == "POST" {
            let types = request.headers.values(for: "Content-Type")
            let mediaType = types.first?.split(separator: ";", maxSplits: 1).first?
                .trimmingCharacters(in: .whitespaces).lowercased()
            guard types.count == 1, mediaType == "application/json" else {
                return .error(415, "control requests send Content-Type: application/json")
            }
        }
        return nil
    }

    /// Whether a `Host` header names this server.
    private func allows(host value: String) -> Bool {
        let text = value.lowercased()
        var name = text
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return false }
            name = String(text[...close])
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { return false }
                portText = rest.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            name = String(text[..<colon])
            portText = text[text.index(after: colon)...]
        }
        if let portText, UInt16(portText) != port {
            return false
        }
        if Self.isLoopback(name) || name == host.lowercased() {
            return true
        }
        // Bound to every address: any IP literal names this machine. A rebound DNS name is never a literal.
        let wildcard = host == "0.0.0.0" || host == "[::]"
        return wildcard && Self.isAddressLiteral(name)
    }

    private static func isAddressLiteral(_ name: String) -> Bool {
        if name.hasPrefix("["), name.hasSuffix("]") {
            var address = in6_addr()
            return inet_pton(AF_INET6, String(name.dropFirst().dropLast()), &address) == 1
        }
        var address = in_addr()
        return inet_pton(AF_INET, name, &address) == 1
    }

    private static func constantTimeEqual(_ first: String, _ second: String) -> Bool {
        let left = Array(first.utf8)
        let right = Array(second.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
        }
        return difference == 0
    }
}
