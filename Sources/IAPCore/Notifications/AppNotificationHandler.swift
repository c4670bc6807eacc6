/// What the integrator does with the App Store Server Notifications about the app and an Apple Account rather than
/// one purchase's delivery: `RESCIND_CONSENT` (a parent withdrew consent for a minor's use of the app: age-assurance
/// rules require the minor's access to end), `EXTERNAL_PURCHASE_TOKEN`, and the Advanced Commerce API's
/// `METADATA_UPDATE`, `MIGRATION` and `PRICE_CHANGE` (``NotificationType/isAppLevel``).
///
/// The ``NotificationProcessor`` calls it once the notification verified (a `RESCIND_CONSENT`'s signed app
/// transaction with it, in ``VerifiedNotification/appTransaction``) and any purchase in it was applied, and marks the
/// notification processed only after it returns: a throw answers the App Store with a 5xx so that it sends the
/// notification again, and a replay of a processed one is a duplicate that never reaches it. A crash between the
/// call and the mark calls it again with the same ``NotificationPayload/notificationUUID``: key what it does by it.
public protocol AppNotificationHandler: Sendable {
    /// Handles one app-level notification.
    ///
    /// - Parameter notification: The verified notification.
    /// - Throws: Any error; the App Store then sends the notification again.
    func handleAppNotification(_ notification: VerifiedNotification) async throws
}

extension NotificationType {
    /// The notification types about the app or an Apple Account rather than one purchase's delivery, which go to an
    /// ``AppNotificationHandler``.
    public static let appLevel: Set<NotificationType> = [
        .rescindConsent, .externalPurchaseToken, .metadataUpdate, .migration, .priceChange,
    ]

    /// Whether the type is one of ``appLevel``.
    public var isAppLevel: Bool { Self.appLevel.contains(self) }
}
