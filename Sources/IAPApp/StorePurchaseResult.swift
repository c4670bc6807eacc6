import IAPCore
/// What the device's store answered to a purchase.
public enum StorePurchaseResult: Sendable, Hashable {
    /// The purchase completed: the signed transaction (JWS), not yet finished.
    case success(signedTransaction: String)
    /// A parent (Ask to Buy) or a bank must approve; the transaction arrives later through the updates.
    case pending
    /// The customer backed out; nothing was charged.
    case userCancelled
}
