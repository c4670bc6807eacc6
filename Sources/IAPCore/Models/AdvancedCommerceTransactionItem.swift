#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// One item of an Advanced Commerce transaction.
///
/// Mirrors Apple's `AdvancedCommerceTransactionItem`. Apple documents closed sets for its enumeration-valued
/// fields; they are kept as plain strings here. Every field is optional so that a missing Advanced Commerce detail
/// never fails the whole payload.
public struct AdvancedCommerceTransactionItem: Codable, Hashable, Sendable {
    /// The developer's stock-keeping unit of the item (JSON `SKU`).
    public var sku: String?
    /// The description of the item.
    public var description: String?
    /// The display name of the item.
    public var displayName: String?
    /// The offer that applies to the item.
    public var offer: AdvancedCommerceOffer?
    /// The price of the item in milliunits.
    public var price: Int64?
    /// The refunds of the item.
    public var refunds: [AdvancedCommerceRefund]?
    /// When the item was revoked.
    public var revocationDate: Date?

    private enum CodingKeys: String, CodingKey {
        case sku = "SKU"
        case description
        case displayName
        case offer
        case price
        case refunds
        case revocationDate
    }

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        sku: String? = nil,
        description: String? = nil,
        displayName: String? = nil,
        offer: AdvancedCommerceOffer? = nil,
        price: Int64? = nil,
        refunds: [AdvancedCommerceRefund]? = nil,
        revocationDate: Date? = nil
    ) {
        self.sku = sku
        self.description = description
        self.displayName = displayName
        self.offer = offer
        self.price = price
        self.refunds = refunds
        self.revocationDate = revocationDate
    }
}
