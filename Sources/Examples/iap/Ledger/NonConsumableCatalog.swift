import IAPCore

/// The catalog used when none is configured: every product is a non-consumable that unlocks itself.
struct NonConsumableCatalog: ProductCatalog {
    func product(id: String) async throws -> CatalogProduct {
        CatalogProduct(productId: id, kind: .nonConsumable, entitlements: [id])
    }

    func allProducts() async throws -> [CatalogProduct] {
        []
    }
}
