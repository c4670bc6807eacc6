#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A refund of an Advanced Commerce item.
///
/// Mirrors Apple's `AdvancedCommerceRefund`. Apple documents closed sets for its enumeration-valued fields; they
/// are kept as plain strings here. Every field is optional so that a missing Advanced Commerce detail never fails
/// the whole payload.
public struct AdvancedCommerceRefund: Codable, Hashable, Sendable {
    /// The refunded amount in milliunits.
    public var refundAmount: Int64?
    /// When the refund happened.
    public var refundDate: Date?
    /// Why the item was refunded (Apple's `AdvancedCommerceRefundReason`).
    public var refundReason: String?
    /// How much was refunded (Apple's `AdvancedCommerceRefundType`: `FULL`, `PRORATED`, `CUSTOM`).
    public var refundType: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        refundAmount: Int64? = nil,
        refundDate: Date? = nil,
        refundReason: String? = nil,
        refundType: String? = nil
    ) {
        self.refundAmount = refundAmount
        self.refundDate = refundDate
        self.refundReason = refundReason
        self.refundType = refundType
    }
}
