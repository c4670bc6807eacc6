import IAPCore
/// One page of the app's order history, newest first.
public struct PurchaseHistoryPage: Sendable, Hashable {
    /// The purchases on this page, newest first.
    public var items: [PurchaseHistoryItem]
    /// The cursor of the next page, or `nil` on the last page. New purchases never shift later pages.
    public var nextCursor: String?

    /// Creates a page.
    ///
    /// - Parameters:
    ///   - items: The purchases.
    ///   - nextCursor: The next page's cursor.
    public init(items: [PurchaseHistoryItem], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}
