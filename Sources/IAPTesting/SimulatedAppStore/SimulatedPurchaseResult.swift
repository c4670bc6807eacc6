public import IAPCore

/// What a purchase in ``SimulatedAppStore`` came to, like StoreKit's `Product.PurchaseResult`.
public enum SimulatedPurchaseResult: Sendable, Hashable {
    /// The purchase succeeded: the transaction to deliver. For a product already owned or subscribed to, and for a
    /// downgrade that takes effect at the next renewal, this is the existing (latest) transaction, re-signed.
    case purchased(SimulatedTransaction)
    /// Ask to Buy: a parent must approve. Pass the request id to ``SimulatedAppStore/approveAskToBuy(_:)`` or
    /// ``SimulatedAppStore/declineAskToBuy(_:)``. Nothing is charged or recorded until then.
    case pending(askToBuyRequestId: String)
    /// The purchase failed; nothing was charged or recorded.
    case failed(IAPError)

    /// The transaction of a successful purchase, or `nil`.
    public var transaction: SimulatedTransaction? {
        if case .purchased(let transaction) = self {
            return transaction
        }
        return nil
    }
}
