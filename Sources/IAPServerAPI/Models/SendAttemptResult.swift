public import IAPCore
/// The outcome of one attempt of the App Store to send a notification to the server.
///
/// Mirrors Apple's `SendAttemptResult`, the type of the `sendAttemptResult` field of a notification history or test
/// notification status entry.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and ``isKnown`` is `false`
/// for it. Never `switch` exhaustively over the known values.
public struct SendAttemptResult: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The server answered with success (`SUCCESS`).
    public static let success = SendAttemptResult(rawValue: "SUCCESS")
    /// The server did not answer in time (`TIMED_OUT`).
    public static let timedOut = SendAttemptResult(rawValue: "TIMED_OUT")
    /// The TLS connection failed (`TLS_ISSUE`).
    public static let tlsIssue = SendAttemptResult(rawValue: "TLS_ISSUE")
    /// The server redirected in a loop (`CIRCULAR_REDIRECT`).
    public static let circularRedirect = SendAttemptResult(rawValue: "CIRCULAR_REDIRECT")
    /// The server did not respond (`NO_RESPONSE`).
    public static let noResponse = SendAttemptResult(rawValue: "NO_RESPONSE")
    /// The connection failed (`SOCKET_ISSUE`).
    public static let socketIssue = SendAttemptResult(rawValue: "SOCKET_ISSUE")
    /// The response used a character set the App Store does not support (`UNSUPPORTED_CHARSET`).
    public static let unsupportedCharset = SendAttemptResult(rawValue: "UNSUPPORTED_CHARSET")
    /// The response was invalid (`INVALID_RESPONSE`).
    public static let invalidResponse = SendAttemptResult(rawValue: "INVALID_RESPONSE")
    /// The server closed the connection early (`PREMATURE_CLOSE`).
    public static let prematureClose = SendAttemptResult(rawValue: "PREMATURE_CLOSE")
    /// The server answered with an unsuccessful HTTP status (`UNSUCCESSFUL_HTTP_RESPONSE_CODE`).
    public static let unsuccessfulHttpResponseCode = SendAttemptResult(rawValue: "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
    /// Another failure (`OTHER`).
    public static let other = SendAttemptResult(rawValue: "OTHER")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [SendAttemptResult] = [
        .success,
        .timedOut,
        .tlsIssue,
        .circularRedirect,
        .noResponse,
        .socketIssue,
        .unsupportedCharset,
        .invalidResponse,
        .prematureClose,
        .unsuccessfulHttpResponseCode,
        .other,
    ]
}
