import IAPCore

/// What a purchase server does when a parent rescinds consent for a minor's use of the app (`RESCIND_CONSENT`).
public enum RescindConsentPolicy: String, Sendable, Hashable, CaseIterable {
    /// Record it, report it (event `notification.rescindConsent`) and hand it to the integrator's
    /// ``AppNotificationHandler`` (the webhook with `iap serve`), who decides: the default.
    case notify
    /// Also withdraw the access of every purchase the Apple Account made in the app
    /// (``DeliveryPipeline/rescindConsent(appTransactionId:)``), taken back through the fulfillment.
    case revoke
}

/// The purchase server's own handling of app-level notifications: `RESCIND_CONSENT` by its
/// ``RescindConsentPolicy``, each reported as an event, then the integrator's handler.
struct PurchaseServerAppNotifications: AppNotificationHandler {
    let pipeline: DeliveryPipeline
    let rescindConsent: RescindConsentPolicy
    let next: (any AppNotificationHandler)?

    func handleAppNotification(_ notification: VerifiedNotification) async throws {
        let type = notification.payload.notificationType
        if type == .rescindConsent {
            try await rescind(notification)
        }
        try await next?.handleAppNotification(notification)
    }

    private func rescind(_ notification: VerifiedNotification) async throws {
        let environment = notification.payload.appData?.environment?.rawValue
        guard let appTransactionId = notification.appTransaction?.appTransactionId, !appTransactionId.isEmpty else {
            report(
                IAPEvent(
                    time: pipeline.clock.now,
                    event: "notification.rescindConsent",
                    environment: environment,
                    outcome: "noAppTransactionId",
                    message: "the notification's app transaction names no appTransactionId: nothing was withdrawn",
                    notificationType: NotificationType.rescindConsent.rawValue
                )
            )
            return
        }
        var outcome = "notified"
        var message = "consent rescinded for app transaction \(appTransactionId)"
        if rescindConsent == .revoke {
            let withdrawn = try await pipeline.rescindConsent(appTransactionId: appTransactionId)
            outcome = "revoked"
            message += ": \(withdrawn.count) purchase(s) withdrawn"
        }
        report(
            IAPEvent(
                time: pipeline.clock.now,
                event: "notification.rescindConsent",
                environment: environment,
                outcome: outcome,
                message: message,
                notificationType: NotificationType.rescindConsent.rawValue
            )
        )
    }

    private func report(_ event: IAPEvent) {
        pipeline.events.record(event)
    }
}
