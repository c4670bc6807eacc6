#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// The life of one auto-renewable subscription of one customer in one subscription group.
struct SimulatedSubscriptionRecord: Sendable {
    /// Where the subscription is in its life.
    enum Phase: Sendable, Hashable {
        /// Paid up and renewing (or expiring, when auto-renew is off) at ``expiresDate``.
        case active
        /// A renewal failed; access continues until ``gracePeriodExpiresDate`` while billing is retried.
        case gracePeriod
        /// A renewal failed and access has ended; billing is retried until the retry period ends.
        case billingRetry
        /// The subscription ended.
        case expired
        /// The App Store refunded or revoked the latest transaction.
        case revoked
    }

    /// The original transaction identifier: the subscription's first transaction.
    let originalTransactionId: String
    /// The customer.
    let account: String
    /// The subscription group.
    let groupId: String
    /// For a family-shared subscription: the purchaser's subscription it mirrors.
    let sharedFrom: String?
    /// When the subscription was first bought (`originalPurchaseDate`).
    let originalPurchaseDate: Date
    /// The product of the current period.
    var productId: String
    /// The product of the next period (differs after a downgrade or crossgrade).
    var autoRenewProductId: String
    /// Whether the subscription renews at ``expiresDate``.
    var autoRenewEnabled = true
    /// Where the subscription is in its life.
    var phase = Phase.active
    /// The end of the current period.
    var expiresDate: Date
    /// The latest transaction.
    var latestTransactionId: String
    /// Whether charging the customer fails (the test's billing switch).
    var billingFailing = false
    /// When the failed renewal was due; billing retry ends a configured number of days later.
    var billingRetryStart: Date?
    /// The end of the grace period, while in it or in billing retry after it.
    var gracePeriodExpiresDate: Date?
    /// Why the subscription expired.
    var expirationIntent: ExpirationIntent?
    /// The start of the current run of subscriptions without a gap of more than 60 days.
    var recentSubscriptionStartDate: Date
    /// The app account token of the purchase.
    var appAccountToken: String?
    /// The price of the next renewals after a price increase, in milliunits; `nil` for the product's price.
    var increasedPrice: Int64?
    /// The customer's answer to a price increase not yet in effect; `nil` when none is pending.
    var priceIncreaseStatus: PriceIncreaseStatus?
    /// The offer of the current period, while it lasts.
    var offer: SimulatedSubscriptionOffer?
    /// How many renewals still come at ``offer``'s price (a pay-as-you-go offer's later periods).
    var offerRenewalsLeft = 0
    /// An offer a live subscriber redeemed, applied from the next renewal.
    var pendingOffer: SimulatedSubscriptionOffer?
    /// When the current commitment began, for a product billed with a commitment.
    var commitmentStart: Date?
    /// The number of the current billing period within the commitment, from 1.
    var commitmentPeriod = 0
    /// The phase and auto-renew state before a refund revoked the subscription, restored if the refund is reversed.
    var beforeRevocation: (phase: Phase, autoRenewEnabled: Bool)?

    /// Whether the customer has, or may regain, access: active, in the grace period or in billing retry.
    var isLive: Bool {
        phase == .active || phase == .gracePeriod || phase == .billingRetry
    }

    /// The status the App Store reports for the subscription.
    var status: SubscriptionStatus {
        switch phase {
        case .active: .active
        case .gracePeriod: .billingGracePeriod
        case .billingRetry: .billingRetry
        case .expired: .expired
        case .revoked: .revoked
        }
    }

    /// Copies the state the purchaser controls onto a family-shared mirror.
    ///
    /// - Parameter owner: The purchaser's subscription.
    mutating func mirror(_ owner: SimulatedSubscriptionRecord) {
        productId = owner.productId
        autoRenewProductId = owner.autoRenewProductId
        autoRenewEnabled = owner.autoRenewEnabled
        phase = owner.phase
        expiresDate = owner.expiresDate
        billingFailing = owner.billingFailing
        billingRetryStart = owner.billingRetryStart
        gracePeriodExpiresDate = owner.gracePeriodExpiresDate
        expirationIntent = owner.expirationIntent
    }
}
