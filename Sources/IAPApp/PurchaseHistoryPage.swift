import IAPCore
/// One page of the app's order history, newest first.
public struct PurchaseHistoryPage: Sendable, Hashable {
    /// The purchases on this page, newest first.
    public var items: [PurchaseHistoryItem]
    /// The cursor of the next page, or `nil` on the last page. New purchases never shift later pages.
    public var nextCursor: String?
    /// On the first page, the purchases waiting for a parent's approval (Ask to Buy), newest first: rows to show
    /// above the items. Empty on later pages.
    public var pendingApprovals: [PendingPurchase]

    /// Creates a page.
    ///
    /// - Parameters:
    ///   - items: The purchases.
    ///   - nextCursor: The next page's cursor.
    ///   - pendingApprovals: The purchases waiting for approval (first page only).
    public init(items: [PurchaseHistoryItem], nextCursor: String?, pendingApprovals: [PendingPurchase] = []) {
        self.items = items
        self.nextCursor = nextCursor
        self.pendingApprovals = pendingApprovals
    }
}
