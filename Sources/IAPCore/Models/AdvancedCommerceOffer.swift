/// A discount offer on an Advanced Commerce item.
///
/// Mirrors Apple's `AdvancedCommerceOffer`. Apple documents closed sets for its enumeration-valued fields; they are
/// kept as plain strings here. Every field is optional so that a missing Advanced Commerce detail never fails the
/// whole payload.
public struct AdvancedCommerceOffer: Codable, Hashable, Sendable {
    /// The period of the offer as an ISO 8601 duration (Apple's `AdvancedCommerceOfferPeriod`).
    public var period: String?
    /// The number of periods the offer lasts.
    public var periodCount: Int32?
    /// The offer price in milliunits.
    public var price: Int64?
    /// Why the offer applies (Apple's `AdvancedCommerceOfferReason`, such as `WIN_BACK`).
    public var reason: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        period: String? = nil,
        periodCount: Int32? = nil,
        price: Int64? = nil,
        reason: String? = nil
    ) {
        self.period = period
        self.periodCount = periodCount
        self.price = price
        self.reason = reason
    }
}
