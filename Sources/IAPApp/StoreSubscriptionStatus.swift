public import IAPCore

/// One entry of the device's store's subscription status for a group, as StoreKit's
/// `Product.SubscriptionInfo.Status`: the renewal state, the latest transaction and the renewal information, both
/// as the compact JWS the App Store signed.
///
/// ``PurchaseCoordinator/subscriptionStatuses(groupId:)`` reads it into an ``AppSubscriptionStatus``.
public struct StoreSubscriptionStatus: Sendable, Hashable {
    /// The renewal state, with Apple's raw values (`1` subscribed ... `5` revoked).
    public var state: SubscriptionStatus
    /// The latest transaction of the subscription (JWS).
    public var signedTransaction: String
    /// The subscription's renewal information (JWS).
    public var signedRenewalInfo: String

    /// Creates a status.
    ///
    /// - Parameters:
    ///   - state: The renewal state.
    ///   - signedTransaction: The latest transaction (JWS).
    ///   - signedRenewalInfo: The renewal information (JWS).
    public init(state: SubscriptionStatus, signedTransaction: String, signedRenewalInfo: String) {
        self.state = state
        self.signedTransaction = signedTransaction
        self.signedRenewalInfo = signedRenewalInfo
    }
}
