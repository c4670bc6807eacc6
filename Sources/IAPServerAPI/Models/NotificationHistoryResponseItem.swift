import IAPCore
/// One notification in a notification history page.
///
/// Mirrors Apple's `NotificationHistoryResponseItem`, with Apple's JSON names.
public struct NotificationHistoryResponseItem: Codable, Hashable, Sendable {
    /// The signed notification (`signedPayload` of `ResponseBodyV2`).
    public var signedPayload: String?
    /// Each attempt to send it, oldest first.
    public var sendAttempts: [SendAttemptItem]?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        signedPayload: String? = nil,
        sendAttempts: [SendAttemptItem]? = nil
    ) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}
