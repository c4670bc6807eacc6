/// A purchase the customer started on the App Store rather than in the app (StoreKit's `PurchaseIntent`): a promoted
/// in-app purchase, or a win-back offer redeemed outside the app when Streamlined Purchasing is off. The app
/// completes it with ``PurchaseCoordinator/purchase(_:for:)``, through the same outbox and server path as any purchase.
public struct AppStorePurchaseIntent: Sendable, Hashable {
    /// The product the customer chose.
    public var productId: String
    /// The subscription offer the customer chose with it (a win-back offer), if any.
    public var offerId: String?

    /// Creates an intent.
    ///
    /// - Parameters:
    ///   - productId: The product.
    ///   - offerId: The win-back offer, if any.
    public init(productId: String, offerId: String? = nil) {
        self.productId = productId
        self.offerId = offerId
    }
}
