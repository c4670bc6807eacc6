#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// The state of one auto-renewable subscription of a group as the device's store reports it
/// (StoreKit's `Product.SubscriptionInfo.Status`), read into what an app shows: whether it is entitled, whether it
/// renews, to what, at what price, and whether a grace period, a billing retry or a price increase needs the
/// customer.
///
/// It is read from the App Store's signed data without verifying it: show it, but let the server decide what is
/// granted. ``signedTransaction`` and ``signedRenewalInfo`` are the signed originals, for the server.
public struct AppSubscriptionStatus: Sendable, Hashable {
    /// The renewal state: ``SubscriptionStatus/active``, ``SubscriptionStatus/expired``,
    /// ``SubscriptionStatus/billingRetry``, ``SubscriptionStatus/billingGracePeriod`` or
    /// ``SubscriptionStatus/revoked``; a state Apple adds later is kept as it is.
    public var state: SubscriptionStatus
    /// The product of the latest transaction.
    public var productId: String
    /// The latest transaction's id.
    public var transactionId: String
    /// The subscription's original transaction id.
    public var originalTransactionId: String
    /// When the current period ends.
    public var expiresDate: Date?
    /// When the App Store revoked the latest transaction.
    public var revocationDate: Date?
    /// Whether the subscription is shared by a family member rather than bought.
    public var isFamilyShared: Bool
    /// Whether the subscription renews at the end of the period.
    public var willAutoRenew: Bool
    /// The product it renews to (another level of the group after a downgrade or crossgrade).
    public var autoRenewProductId: String?
    /// When it renews next.
    public var renewalDate: Date?
    /// The renewal price in milliunits of ``currency``.
    public var renewalPrice: Int64?
    /// The currency of ``renewalPrice`` (ISO 4217).
    public var currency: String?
    /// Whether the App Store is retrying a failed renewal.
    public var isInBillingRetry: Bool
    /// When the billing grace period ends, while the subscription is in one.
    public var gracePeriodExpiresDate: Date?
    /// The customer's answer to a price increase: ``PriceIncreaseStatus/customerHasNotResponded`` while consent is
    /// still needed; `nil` when no price increase is pending.
    public var priceIncreaseStatus: PriceIncreaseStatus?
    /// Why the subscription expired, once it has.
    public var expirationIntent: ExpirationIntent?
    /// The win-back offers the customer is eligible for, best first (iOS 18 and later report them).
    public var eligibleWinBackOfferIds: [String]
    /// The latest transaction as the App Store signed it (JWS).
    public var signedTransaction: String
    /// The renewal information as the App Store signed it (JWS).
    public var signedRenewalInfo: String

    /// Reads a status of the device's store.
    ///
    /// - Parameter status: The store's status.
    /// - Throws: ``IAPError`` `.malformedSignedData` when the transaction or the renewal information cannot be
    ///   read.
    public init(_ status: StoreSubscriptionStatus) throws {
        let transaction = try UnverifiedTransaction(signedTransaction: status.signedTransaction)
        let renewal = try UnverifiedPayload.decode(
            RenewalInfoPayload.self,
            from: status.signedRenewalInfo,
            what: "renewal information"
        )
        let payload = transaction.payload
        state = status.state
        productId = transaction.productId
        transactionId = transaction.transactionId
        originalTransactionId = payload.originalTransactionId ?? transaction.transactionId
        expiresDate = payload.expiresDate
        revocationDate = payload.revocationDate
        isFamilyShared = payload.inAppOwnershipType == .familyShared
        willAutoRenew = renewal.autoRenewStatus == .on
        autoRenewProductId = renewal.autoRenewProductId
        renewalDate = renewal.renewalDate
        renewalPrice = renewal.renewalPrice
        currency = renewal.currency
        isInBillingRetry = renewal.isInBillingRetryPeriod ?? false
        gracePeriodExpiresDate = status.state == .billingGracePeriod ? renewal.gracePeriodExpiresDate : nil
        priceIncreaseStatus = renewal.priceIncreaseStatus
        expirationIntent = renewal.expirationIntent
        eligibleWinBackOfferIds = renewal.eligibleWinBackOfferIds ?? []
        signedTransaction = status.signedTransaction
        signedRenewalInfo = status.signedRenewalInfo
    }

    /// Whether the subscription gives access now: subscribed, or in its billing grace period.
    public var isEntitled: Bool {
        state == .active || state == .billingGracePeriod
    }

    /// Whether the customer must act on a price increase to keep the subscription: the renewal would otherwise
    /// not happen.
    public var needsPriceIncreaseConsent: Bool {
        priceIncreaseStatus == .customerHasNotResponded && willAutoRenew
    }
}
