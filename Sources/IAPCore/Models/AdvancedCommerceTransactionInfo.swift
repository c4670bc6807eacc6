/// The details of an Advanced Commerce transaction.
///
/// Mirrors Apple's `AdvancedCommerceTransactionInfo`, the `advancedCommerceInfo` of a signed transaction. Apple
/// documents closed sets for its enumeration-valued fields; they are kept as plain strings here. Every field is
/// optional so that a missing Advanced Commerce detail never fails the whole payload.
public struct AdvancedCommerceTransactionInfo: Codable, Hashable, Sendable {
    /// The description and display name of the purchase.
    public var descriptors: AdvancedCommerceDescriptors?
    /// The estimated tax in milliunits.
    public var estimatedTax: Int64?
    /// The items of the purchase.
    public var items: [AdvancedCommerceTransactionItem]?
    /// The subscription period as an ISO 8601 duration, such as `P1M`.
    public var period: String?
    /// The reference the developer gave the request.
    public var requestReferenceId: String?
    /// The tax code of the purchase.
    public var taxCode: String?
    /// The price before tax in milliunits.
    public var taxExclusivePrice: Int64?
    /// The tax rate as a decimal string, such as `0.15`.
    public var taxRate: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        descriptors: AdvancedCommerceDescriptors? = nil,
        estimatedTax: Int64? = nil,
        items: [AdvancedCommerceTransactionItem]? = nil,
        period: String? = nil,
        requestReferenceId: String? = nil,
        taxCode: String? = nil,
        taxExclusivePrice: Int64? = nil,
        taxRate: String? = nil
    ) {
        self.descriptors = descriptors
        self.estimatedTax = estimatedTax
        self.items = items
        self.period = period
        self.requestReferenceId = requestReferenceId
        self.taxCode = taxCode
        self.taxExclusivePrice = taxExclusivePrice
        self.taxRate = taxRate
    }
}
