#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// The `X-IAP-Signature` header of a webhook: `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256>`, the code computed
/// over `"<t>.<body bytes>"` with the shared secret.
///
/// The timestamp is signed with the body, so a receiver that refuses old timestamps also refuses a replayed request;
/// the `Idempotency-Key` header makes a retried one harmless.
///
/// ```swift
/// let signature = try WebhookSignature(header: request.header("X-IAP-Signature") ?? "")
/// guard signature.isValid(for: body, authenticator: hmac, now: clock.now) else { return 401 }
/// ```
public struct WebhookSignature: Sendable, Hashable {
    /// The name of the header.
    public static let headerName = "X-IAP-Signature"

    /// When the request was signed, in whole seconds since 1970.
    public var timestamp: Int64
    /// The HMAC-SHA256 code (`v1`).
    public var code: [UInt8]

    /// Signs a body now.
    ///
    /// - Parameters:
    ///   - body: The request body, exactly as sent.
    ///   - timestamp: The signing time in seconds since 1970.
    ///   - authenticator: HMAC-SHA256 keyed with the shared secret.
    public init(signing body: some Collection<UInt8>, at timestamp: Int64, authenticator: some MessageAuthenticator) {
        self.timestamp = timestamp
        self.code = authenticator.authenticationCode(for: Self.signedBytes(body, timestamp: timestamp))
    }

    /// Reads a header value.
    ///
    /// - Parameter header: `t=<seconds>,v1=<hex>`; other `key=value` parts are ignored, so a later scheme can be
    ///   added beside `v1`.
    /// - Throws: ``IAPError`` `malformedRequest` when `t` or `v1` is missing or not well formed.
    public init(header: String) throws {
        var timestamp: Int64?
        var code: [UInt8]?
        for part in header.split(separator: ",") {
            let pair = part.drop { $0 == " " }.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            switch pair[0] {
            case "t": timestamp = Int64(pair[1])
            case "v1": code = Hex.decode(pair[1])
            default: continue
            }
        }
        guard let timestamp, let code, code.count == 32 else {
            throw IAPError(.malformedRequest, "the \(Self.headerName) header is not t=<seconds>,v1=<64 hex digits>")
        }
        self.timestamp = timestamp
        self.code = code
    }

    /// The header value: `t=<seconds>,v1=<hex>`.
    public var header: String { "t=\(timestamp),v1=\(Hex.encode(code))" }

    /// Whether the signature is this body's and recent.
    ///
    /// - Parameters:
    ///   - body: The body as received.
    ///   - authenticator: HMAC-SHA256 keyed with the shared secret.
    ///   - now: The receiver's time.
    ///   - tolerance: How far the timestamp may be from `now`, either way (5 minutes by default).
    /// - Returns: `true` when the code matches (compared in constant time) and the timestamp is within tolerance.
    public func isValid(
        for body: some Collection<UInt8>,
        authenticator: some MessageAuthenticator,
        now: Date,
        tolerance: Duration = .seconds(300)
    ) -> Bool {
        let age = abs(now.timeIntervalSince1970 - Double(timestamp))
        guard age <= tolerance.timeInterval else { return false }
        return authenticator.isValid(code, for: Self.signedBytes(body, timestamp: timestamp))
    }

    private static func signedBytes(_ body: some Collection<UInt8>, timestamp: Int64) -> [UInt8] {
        Array("\(timestamp).".utf8) + body
    }
}
