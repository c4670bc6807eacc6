public import IAPCore
/// What a purchase through ``PurchaseCoordinator`` came to.
public enum PurchaseResult: Sendable, Hashable {
    /// Why a purchase is pending.
    public enum PendingReason: Sendable, Hashable {
        /// A parent (Ask to Buy) or a bank must approve; the purchase arrives later through the updates and is
        /// delivered then.
        case awaitingApproval
        /// Paid; the server has not confirmed delivery yet. It is in the outbox and submitted again until it is.
        case awaitingDelivery(transactionId: String)
        /// Paid; the server wants the customer to sign in again (it answered 401 or 403). The purchase is in the
        /// outbox and delivered after ``PurchaseCoordinator/signIn(_:)`` or ``PurchaseCoordinator/drainOutbox(force:)``.
        case authenticationRequired(transactionId: String)
    }

    /// Paid, and the server confirmed delivery; the store's transaction is finished.
    case delivered(PurchaseHistoryItem)
    /// Not delivered yet, but nothing is lost.
    case pending(PendingReason)
    /// The customer cancelled; nothing was charged.
    case cancelled
    /// The purchase failed; see ``failureKind`` for what to tell the customer.
    case failed(IAPError)

    /// The kind of failure, for a failed purchase.
    public var failureKind: PurchaseFailureKind? {
        if case .failed(let error) = self {
            return PurchaseFailureKind.classify(error)
        }
        return nil
    }
}
