import IAPCore
/// What one drain of the purchase outbox did.
public struct OutboxDrainReport: Sendable, Hashable {
    /// Purchases the server confirmed now (and finished).
    public var delivered: [String] = []
    /// Purchases still waiting (the server unreachable, pending, deferred or rejected).
    public var waiting: [String] = []
    /// Purchases left for later because their backoff was not over.
    public var notDue: [String] = []

    /// Creates an empty report.
    public init() {}
}
