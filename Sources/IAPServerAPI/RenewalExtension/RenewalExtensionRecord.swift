#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// One request to extend a subscription's renewal date, as the ``RenewalDateExtender`` keeps it: what was asked,
/// and what Apple answered.
public struct RenewalExtensionRecord: Codable, Sendable, Hashable {
    /// Where the request stands.
    public enum State: String, Codable, Sendable, Hashable {
        /// Recorded and sent (or about to be); Apple's answer was not recorded yet. A retry with the same request
        /// identifier asks Apple again, which recognises the identifier.
        case requested
        /// Apple extended the renewal date.
        case succeeded
        /// Apple refused, for good (it answered `success: false`, or an error a retry cannot fix).
        case failed
    }

    /// The request identifier: the idempotency key, unique per request.
    public var requestIdentifier: String
    /// The subscription's original transaction id.
    public var originalTransactionId: String
    /// By how many days.
    public var extendByDays: Int32
    /// Why (Apple's `extendReasonCode`, 0 to 3).
    public var reasonCode: Int32
    /// When the request was first recorded.
    public var requestedAt: Date
    /// Where it stands.
    public var state: State
    /// The new renewal date Apple answered.
    public var effectiveDate: Date?
    /// Apple's `webOrderLineItemId` of the extended period.
    public var webOrderLineItemId: String?
    /// Why Apple refused, as `code: message`.
    public var error: String?
    /// When Apple's answer was recorded.
    public var completedAt: Date?

    /// Creates a record of a new request.
    ///
    /// - Parameters:
    ///   - requestIdentifier: The request identifier.
    ///   - originalTransactionId: The subscription.
    ///   - extendByDays: By how many days.
    ///   - reasonCode: Why.
    ///   - requestedAt: When.
    public init(
        requestIdentifier: String,
        originalTransactionId: String,
        extendByDays: Int32,
        reasonCode: Int32,
        requestedAt: Date
    ) {
        self.requestIdentifier = requestIdentifier
        self.originalTransactionId = originalTransactionId
        self.extendByDays = extendByDays
        self.reasonCode = reasonCode
        self.requestedAt = requestedAt
        self.state = .requested
    }

    /// Whether it asks for the same as another record (same subscription, days and reason).
    func asksSame(as other: RenewalExtensionRecord) -> Bool {
        originalTransactionId == other.originalTransactionId && extendByDays == other.extendByDays
            && reasonCode == other.reasonCode
    }
}
