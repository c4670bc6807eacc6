import IAPCore
/// The token of a test notification: the body of the App Store Server API's Request a Test Notification.
///
/// Mirrors Apple's `SendTestNotificationResponse` (`POST /inApps/v1/notifications/test`), with Apple's JSON names.
public struct SendTestNotificationResponse: Codable, Hashable, Sendable {
    /// The token to pass to Get Test Notification Status.
    public var testNotificationToken: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        testNotificationToken: String? = nil
    ) {
        self.testNotificationToken = testNotificationToken
    }
}
