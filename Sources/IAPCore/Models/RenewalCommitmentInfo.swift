#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The renewal of a subscription commitment.
///
/// Mirrors Apple's `RenewalCommitmentInfo`, the `commitmentInfo` of signed renewal information.
public struct RenewalCommitmentInfo: Codable, Hashable, Sendable {
    /// The product the commitment renews to.
    public var commitmentAutoRenewProductId: String?
    /// Whether the commitment renews automatically.
    public var commitmentAutoRenewStatus: AutoRenewStatus?
    /// How the renewed commitment is billed.
    public var commitmentRenewalBillingPlanType: RenewalBillingPlanType?
    /// When the commitment renews.
    public var commitmentRenewalDate: Date?
    /// The price of the renewed commitment in milliunits.
    public var commitmentRenewalPrice: Int64?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        commitmentAutoRenewProductId: String? = nil,
        commitmentAutoRenewStatus: AutoRenewStatus? = nil,
        commitmentRenewalBillingPlanType: RenewalBillingPlanType? = nil,
        commitmentRenewalDate: Date? = nil,
        commitmentRenewalPrice: Int64? = nil
    ) {
        self.commitmentAutoRenewProductId = commitmentAutoRenewProductId
        self.commitmentAutoRenewStatus = commitmentAutoRenewStatus
        self.commitmentRenewalBillingPlanType = commitmentRenewalBillingPlanType
        self.commitmentRenewalDate = commitmentRenewalDate
        self.commitmentRenewalPrice = commitmentRenewalPrice
    }
}
