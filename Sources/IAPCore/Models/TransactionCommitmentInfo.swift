#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The commitment of a subscription billed monthly over a longer term.
///
/// Mirrors Apple's `TransactionCommitmentInfo`, the `commitmentInfo` of a signed transaction.
public struct TransactionCommitmentInfo: Codable, Hashable, Sendable {
    /// The number of the billing period within the commitment, from 1.
    public var billingPeriodNumber: Int32?
    /// When the commitment ends.
    public var commitmentExpiresDate: Date?
    /// The price of the whole commitment in milliunits.
    public var commitmentPrice: Int64?
    /// The number of billing periods in the commitment.
    public var totalBillingPeriods: Int32?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        billingPeriodNumber: Int32? = nil,
        commitmentExpiresDate: Date? = nil,
        commitmentPrice: Int64? = nil,
        totalBillingPeriods: Int32? = nil
    ) {
        self.billingPeriodNumber = billingPeriodNumber
        self.commitmentExpiresDate = commitmentExpiresDate
        self.commitmentPrice = commitmentPrice
        self.totalBillingPeriods = totalBillingPeriods
    }
}
