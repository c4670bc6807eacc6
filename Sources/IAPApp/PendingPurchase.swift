#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// A purchase waiting for a parent's approval (Ask to Buy): it has no transaction yet, and shows as a pending row
/// at the top of the order history (``PurchaseHistoryPage/pendingApprovals``).
///
/// StoreKit never reports a decline: the row goes away when the approved transaction arrives, or after
/// ``PurchaseCoordinator/Configuration/pendingApprovalLifetime`` (Apple's Ask to Buy requests last 24 hours, and
/// asking again restarts them).
public struct PendingPurchase: Sendable, Hashable {
    /// The product asked for.
    public var productId: String
    /// The business user the purchase is for.
    public var userId: String
    /// The business order id, if the purchase was made for one.
    public var orderId: String?
    /// How many.
    public var quantity: Int
    /// When the approval was last asked for.
    public var requestedAt: Date

    /// Creates a pending row.
    ///
    /// - Parameters:
    ///   - productId: The product asked for.
    ///   - userId: The business user.
    ///   - orderId: The business order id.
    ///   - quantity: How many.
    ///   - requestedAt: When the approval was asked for.
    public init(productId: String, userId: String, orderId: String?, quantity: Int, requestedAt: Date) {
        self.productId = productId
        self.userId = userId
        self.orderId = orderId
        self.quantity = quantity
        self.requestedAt = requestedAt
    }
}
