public import IAPCore

/// The health of the purchase outbox, for an app's diagnostics screen: ``PurchaseCoordinator/outboxStatus()``.
public struct OutboxStatus: Sendable, Hashable {
    /// Whether the outbox is kept on disk. `false` when its storage could neither be read nor moved aside
    /// (``unavailableError``): purchases still work and are delivered, but what the outbox holds lives in memory
    /// only until the next launch, which tries the storage again; nothing paid is lost, as the store keeps every
    /// transaction the server has not confirmed.
    public var isDurable: Bool
    /// Why the storage could not be used, when ``isDurable`` is `false`.
    public var unavailableError: IAPError?
    /// Every unreadable outbox moved aside, oldest first (the last 20), remembered across launches.
    public var quarantines: [OutboxQuarantine]
    /// Purchases the server has not confirmed yet.
    public var pendingDeliveries: Int
    /// Of those, the purchases waiting for the customer to sign in again (the server answered 401 or 403).
    public var awaitingAuthentication: Int

    /// Creates a status.
    ///
    /// - Parameters:
    ///   - isDurable: Whether the outbox is kept on disk.
    ///   - unavailableError: Why the storage could not be used.
    ///   - quarantines: The outboxes moved aside.
    ///   - pendingDeliveries: Purchases not confirmed yet.
    ///   - awaitingAuthentication: Purchases waiting for a sign-in.
    public init(
        isDurable: Bool,
        unavailableError: IAPError?,
        quarantines: [OutboxQuarantine],
        pendingDeliveries: Int,
        awaitingAuthentication: Int
    ) {
        self.isDurable = isDurable
        self.unavailableError = unavailableError
        self.quarantines = quarantines
        self.pendingDeliveries = pendingDeliveries
        self.awaitingAuthentication = awaitingAuthentication
    }
}
