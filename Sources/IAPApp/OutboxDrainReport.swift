import IAPCore
/// What one drain of the purchase outbox did.
public struct OutboxDrainReport: Sendable, Hashable {
    /// Purchases the server confirmed now (and finished).
    public var delivered: [String] = []
    /// Purchases still waiting (the server unreachable, pending, deferred or rejected).
    public var waiting: [String] = []
    /// Purchases left for later because their backoff was not over.
    public var notDue: [String] = []
    /// Unfinished transactions the store still held that the outbox did not (found by
    /// ``PurchaseCoordinator/sweep(force:)``), submitted now.
    public var recovered: [String] = []
    /// Of the purchases still waiting, those whose submission the server refused until the customer signs in again.
    public var awaitingAuthentication: [String] = []

    /// Creates an empty report.
    public init() {}
}
