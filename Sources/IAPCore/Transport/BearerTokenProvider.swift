/// Supplies the `Authorization: Bearer` token for App Store Server API requests.
///
/// `AppStoreServerAPITokenProvider` in `IAPCrypto` signs ES256 JWTs with an App Store Connect `.p8` key.
///
/// ## Implementation requirements
/// - ``token()`` returns a token that stays valid long enough for one request and its retries.
/// - After ``invalidate()``, the next ``token()`` returns a freshly minted token; the API client calls
///   it once after an HTTP 401.
/// - Safe to call from many tasks at once.
public protocol BearerTokenProvider: Sendable {
    /// Returns a token for the `Authorization: Bearer` header.
    ///
    /// - Throws: ``IAPError`` if no token can be made.
    func token() async throws -> String

    /// Forgets any reused token, so the next ``token()`` mints a new one.
    func invalidate() async
}
