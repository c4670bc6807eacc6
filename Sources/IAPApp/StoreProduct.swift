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

    /// Creates a product.
    ///
    /// - Parameters:
    ///   - id: The product id.
    ///   - displayName: The localized name.
    ///   - displayPrice: The localized, formatted price.
    ///   - type: The kind of product.
    public init(id: String, displayName: String, displayPrice: String, type: ProductType?) {
        self.id = id
        self.displayName = displayName
        self.displayPrice = displayPrice
        self.type = type
    }
}
