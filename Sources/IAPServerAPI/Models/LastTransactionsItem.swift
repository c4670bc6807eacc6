public import IAPCore
/// The latest transaction and renewal information of one subscription, in a subscription status response.
///
/// Mirrors Apple's `LastTransactionsItem`, with Apple's JSON names.
public struct LastTransactionsItem: Codable, Hashable, Sendable {
    /// The status of the subscription.
    public var status: SubscriptionStatus?
    /// The original transaction identifier of the subscription.
    public var originalTransactionId: String?
    /// The latest signed transaction of the subscription (`JWSTransaction`).
    public var signedTransactionInfo: String?
    /// The signed renewal information of the subscription (`JWSRenewalInfo`).
    public var signedRenewalInfo: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        status: SubscriptionStatus? = nil,
        originalTransactionId: String? = nil,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil
    ) {
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}
