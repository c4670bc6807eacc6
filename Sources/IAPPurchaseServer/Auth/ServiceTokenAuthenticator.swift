#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore
public import IAPHTTPServer

/// The check of the service endpoints (a user's entitlements and history, support): the request carries
/// `Authorization: Bearer <token>` with the one token the server's operators share with their backend.
///
/// The token is compared in constant time: how long the comparison takes depends on the expected token's length
/// only, never on how much of a guess was right.
///
/// ```swift
/// let service = try ServiceTokenAuthenticator(tokenFile: URL(filePath: "/etc/iap/service.token"))
/// guard service.isAuthorized(request) else { return .error(401, "the request is not authorized") }
/// ```
public struct ServiceTokenAuthenticator: Sendable {
    /// The shortest token accepted, in bytes.
    public static let minimumLength = 16

    private let token: [UInt8]

    /// Creates the check.
    ///
    /// - Parameter token: The token; at least ``minimumLength`` bytes, visible ASCII (it travels in a header).
    /// - Throws: ``IAPError`` `invalidKey` for a token that is too short or holds a byte a header cannot carry (its
    ///   value never appears in the message).
    public init(token: [UInt8]) throws(IAPError) {
        guard token.count >= Self.minimumLength else {
            throw IAPError(
                .invalidKey,
                "the service token must be at least \(Self.minimumLength) bytes; this one has \(token.count)"
            )
        }
        guard token.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw IAPError(.invalidKey, "the service token must be visible ASCII characters, without spaces")
        }
        self.token = token
    }

    /// Creates the check with the token in a file, read by ``SecretFile`` (IAPCore) as `iap serve` reads
    /// `--service-token-file`: a private file (mode 0600), one trailing newline not part of the token.
    ///
    /// - Parameter tokenFile: The file (made with `openssl rand -hex 32 > FILE`, say).
    /// - Throws: ``IAPError`` `invalidConfiguration` for a file that cannot be read, is open to its group or others,
    ///   or is empty; `invalidKey` for a token that ``init(token:)`` refuses. The token never appears in a message.
    public init(tokenFile: URL) throws(IAPError) {
        try self.init(token: try SecretFile.read(atPath: tokenFile.path, describedAs: "the service token file"))
    }

    /// Whether the request carries the service token.
    ///
    /// - Parameter request: The request.
    /// - Returns: `true` only for one `Authorization: Bearer` header with exactly the token.
    public func isAuthorized(_ request: HTTPServerRequest) -> Bool {
        guard let presented = try? request.bearerToken() else { return false }
        return Self.constantTimeEquals(Array(presented.utf8), token)
    }

    /// Whether two byte strings are equal, in a time that depends on `expected`'s length only.
    static func constantTimeEquals(_ presented: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: presented.count ^ expected.count)
        difference |= presented.count == expected.count ? 0 : 1
        for index in expected.indices {
            let byte = index < presented.count ? presented[index] : ~expected[index]
            difference |= byte ^ expected[index]
        }
        return difference == 0
    }
}
