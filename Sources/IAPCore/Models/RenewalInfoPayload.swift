#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The decoded payload of signed subscription renewal information.
///
/// Mirrors Apple's `JWSRenewalInfoDecodedPayload`: what the App Store will do when an auto-renewable subscription
/// reaches the end of its period. Every field is optional; dates are read with ``AppStoreJSON``, prices are in
/// milliunits of `currency` and unknown JSON keys are ignored.
public struct RenewalInfoPayload: SignedPayload, Hashable {
    /// Why the subscription expired.
    public var expirationIntent: ExpirationIntent?
    /// The transaction identifier of the original purchase.
    public var originalTransactionId: String?
    /// The product identifier the subscription renews to.
    public var autoRenewProductId: String?
    /// The product identifier of the current subscription.
    public var productId: String?
    /// Whether the subscription renews automatically.
    public var autoRenewStatus: AutoRenewStatus?
    /// Whether the App Store is trying to renew an expired subscription.
    public var isInBillingRetryPeriod: Bool?
    /// Whether the customer has responded to a price increase.
    public var priceIncreaseStatus: PriceIncreaseStatus?
    /// When the billing grace period ends.
    public var gracePeriodExpiresDate: Date?
    /// The kind of offer that applies to the next renewal.
    public var offerType: OfferType?
    /// The identifier of the offer that applies to the next renewal.
    public var offerIdentifier: String?
    /// When the App Store signed the data.
    public var signedDate: Date?
    /// The environment that produced the renewal information.
    public var environment: AppStoreEnvironment?
    /// The earliest start date of the run of subscriptions the customer has kept without a gap longer than 60 days.
    public var recentSubscriptionStartDate: Date?
    /// When the subscription renews next.
    public var renewalDate: Date?
    /// The three-letter ISO 4217 currency code of `renewalPrice`.
    public var currency: String?
    /// The renewal price in milliunits of `currency`.
    public var renewalPrice: Int64?
    /// The payment mode of the offer that applies to the next renewal.
    public var offerDiscountType: OfferDiscountType?
    /// The identifiers of the win-back offers the customer is eligible for.
    public var eligibleWinBackOfferIds: [String]?
    /// The UUID the app attached to the purchase to identify the user, as sent; see ``appAccountTokenUUID``.
    public var appAccountToken: String?
    /// The identifier of the app download transaction of the customer.
    public var appTransactionId: String?
    /// The duration of the offer as an ISO 8601 duration, such as `P1Y`.
    public var offerPeriod: String?
    /// The renewal details of an Advanced Commerce subscription.
    public var advancedCommerceInfo: AdvancedCommerceRenewalInfo?
    /// The renewal of a subscription commitment.
    public var commitmentInfo: RenewalCommitmentInfo?
    /// How the customer pays for the next commitment.
    public var renewalBillingPlanType: RenewalBillingPlanType?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        expirationIntent: ExpirationIntent? = nil,
        originalTransactionId: String? = nil,
        autoRenewProductId: String? = nil,
        productId: String? = nil,
        autoRenewStatus: AutoRenewStatus? = nil,
        isInBillingRetryPeriod: Bool? = nil,
        priceIncreaseStatus: PriceIncreaseStatus? = nil,
        gracePeriodExpiresDate: Date? = nil,
        offerType: OfferType? = nil,
        offerIdentifier: String? = nil,
        signedDate: Date? = nil,
        environment: AppStoreEnvironment? = nil,
        recentSubscriptionStartDate: Date? = nil,
        renewalDate: Date? = nil,
        currency: String? = nil,
        renewalPrice: Int64? = nil,
        offerDiscountType: OfferDiscountType? = nil,
        eligibleWinBackOfferIds: [String]? = nil,
        appAccountToken: String? = nil,
        appTransactionId: String? = nil,
        offerPeriod: String? = nil,
        advancedCommerceInfo: AdvancedCommerceRenewalInfo? = nil,
        commitmentInfo: RenewalCommitmentInfo? = nil,
        renewalBillingPlanType: RenewalBillingPlanType? = nil
    ) {
        self.expirationIntent = expirationIntent
        self.originalTransactionId = originalTransactionId
        self.autoRenewProductId = autoRenewProductId
        self.productId = productId
        self.autoRenewStatus = autoRenewStatus
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.priceIncreaseStatus = priceIncreaseStatus
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.signedDate = signedDate
        self.environment = environment
        self.recentSubscriptionStartDate = recentSubscriptionStartDate
        self.renewalDate = renewalDate
        self.currency = currency
        self.renewalPrice = renewalPrice
        self.offerDiscountType = offerDiscountType
        self.eligibleWinBackOfferIds = eligibleWinBackOfferIds
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
        self.advancedCommerceInfo = advancedCommerceInfo
        self.commitmentInfo = commitmentInfo
        self.renewalBillingPlanType = renewalBillingPlanType
    }
}

extension RenewalInfoPayload {
    /// The date the App Store signed the renewal information, ``signedDate``.
    public var signingDate: Date? { signedDate }

    /// ``appAccountToken`` as a UUID, or `nil` when it is missing or not a UUID.
    public var appAccountTokenUUID: UUID? { appAccountToken.flatMap(UUID.init(uuidString:)) }
}
