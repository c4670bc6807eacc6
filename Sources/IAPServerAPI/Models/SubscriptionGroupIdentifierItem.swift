import IAPCore
/// The subscriptions of one subscription group, in a subscription status response.
///
/// Mirrors Apple's `SubscriptionGroupIdentifierItem`, with Apple's JSON names.
public struct SubscriptionGroupIdentifierItem: Codable, Hashable, Sendable {
    /// The subscription group identifier.
    public var subscriptionGroupIdentifier: String?
    /// The latest transaction of each subscription of the customer in the group.
    public var lastTransactions: [LastTransactionsItem]?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(subscriptionGroupIdentifier: String? = nil, lastTransactions: [LastTransactionsItem]? = nil) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}
