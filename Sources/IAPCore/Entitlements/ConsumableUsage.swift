#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Units of a consumable the user spent, as the integrator's own records say.
///
/// The ledger holds purchases and refunds, not what the user did with the units. Pass uses to
/// ``EntitlementEngine/evaluate(entries:renewalInfos:usage:at:)`` to get the balance left; a refund that
/// arrives after the units were spent is then what drives a balance below zero, or into
/// ``ConsumableBalance/debt``.
public struct ConsumableUsage: Codable, Sendable, Hashable {
    /// The consumable's product id.
    public var productId: String
    /// The units spent; 0 or less counts as nothing.
    public var units: Int64
    /// When they were spent; orders the use among purchases and refunds.
    public var date: Date

    /// Creates a use.
    ///
    /// - Parameters:
    ///   - productId: The consumable's product id.
    ///   - units: The units spent.
    ///   - date: When they were spent.
    public init(productId: String, units: Int64, date: Date) {
        self.productId = productId
        self.units = units
        self.date = date
    }
}
