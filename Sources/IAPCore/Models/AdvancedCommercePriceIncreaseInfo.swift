/// A price increase of an Advanced Commerce subscription item.
///
/// Mirrors Apple's `AdvancedCommercePriceIncreaseInfo`. Apple documents closed sets for its enumeration-valued
/// fields; they are kept as plain strings here. Every field is optional so that a missing Advanced Commerce detail
/// never fails the whole payload.
public struct AdvancedCommercePriceIncreaseInfo: Codable, Hashable, Sendable {
    /// The items whose price changes with this one.
    public var dependentSKUs: [String]?
    /// The new price in milliunits.
    public var price: Int64?
    /// The state of the increase (Apple's `AdvancedCommercePriceIncreaseInfoStatus`: `SCHEDULED`, `PENDING`,
    /// `ACCEPTED`).
    public var status: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        dependentSKUs: [String]? = nil,
        price: Int64? = nil,
        status: String? = nil
    ) {
        self.dependentSKUs = dependentSKUs
        self.price = price
        self.status = status
    }
}
