import IAPCore
public import IAPHTTPServer

/// Tells which user an app's request is made by: the authentication of `POST /iap/v1/transactions`.
///
/// ``HS256UserAuthenticator`` is the bundled one (an HS256 JWT in `Authorization: Bearer`); a server whose users sign
/// in another way (sessions, OAuth introspection, an RS256 JWT of an identity provider) conforms its own type.
///
/// ## Implementation requirements
/// - Return the business user id only for a request whose credential is valid now; throw otherwise. Never fall back
///   to a user id the request body names.
/// - Throw ``IAPError`` with code `unauthenticated` and the operator's reason in the message (an expired token, a bad
///   signature); the client is told only that the request is not authenticated. Never put the credential itself in the
///   message.
/// - Compare secrets in constant time.
/// - Safe to call from many tasks at once.
public protocol UserAuthenticator: Sendable {
    /// The user a request is made by.
    ///
    /// - Parameter request: The request, headers included.
    /// - Returns: The business user id.
    /// - Throws: ``IAPError`` `unauthenticated` with the reason, for the operator.
    func authenticate(_ request: HTTPServerRequest) async throws -> String
}

extension HTTPServerRequest {
    /// The token of the request's one `Authorization: Bearer <token>` header.
    ///
    /// - Returns: The token.
    /// - Throws: ``IAPError`` `unauthenticated` when there is no `Authorization` header, more than one, another scheme,
    ///   or a token that is empty or holds a space.
    func bearerToken() throws -> Substring {
        let values = headers.values(for: "Authorization")
        guard let value = values.first else {
            throw IAPError(.unauthenticated, "the request has no Authorization header")
        }
        guard values.count == 1 else {
            throw IAPError(.unauthenticated, "the request has \(values.count) Authorization headers")
        }
        let trimmed = value.drop { $0 == " " || $0 == "\t" }
        guard let space = trimmed.firstIndex(where: { $0 == " " || $0 == "\t" }),
            trimmed[..<space].lowercased() == "bearer"
        else {
            throw IAPError(.unauthenticated, "the Authorization header is not 'Bearer <token>'")
        }
        var token = trimmed[space...].drop { $0 == " " || $0 == "\t" }
        while let last = token.last, last == " " || last == "\t" {
            token = token.dropLast()
        }
        guard !token.isEmpty, !token.contains(where: { $0 == " " || $0 == "\t" }) else {
            throw IAPError(.unauthenticated, "the Authorization header is not 'Bearer <token>'")
        }
        return token
    }
}
