/// The renewal details of an Advanced Commerce subscription.
///
/// Mirrors Apple's `AdvancedCommerceRenewalInfo`, the `advancedCommerceInfo` of signed renewal information. Apple
/// documents closed sets for its enumeration-valued fields; they are kept as plain strings here. Every field is
/// optional so that a missing Advanced Commerce detail never fails the whole payload.
public struct AdvancedCommerceRenewalInfo: Codable, Hashable, Sendable {
    /// The token to send with the next change request for this subscription.
    public var consistencyToken: String?
    /// The description and display name of the subscription.
    public var descriptors: AdvancedCommerceDescriptors?
    /// The items that renew.
    public var items: [AdvancedCommerceRenewalItem]?
    /// The subscription period as an ISO 8601 duration (Apple's `AdvancedCommercePeriod`).
    public var period: String?
    /// The reference the developer gave the last request.
    public var requestReferenceId: String?
    /// The tax code of the subscription.
    public var taxCode: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        consistencyToken: String? = nil,
        descriptors: AdvancedCommerceDescriptors? = nil,
        items: [AdvancedCommerceRenewalItem]? = nil,
        period: String? = nil,
        requestReferenceId: String? = nil,
        taxCode: String? = nil
    ) {
        self.consistencyToken = consistencyToken
        self.descriptors = descriptors
        self.items = items
        self.period = period
        self.requestReferenceId = requestReferenceId
        self.taxCode = taxCode
    }
}
