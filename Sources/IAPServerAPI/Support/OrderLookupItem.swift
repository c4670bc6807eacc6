#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// One transaction of an order, as a support agent sees it: what Apple signed, whose it is, and whether the ledger
/// delivered it.
public struct OrderLookupItem: Codable, Sendable, Hashable {
    /// What Apple says of the purchase now.
    public enum PurchaseState: String, Codable, Sendable, Hashable {
        /// Paid and in force (a subscription period not over yet, or a one-time purchase).
        case active
        /// A subscription period that ended.
        case expired
        /// Refunded by Apple (`REFUND_FULL` or `REFUND_PRORATED`, or a refund without a type).
        case refunded
        /// Revoked for another reason (Family Sharing ended).
        case revoked
    }

    /// Where the owner was found.
    public enum OwnerSource: String, Codable, Sendable, Hashable {
        /// The ledger entry of the transaction.
        case ledger
        /// The user bound to the transaction's appAccountToken.
        case appAccountToken
    }

    /// The transaction id.
    public var transactionId: String
    /// The original transaction id.
    public var originalTransactionId: String?
    /// The product id.
    public var productId: String?
    /// The product type.
    public var type: ProductType?
    /// When it was bought.
    public var purchaseDate: Date?
    /// When its subscription period ends.
    public var expiresDate: Date?
    /// When Apple revoked it.
    public var revocationDate: Date?
    /// Why Apple revoked it.
    public var revocationReason: RevocationReason?
    /// What Apple says of it now.
    public var state: PurchaseState
    /// The appAccountToken the app attached.
    public var appAccountToken: String?
    /// The business user who owns it, when known.
    public var owner: String?
    /// Where ``owner`` was found.
    public var ownerSource: OwnerSource?
    /// Where the ledger's delivery stands, or `nil` when the ledger never recorded it.
    public var ledgerState: OrderState?
    /// Whether the ledger confirmed the grant (even if it was taken back later).
    public var delivered: Bool
    /// With redelivery: the pipeline's outcome (`delivered`, `alreadyDelivered`, `pending`, ...).
    public var redelivery: String?
    /// With redelivery: the error code and message of a failure.
    public var redeliveryError: String?
}
