public import IAPCore
/// A product as the device's store presents it.
public struct StoreProduct: Sendable, Hashable, Codable {
    /// The product id, as configured in App Store Connect.
    public var id: String
    /// The localized name.
    public var displayName: String
    /// The localized price, formatted for display.
    public var displayPrice: String
    /// The kind of product, when the store says.
    public var type: ProductType?
    /// The subscription group of an auto-renewable subscription, for
    /// ``PurchaseCoordinator/subscriptionStatuses(groupId:)`` and ``PurchaseCoordinator/showManageSubscriptions(groupId:)``.
    public var subscriptionGroupId: String?

    /// Creates a product.
    ///
    /// - Parameters:
    ///   - id: The product id.
    ///   - displayName: The localized name.
    ///   - displayPrice: The localized, formatted price.
    ///   - type: The kind of product.
    ///   - subscriptionGroupId: The subscription group of an auto-renewable subscription.
    public init(
        id: String,
        displayName: String,
        displayPrice: String,
        type: ProductType?,
        subscriptionGroupId: String? = nil
    ) {
        self.id = id
        self.displayName = displayName
        self.displayPrice = displayPrice
        self.type = type
        self.subscriptionGroupId = subscriptionGroupId
    }
}
