// includes: pipeline
// The notification processor in front of the pipeline (Notifications.md).
import IAPCore

let processor: NotificationProcessor = assumed()
