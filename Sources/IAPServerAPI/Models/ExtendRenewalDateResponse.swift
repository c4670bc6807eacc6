#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// The result of extending one subscription's renewal date.
///
/// Mirrors Apple's `ExtendRenewalDateResponse`, with Apple's JSON names.
public struct ExtendRenewalDateResponse: Codable, Hashable, Sendable {
    /// The original transaction identifier of the subscription.
    public var originalTransactionId: String?
    /// The identifier of the subscription purchase event across devices.
    public var webOrderLineItemId: String?
    /// Whether the renewal date was extended.
    public var success: Bool?
    /// The new renewal date.
    public var effectiveDate: Date?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        originalTransactionId: String? = nil,
        webOrderLineItemId: String? = nil,
        success: Bool? = nil,
        effectiveDate: Date? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.success = success
        self.effectiveDate = effectiveDate
    }
}
