#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// The filters of a notification history request: the body of the App Store Server API's Get Notification History.
///
/// Mirrors Apple's `NotificationHistoryRequest` (`POST /inApps/v1/notifications/history`), with Apple's JSON names;
/// dates encode as whole milliseconds since 1970. Apple requires ``startDate`` and ``endDate`` (at most 180 days
/// back) and accepts at most one of ``notificationType`` (with ``notificationSubtype``) and ``transactionId``.
public struct NotificationHistoryRequest: Codable, Hashable, Sendable {
    /// The start of the period, inclusive.
    public var startDate: Date?
    /// The end of the period, exclusive.
    public var endDate: Date?
    /// Only notifications of this type.
    public var notificationType: NotificationType?
    /// Only notifications of this subtype; requires ``notificationType``.
    public var notificationSubtype: NotificationSubtype?
    /// Only notifications about this transaction (any transaction id of the customer).
    public var transactionId: String?
    /// Only notifications the App Store failed to deliver.
    public var onlyFailures: Bool?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        startDate: Date? = nil,
        endDate: Date? = nil,
        notificationType: NotificationType? = nil,
        notificationSubtype: NotificationSubtype? = nil,
        transactionId: String? = nil,
        onlyFailures: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }
}
