#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

extension FileEntitlementStore {
    /// Records that a notification was processed.
    ///
    /// - Parameters:
    ///   - notificationUUID: The notification's `notificationUUID`.
    ///   - instant: When it was processed.
    /// - Returns: `true` the first time for this UUID, `false` after.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an empty UUID, or `storageFailure`.
    public func markNotificationProcessed(_ notificationUUID: String, at instant: Date) async throws -> Bool {
        try checkOpen()
        guard try state.planNotification(notificationUUID) else {
            return try await answer(false)
        }
        let lsn = try append(.notification(uuid: notificationUUID, at: instant)) {
            $0.markNotification(notificationUUID, at: instant)
        }
        try await waitUntilDurable(lsn)
        return true
    }

    /// Whether a notification was processed.
    public func isNotificationProcessed(_ notificationUUID: String) async throws -> Bool {
        try checkOpen()
        return try await answer(state.notifications[notificationUUID] != nil)
    }
}
