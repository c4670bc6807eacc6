/// What the business sells: product id → kind, subscription group, entitlements, units, duration.
///
/// The delivery pipeline asks the catalog about every verified transaction, and the entitlement engine
/// works from a snapshot of it (``snapshot()``, ``EntitlementEngine/init(snapshotOf:refundPolicy:proratedRefunds:)``). `StaticProductCatalog` (built in code or loaded from JSON or an Xcode
/// `.storekit` file) is the standard implementation; a catalog kept in a database or fetched from a
/// configuration service conforms the same way.
///
/// ## Implementation requirements
/// - ``product(id:)`` returns the product, or throws ``IAPError`` with code
///   ``IAPError/Code/unknownProduct`` naming the id; it never returns a guessed product.
/// - ``allProducts()`` returns every product exactly once, each with a unique `productId`.
/// - The answers of one call are consistent with each other; a catalog that changes over time
///   (a remote one) may answer differently on later calls.
/// - Safe to call from many tasks at once.
public protocol ProductCatalog: Sendable {
    /// The product with an id.
    ///
    /// - Parameter id: The App Store product id.
    /// - Returns: The product.
    /// - Throws: ``IAPError`` with code `unknownProduct` when the catalog has no such product.
    func product(id: String) async throws -> CatalogProduct

    /// Every product in the catalog.
    ///
    /// - Throws: ``IAPError`` if the catalog cannot be read.
    func allProducts() async throws -> [CatalogProduct]

    /// The product with an id, of the app with a bundle id: what the delivery pipeline asks about a purchase.
    ///
    /// A catalog of one app answers ``product(id:)`` whatever the bundle id (the default); one of several apps
    /// (``AppRoutingCatalog``) answers from that app's products, so that two apps may sell products with the same id.
    ///
    /// - Parameters:
    ///   - id: The App Store product id.
    ///   - bundleId: The bundle id of the purchase, or `nil` when it names none.
    /// - Returns: The product.
    /// - Throws: ``IAPError`` with code `unknownProduct` when the app's catalog has no such product.
    func product(id: String, bundleId: String?) async throws -> CatalogProduct
}

extension ProductCatalog {
    /// ``product(id:)``: a catalog of one app answers whatever the bundle id.
    public func product(id: String, bundleId: String?) async throws -> CatalogProduct {
        try await product(id: id)
    }

    /// The catalog as it is now, as a ``StaticProductCatalog``: what the synchronous, pure
    /// ``EntitlementEngine`` works from. A `StaticProductCatalog` is its own snapshot.
    ///
    /// - Returns: A catalog of ``allProducts()``, checked as ``StaticProductCatalog/init(products:storeKitSettings:)``
    ///   checks products.
    /// - Throws: ``IAPError`` when the catalog cannot be read, or `invalidConfiguration` when a product it lists is
    ///   invalid or listed twice.
    public func snapshot() async throws -> StaticProductCatalog {
        if let snapshot = self as? StaticProductCatalog {
            return snapshot
        }
        return try StaticProductCatalog(products: try await allProducts())
    }
}
