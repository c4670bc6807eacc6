/// The swift-iap catalog file, format 1, as `Documentation/ProductCatalog.md` describes it.
///
/// Missing optional keys take their documented defaults: `entitlements` is `[productId]`, `unitsPerPurchase`
/// is 1, `familyShareable` is `false`. Unknown keys are ignored.
struct CatalogFile: Decodable {
    /// One product of the file.
    struct Product: Decodable {
        var productId: String
        var type: ProductKind
        var subscriptionGroupId: String?
        var groupLevel: Int?
        var entitlements: [String]?
        var unitsPerPurchase: Int?
        var duration: SubscriptionPeriod?
        var displayName: String?
        var familyShareable: Bool?

        private enum CodingKeys: String, CodingKey {
            case productId, type, subscriptionGroupId, groupLevel, entitlements, unitsPerPurchase, duration
            case displayName, familyShareable
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            productId = try container.decode(String.self, forKey: .productId)
            let typeName = try container.decode(String.self, forKey: .type)
            guard let kind = ProductKind(rawValue: typeName) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .type,
                    in: container,
                    debugDescription:
                        "'\(typeName)' is not one of consumable, nonConsumable, autoRenewable, nonRenewing"
                )
            }
            type = kind
            subscriptionGroupId = try container.decodeIfPresent(String.self, forKey: .subscriptionGroupId)
            groupLevel = try container.decodeIfPresent(Int.self, forKey: .groupLevel)
            entitlements = try container.decodeIfPresent([String].self, forKey: .entitlements)
            unitsPerPurchase = try container.decodeIfPresent(Int.self, forKey: .unitsPerPurchase)
            if let text = try container.decodeIfPresent(String.self, forKey: .duration) {
                guard let period = SubscriptionPeriod(iso8601: text) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .duration,
                        in: container,
                        debugDescription: "'\(text)' is not a one-unit ISO 8601 period such as P1M, P7D, P2W or P1Y"
                    )
                }
                duration = period
            }
            displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
            familyShareable = try container.decodeIfPresent(Bool.self, forKey: .familyShareable)
        }

        /// The catalog product this entry describes.
        var catalogProduct: CatalogProduct {
            CatalogProduct(
                productId: productId,
                kind: type,
                subscriptionGroupId: subscriptionGroupId,
                groupLevel: groupLevel,
                entitlements: entitlements,
                unitsPerPurchase: unitsPerPurchase ?? 1,
                duration: duration,
                displayName: displayName,
                familyShareable: familyShareable ?? false
            )
        }
    }

    /// The format version; 1 is the only one.
    var version: Int
    /// The products.
    var products: [Product]
}
