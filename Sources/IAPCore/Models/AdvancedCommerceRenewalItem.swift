/// One item of an Advanced Commerce subscription renewal.
///
/// Mirrors Apple's `AdvancedCommerceRenewalItem`. Apple documents closed sets for its enumeration-valued fields;
/// they are kept as plain strings here. Every field is optional so that a missing Advanced Commerce detail never
/// fails the whole payload.
public struct AdvancedCommerceRenewalItem: Codable, Hashable, Sendable {
    /// The developer's stock-keeping unit of the item (JSON `SKU`).
    public var sku: String?
    /// The description of the item.
    public var description: String?
    /// The display name of the item.
    public var displayName: String?
    /// The offer that applies at renewal.
    public var offer: AdvancedCommerceOffer?
    /// The renewal price of the item in milliunits.
    public var price: Int64?
    /// A scheduled price increase of the item.
    public var priceIncreaseInfo: AdvancedCommercePriceIncreaseInfo?

    private enum CodingKeys: String, CodingKey {
        case sku = "SKU"
        case description
        case displayName
        case offer
        case price
        case priceIncreaseInfo
    }

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        sku: String? = nil,
        description: String? = nil,
        displayName: String? = nil,
        offer: AdvancedCommerceOffer? = nil,
        price: Int64? = nil,
        priceIncreaseInfo: AdvancedCommercePriceIncreaseInfo? = nil
    ) {
        self.sku = sku
        self.description = description
        self.displayName = displayName
        self.offer = offer
        self.price = price
        self.priceIncreaseInfo = priceIncreaseInfo
    }
}
