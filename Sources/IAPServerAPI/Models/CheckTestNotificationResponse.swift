import IAPCore
/// The test notification and its send attempts: the body of the App Store Server API's Get Test Notification
/// Status.
///
/// Mirrors Apple's `CheckTestNotificationResponse` (`GET /inApps/v1/notifications/test/{testNotificationToken}`),
/// with Apple's JSON names.
public struct CheckTestNotificationResponse: Codable, Hashable, Sendable {
    /// The signed test notification.
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
