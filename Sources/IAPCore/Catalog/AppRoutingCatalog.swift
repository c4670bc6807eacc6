/// The products of several apps: each purchase is looked up in the catalog of its own app.
///
/// Two apps of one team may sell products with the same id (a `pro` in the free app and in the iPad app) that unlock
/// different things. The delivery pipeline asks ``product(id:bundleId:)`` with the purchase's bundle id, and this
/// catalog answers from that app's catalog only: a purchase of one app never meets the other's product. A purchase of
/// an app it does not serve is an unknown product (parked, never guessed).
///
/// Asked without a bundle id (``product(id:)``, ``allProducts()``), it answers only when that is unambiguous: a product
/// id that several apps define differently is refused with `invalidConfiguration`; entitlements are computed per app,
/// from ``catalog(bundleId:)``.
public struct AppRoutingCatalog: ProductCatalog {
    /// The catalog of each app, by bundle id.
    public let catalogs: [String: any ProductCatalog]
    private let order: [String]

    /// Creates a catalog over the catalogs of several apps.
    ///
    /// - Parameter catalogs: The catalog of each app, by bundle id.
    /// - Throws: ``IAPError`` `invalidConfiguration` when there is no app, or a bundle id is empty.
    public init(_ catalogs: [String: any ProductCatalog]) throws {
        guard !catalogs.isEmpty else {
            throw IAPError(.invalidConfiguration, "a catalog of several apps needs at least one app")
        }
        if catalogs.keys.contains(where: { $0.isEmpty }) {
            throw IAPError(.invalidConfiguration, "a bundle id of a catalog of several apps is empty")
        }
        self.catalogs = catalogs
        self.order = catalogs.keys.sorted()
    }

    /// The bundle ids served, sorted.
    public var bundleIds: [String] { order }

    /// The catalog of one app, or `nil` when it is not served.
    public func catalog(bundleId: String) -> (any ProductCatalog)? {
        catalogs[bundleId]
    }

    /// The product of the app with this bundle id.
    ///
    /// - Throws: ``IAPError`` `unknownProduct` when that app's catalog has no such product, or the app is not served.
    public func product(id: String, bundleId: String?) async throws -> CatalogProduct {
        guard let bundleId else { return try await product(id: id) }
        guard let catalog = catalogs[bundleId] else {
            throw IAPError(
                .unknownProduct,
                "product '\(id)' is of bundle id '\(bundleId)', which has no catalog here "
                    + "(apps: \(order.joined(separator: ", ")))"
            )
        }
        return try await catalog.product(id: id, bundleId: bundleId)
    }

    /// The product with this id when the apps that define it agree on it.
    ///
    /// - Throws: ``IAPError`` `unknownProduct` when no app defines it; `invalidConfiguration` when apps define it
    ///   differently (ask ``product(id:bundleId:)``).
    public func product(id: String) async throws -> CatalogProduct {
        var found: [(bundleId: String, product: CatalogProduct)] = []
        for bundleId in order {
            guard let catalog = catalogs[bundleId] else { continue }
            do {
                found.append((bundleId, try await catalog.product(id: id)))
            } catch let error as IAPError where error.code == .unknownProduct {
                continue
            }
        }
        guard let first = found.first else {
            throw IAPError(.unknownProduct, "no app's catalog has product '\(id)'")
        }
        if let other = found.first(where: { $0.product != first.product }) {
            throw IAPError(
                .invalidConfiguration,
                "product '\(id)' is defined differently by \(first.bundleId) and \(other.bundleId); "
                    + "look it up with its app's bundle id"
            )
        }
        return first.product
    }

    /// Every product of every app, each id once.
    ///
    /// - Throws: ``IAPError`` `invalidConfiguration` when apps define one product id differently.
    public func allProducts() async throws -> [CatalogProduct] {
        var products: [String: (bundleId: String, product: CatalogProduct)] = [:]
        var listed: [CatalogProduct] = []
        for bundleId in order {
            guard let catalog = catalogs[bundleId] else { continue }
            for product in try await catalog.allProducts() {
                if let earlier = products[product.productId] {
                    guard earlier.product == product else {
                        throw IAPError(
                            .invalidConfiguration,
                            "product '\(product.productId)' is defined differently by \(earlier.bundleId) and "
                                + "\(bundleId); list each app's products from its own catalog"
                        )
                    }
                    continue
                }
                products[product.productId] = (bundleId, product)
                listed.append(product)
            }
        }
        return listed
    }
}

extension ProductCatalog {
    /// The bundle ids of the apps this catalog serves when it is a catalog of several apps (an ``AppRoutingCatalog``),
    /// sorted; empty for a catalog of one app.
    public var servedBundleIds: [String] {
        (self as? AppRoutingCatalog)?.bundleIds ?? []
    }

    /// The products of one app: its own catalog when this is a catalog of several apps (an ``AppRoutingCatalog``),
    /// else this catalog (one app's).
    ///
    /// - Parameter bundleId: The app's bundle id.
    /// - Returns: The app's catalog; an empty one when a catalog of several apps does not serve it.
    public func products(ofApp bundleId: String) -> any ProductCatalog {
        guard let apps = self as? AppRoutingCatalog else { return self }
        return apps.catalog(bundleId: bundleId) ?? StaticProductCatalog.empty
    }
}
