#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// A subscription offer as the device's store presents it (StoreKit's `Product.SubscriptionOffer`): what a paywall
/// must state — how long, how many times, at what price — before the customer buys.
public struct StoreSubscriptionOffer: Sendable, Hashable, Codable {
    /// Which kind of offer.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The introductory offer, for customers new to the subscription group (check
        /// ``StoreProduct/isEligibleForIntroOffer``).
        case introductory
        /// A promotional offer, redeemed with the app's server's signature.
        case promotional
        /// A win-back offer, for customers whose subscription ended.
        case winBack
    }

    /// How the customer pays during the offer.
    public enum PaymentMode: String, Sendable, Hashable, Codable {
        /// Nothing, for ``StoreSubscriptionOffer/periodCount`` periods.
        case freeTrial
        /// ``StoreSubscriptionOffer/price`` for each of ``StoreSubscriptionOffer/periodCount`` periods.
        case payAsYouGo
        /// ``StoreSubscriptionOffer/price`` once, for the whole offer.
        case payUpFront
    }

    /// The offer's id; `nil` for an introductory offer.
    public var id: String?
    /// Which kind of offer.
    public var kind: Kind
    /// How the customer pays during the offer.
    public var paymentMode: PaymentMode
    /// The price in the storefront's currency: per period for pay-as-you-go, for the whole offer up front, 0 free.
    public var price: Decimal
    /// ``price``, localized for display.
    public var displayPrice: String
    /// The length of one period of the offer.
    public var period: SubscriptionPeriod
    /// How many periods the offer lasts.
    public var periodCount: Int

    /// Creates an offer.
    public init(
        id: String?,
        kind: Kind,
        paymentMode: PaymentMode,
        price: Decimal,
        displayPrice: String,
        period: SubscriptionPeriod,
        periodCount: Int
    ) {
        self.id = id
        self.kind = kind
        self.paymentMode = paymentMode
        self.price = price
        self.displayPrice = displayPrice
        self.period = period
        self.periodCount = periodCount
    }
}
