/// A catalog whose products can be replaced while it is in use: a server reloads its catalog file (`iap serve` on
/// `SIGHUP`) without a restart, then asks the pipeline to deliver what was parked for products it did not know
/// (``DeliveryPipeline/releaseParked(limit:)``).
///
/// Each lookup answers from the products as they were at that moment; a replacement is atomic.
public final class ReloadableProductCatalog: ProductCatalog {
    private let current: LockedValue<StaticProductCatalog>

    /// Creates a catalog with its first products.
    ///
    /// - Parameter catalog: The products to start with.
    public init(_ catalog: StaticProductCatalog) {
        current = LockedValue(catalog)
    }

    /// The products as they are now.
    public var catalog: StaticProductCatalog {
        current.withLock { $0 }
    }

    /// Replaces every product at once.
    ///
    /// - Parameter catalog: The new products.
    /// - Returns: The ids of the products the new catalog names and the old one did not, sorted.
    @discardableResult
    public func replace(with catalog: StaticProductCatalog) -> [String] {
        let previous = current.withLock { stored in
            let previous = stored
            stored = catalog
            return previous
        }
        return catalog.products.map(\.productId).filter { previous[productId: $0] == nil }.sorted()
    }

    /// The product with this id, as the catalog is now.
    ///
    /// - Throws: ``IAPError`` with code ``IAPError/Code/unknownProduct`` naming the id.
    public func product(id: String) async throws -> CatalogProduct {
        try catalog.product(id: id)
    }

    /// Every product, as the catalog is now.
    public func allProducts() async throws -> [CatalogProduct] {
        catalog.allProducts()
    }
}
