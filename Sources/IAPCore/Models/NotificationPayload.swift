#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The decoded payload of an App Store Server Notification V2.
///
/// Mirrors Apple's `ResponseBodyV2DecodedPayload`. Exactly one of ``data``, ``summary``, ``externalPurchaseToken``
/// and ``appData`` is normally present, depending on ``notificationType``. The signed transaction, renewal
/// information and app transaction nested in them are separate JWS that must be verified on their own.
/// ``notificationUUID`` identifies the notification across Apple's retries.
public struct NotificationPayload: SignedPayload, Hashable {
    /// The event the notification reports.
    public var notificationType: NotificationType?
    /// The detail of the event, when the type has one.
    public var subtype: NotificationSubtype?
    /// The unique identifier of the notification; the same for every retry of it.
    public var notificationUUID: String?
    /// The app and signed data the notification is about.
    public var data: NotificationData?
    /// The notification version, `2.0`.
    public var version: String?
    /// When the App Store signed the notification.
    public var signedDate: Date?
    /// The result of a mass renewal-date extension, for `RENEWAL_EXTENSION` with subtype `SUMMARY`.
    public var summary: NotificationSummary?
    /// The unreported token, for `EXTERNAL_PURCHASE_TOKEN`.
    public var externalPurchaseToken: ExternalPurchaseToken?
    /// The app and its signed app transaction, for `RESCIND_CONSENT`.
    public var appData: AppData?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        notificationType: NotificationType? = nil,
        subtype: NotificationSubtype? = nil,
        notificationUUID: String? = nil,
        data: NotificationData? = nil,
        version: String? = nil,
        signedDate: Date? = nil,
        summary: NotificationSummary? = nil,
        externalPurchaseToken: ExternalPurchaseToken? = nil,
        appData: AppData? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.data = data
        self.version = version
        self.signedDate = signedDate
        self.summary = summary
        self.externalPurchaseToken = externalPurchaseToken
        self.appData = appData
    }
}

extension NotificationPayload {
    /// The date the App Store signed the notification, ``signedDate``.
    public var signingDate: Date? { signedDate }
}
