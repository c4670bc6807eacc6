#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// What a running purchase server saw lately, for the console: the App Store's notifications, the fulfillment's
/// answers and the last scheduled reconciliation, taken from its events (``IAPEvent``) as they are recorded.
///
/// It is kept in memory by each instance, since it started: behind a load balancer, each instance shows what came to
/// it; after a restart, the list begins again. The durable records stay where they are: the ledger, the support
/// audit, the event log (`--events FILE`) and Apple's Get Notification History.
public final class ConsoleActivity: EventSink, Sendable {
    /// One App Store notification as the server processed it.
    public struct Notification: Sendable, Hashable {
        /// When it was processed.
        public var time: Date
        /// Apple's `notificationType`; `nil` when it did not verify.
        public var type: String?
        /// Apple's `subtype`, when it has one.
        public var subtype: String?
        /// The environment it was signed for.
        public var environment: String?
        /// What the processor did: `processed`, `duplicate`, `unowned`, `rejected` or `failed`.
        public var outcome: String
        /// What came of its delivery, when it had one (`delivered`, `revoked`, `deferred`, ...).
        public var delivery: String?
        /// The error code of a failure.
        public var errorCode: String?
        /// The transaction it was about.
        public var transactionId: String?
        /// Its product.
        public var productId: String?
        /// Its owner, when the ledger knows one.
        public var userId: String?
    }

    /// The last scheduled reconciliation this instance ran or skipped.
    public struct Reconciliation: Sendable, Hashable {
        /// When it ended.
        public var time: Date
        /// `clean`, `repaired`, `failed` or `skipped` (another instance held the lock).
        public var outcome: String
        /// What it did, for people.
        public var message: String?
    }

    /// How the fulfillment answered over a period.
    public struct Fulfillment: Sendable, Hashable {
        /// Grants and take-backs it confirmed.
        public var succeeded: Int
        /// Calls that failed (retried or dead-lettered).
        public var failed: Int
    }

    /// How many notifications are kept, newest first.
    public static let keptNotifications = 1_000

    private struct State {
        var notifications: [Notification] = []
        /// Per minute since 1970: the fulfillment's successes and failures, for the last hour.
        var minutes: [Int64: (succeeded: Int, failed: Int)] = [:]
        var reconciliation: Reconciliation?
    }

    private let state = LockedValue(State())

    /// Creates an empty record.
    public init() {}

    /// Takes what the console shows from one event; every other event is ignored.
    public func record(_ event: IAPEvent) {
        let minute = event.time.millisecondsSince1970 / 60_000
        state.withLock { state in
            switch event.event {
            case "delivery.granted", "delivery.revoked", "delivery.failed":
                var counts = state.minutes[minute] ?? (0, 0)
                if event.event == "delivery.failed" {
                    counts.failed += 1
                } else {
                    counts.succeeded += 1
                }
                state.minutes[minute] = counts
                if state.minutes.count > 90 {
                    state.minutes = state.minutes.filter { $0.key > minute - 60 }
                }
            case "reconciliation.run", "reconciliation.skipped":
                state.reconciliation = Reconciliation(
                    time: event.time,
                    outcome: event.outcome ?? "unknown",
                    message: event.message
                )
            case let name where name.hasPrefix("notification."):
                let outcome = String(name.dropFirst("notification.".count))
                state.notifications.append(
                    Notification(
                        time: event.time,
                        type: event.notificationType,
                        subtype: event.notificationSubtype,
                        environment: event.environment,
                        outcome: outcome,
                        delivery: event.outcome == outcome ? nil : event.outcome,
                        errorCode: event.errorCode,
                        transactionId: event.transactionId,
                        productId: event.productId,
                        userId: event.userId
                    )
                )
                if state.notifications.count >= 2 * Self.keptNotifications {
                    state.notifications.removeFirst(state.notifications.count - Self.keptNotifications)
                }
            default:
                break
            }
        }
    }

    /// The notifications kept, newest first (at most ``keptNotifications``).
    public var notifications: [Notification] {
        state.withLock { Array($0.notifications.suffix(Self.keptNotifications).reversed()) }
    }

    /// The last scheduled reconciliation, or `nil` before the first.
    public var lastReconciliation: Reconciliation? {
        state.withLock { $0.reconciliation }
    }

    /// How the fulfillment answered in the hour before `instant` (whole minutes).
    public func fulfillment(inTheHourBefore instant: Date) -> Fulfillment {
        let now = instant.millisecondsSince1970 / 60_000
        return state.withLock { state in
            var total = Fulfillment(succeeded: 0, failed: 0)
            for (minute, counts) in state.minutes where minute > now - 60 && minute <= now {
                total.succeeded += counts.succeeded
                total.failed += counts.failed
            }
            return total
        }
    }
}

/// The events of a purchase server: to the configured sink, and to the console's record.
struct RecordingActivity: EventSink {
    let sink: any EventSink
    let activity: ConsoleActivity

    func record(_ event: IAPEvent) {
        sink.record(event)
        activity.record(event)
    }
}
