/// A product catalog fixed when it is created: built in code, or loaded from JSON or an Xcode `.storekit` file.
///
/// The catalog checks its products once, when it is created, so that every later answer comes from a
/// consistent list: product ids are unique and not empty, consumables add at least one unit, every
/// auto-renewable subscription names its group and every non-renewing subscription has a duration.
///
/// Besides the ``ProductCatalog`` requirements it answers synchronously (``subscript(productId:)``,
/// ``products``), which is what the pure ``EntitlementEngine`` works from.
///
/// ```swift
/// let catalog = try StaticProductCatalog(products: [
///     CatalogProduct(productId: "coins100", kind: .consumable, unitsPerPurchase: 100),
///     CatalogProduct(
///         productId: "pro.monthly", kind: .autoRenewable, subscriptionGroupId: "pro", entitlements: ["pro"]),
/// ])
/// ```
///
/// To load one from a file, see ``init(jsonData:entitlements:nonRenewingDurations:defaultNonRenewingDuration:)``.
public struct StaticProductCatalog: ProductCatalog, Hashable {
    /// The products, in the order they were given.
    public let products: [CatalogProduct]

    /// The `.storekit` file's settings, when the catalog was loaded from one; `nil` otherwise.
    public let storeKitSettings: StoreKitConfigurationSettings?

    /// What loading the catalog found doubtful but not wrong, for people: a consumable of a `.storekit` file whose
    /// pack size nothing gave (each purchase then adds one unit). Empty for a catalog built in code.
    public let warnings: [String]

    private let indexById: [String: Int]

    /// A catalog that lists no product: every lookup is `unknownProduct`.
    public static var empty: StaticProductCatalog {
        StaticProductCatalog(products: [], storeKitSettings: nil, warnings: [], indexById: [:])
    }

    /// Creates a catalog from products.
    ///
    /// - Parameters:
    ///   - products: The products; each `productId` once.
    ///   - storeKitSettings: The settings of the `.storekit` file the products came from, if any.
    /// - Throws: ``IAPError`` with code ``IAPError/Code/invalidConfiguration`` naming the first product that is
    ///   invalid: an empty or repeated id, `unitsPerPurchase` below 1, a `groupLevel` below 1, an auto-renewable
    ///   subscription without a subscription group, or a non-renewing subscription without a duration.
    public init(products: [CatalogProduct], storeKitSettings: StoreKitConfigurationSettings? = nil) throws {
        try self.init(products: products, storeKitSettings: storeKitSettings, warnings: [])
    }

    init(products: [CatalogProduct], storeKitSettings: StoreKitConfigurationSettings?, warnings: [String]) throws {
        var index: [String: Int] = [:]
        for (position, product) in products.enumerated() {
            try Self.validate(product, at: position)
            if let first = index[product.productId] {
                throw IAPError(
                    .invalidConfiguration,
                    "Product id '\(product.productId)' appears twice in the catalog "
                        + "(products \(first) and \(position))."
                )
            }
            index[product.productId] = position
        }
        self.products = products
        self.storeKitSettings = storeKitSettings
        self.warnings = warnings
        self.indexById = index
    }

    private init(
        products: [CatalogProduct],
        storeKitSettings: StoreKitConfigurationSettings?,
        warnings: [String],
        indexById: [String: Int]
    ) {
        self.products = products
        self.storeKitSettings = storeKitSettings
        self.warnings = warnings
        self.indexById = indexById
    }

    /// The product with an id, or `nil` when the catalog has none.
    ///
    /// - Parameter productId: The App Store product id.
    public subscript(productId productId: String) -> CatalogProduct? {
        indexById[productId].map { products[$0] }
    }

    /// The number of products.
    public var count: Int { products.count }

    /// The product with an id.
    ///
    /// - Parameter id: The App Store product id.
    /// - Returns: The product.
    /// - Throws: ``IAPError`` with code ``IAPError/Code/unknownProduct`` naming the id.
    public func product(id: String) throws -> CatalogProduct {
        guard let product = self[productId: id] else {
            throw IAPError(
                .unknownProduct,
                "Product '\(id)' is not in the catalog (the catalog has \(products.count) "
                    + (products.count == 1 ? "product)." : "products).")
            )
        }
        return product
    }

    /// Every product, in the order they were given.
    ///
    /// - Returns: The products.
    public func allProducts() -> [CatalogProduct] {
        products
    }

    private static func validate(_ product: CatalogProduct, at position: Int) throws {
        func invalid(_ reason: String) -> IAPError {
            let name = product.productId.isEmpty ? "Product \(position)" : "Product '\(product.productId)'"
            return IAPError(.invalidConfiguration, "\(name) \(reason).")
        }
        if product.productId.allSatisfy(\.isWhitespace) {
            throw invalid("has an empty product id")
        }
        if product.unitsPerPurchase < 1 {
            throw invalid("has unitsPerPurchase \(product.unitsPerPurchase); it must be at least 1")
        }
        if let level = product.groupLevel, level < 1 {
            throw invalid("has groupLevel \(level); levels start at 1 (the highest tier)")
        }
        switch product.kind {
        case .autoRenewable:
            if (product.subscriptionGroupId ?? "").isEmpty {
                throw invalid("is an auto-renewable subscription without a subscriptionGroupId")
            }
        case .nonRenewing:
            if product.duration == nil {
                throw invalid("is a non-renewing subscription without a duration")
            }
        case .consumable, .nonConsumable:
            break
        }
    }
}
