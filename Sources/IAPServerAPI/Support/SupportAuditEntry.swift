#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// One line of the support audit log: who did what, when, to which order, and how it ended.
public struct SupportAuditEntry: Codable, Sendable, Hashable {
    /// What one transaction's action ended in.
    public struct Outcome: Codable, Sendable, Hashable {
        /// The transaction id.
        public var transactionId: String
        /// The delivery outcome's name (`delivered`, `alreadyDelivered`, `pending`, `deferred`, `revoked`,
        /// `rejected`), or `requested` in the entry written before the action.
        public var outcome: String
        /// The error code and message, for a failure.
        public var error: String?
        /// The product, when the transaction verified.
        public var productId: String?
        /// For a transaction delivered now: the user it was granted to.
        public var userId: String?
        /// For a transaction delivered now: the units the fulfillment hook was asked to grant (consumable units, or 1).
        public var units: Int64?

        /// Creates an outcome.
        ///
        /// - Parameters:
        ///   - transactionId: The transaction id.
        ///   - outcome: The delivery outcome's name, or `requested`.
        ///   - error: The error code and message of a failure.
        ///   - productId: The product.
        ///   - userId: For a transaction delivered now, its user.
        ///   - units: For a transaction delivered now, the units granted.
        public init(
            transactionId: String,
            outcome: String,
            error: String? = nil,
            productId: String? = nil,
            userId: String? = nil,
            units: Int64? = nil
        ) {
            self.transactionId = transactionId
            self.outcome = outcome
            self.error = error
            self.productId = productId
            self.userId = userId
            self.units = units
        }
    }

    /// When.
    public var at: Date
    /// Who: the support agent or tool that acted.
    public var actor: String
    /// What: `redeliver.requested` before the deliveries, `redeliver.completed` after.
    public var action: String
    /// The order id from the customer's receipt.
    public var orderId: String
    /// The user the deliveries were asked for, if the agent named one.
    public var userId: String?
    /// Per transaction, what happened.
    public var outcomes: [Outcome]
    /// The path grants took: how the delivery pipeline's fulfillment hook reaches the customer, such as
    /// `webhook wallet.example.com` or `ledger-only` (the ledger is the entitlement source); `nil` when not told.
    public var fulfillment: String?

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - at: When.
    ///   - actor: Who.
    ///   - action: What.
    ///   - orderId: The order id.
    ///   - userId: The user named, if any.
    ///   - outcomes: Per transaction, what happened.
    public init(at: Date, actor: String, action: String, orderId: String, userId: String?, outcomes: [Outcome]) {
        self.at = at
        self.actor = actor
        self.action = action
        self.orderId = orderId
        self.userId = userId
        self.outcomes = outcomes
    }
}
