#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// A product as the device's store presents it: what a paywall shows, from the store (never hard-coded): the
/// localized name and price, the price as a number with its currency, and for an auto-renewable subscription its
/// period, its offers and whether the customer may have the introductory offer (App Review guideline 3.1.2 asks the
/// paywall to state the length and price of a subscription and of its trial; ``subscriptionTerms`` words it).
public struct StoreProduct: Sendable, Hashable, Codable {
    /// The product id, as configured in App Store Connect.
    public var id: String
    /// The localized name.
    public var displayName: String
    /// The localized price, formatted for display.
    public var displayPrice: String
    /// The kind of product, when the store says.
    public var type: ProductType?
    /// The subscription group of an auto-renewable subscription, for
    /// ``PurchaseCoordinator/subscriptionStatuses(groupId:)`` and ``PurchaseCoordinator/showManageSubscriptions(groupId:)``.
    public var subscriptionGroupId: String?
    /// The price as a number, in ``currencyCode``; `nil` when the store did not say.
    public var price: Decimal?
    /// The ISO 4217 code of the price's currency; `nil` when the store did not say.
    public var currencyCode: String?
    /// How often an auto-renewable subscription renews; `nil` for anything else.
    public var subscriptionPeriod: SubscriptionPeriod?
    /// The introductory offer of an auto-renewable subscription, if it has one.
    public var introductoryOffer: StoreSubscriptionOffer?
    /// The promotional offers of an auto-renewable subscription.
    public var promotionalOffers: [StoreSubscriptionOffer]
    /// The win-back offers of an auto-renewable subscription (StoreKit gives them from iOS 18, macOS 15).
    public var winBackOffers: [StoreSubscriptionOffer]
    /// Whether the customer may have the introductory offer (new to the subscription group); `nil` when the store did
    /// not say, or for anything but an auto-renewable subscription.
    public var isEligibleForIntroOffer: Bool?

    /// Creates a product.
    ///
    /// - Parameters:
    ///   - id: The product id.
    ///   - displayName: The localized name.
    ///   - displayPrice: The localized, formatted price.
    ///   - type: The kind of product.
    ///   - subscriptionGroupId: The subscription group of an auto-renewable subscription.
    ///   - price: The price as a number.
    ///   - currencyCode: The ISO 4217 currency code of the price.
    ///   - subscriptionPeriod: How often an auto-renewable subscription renews.
    ///   - introductoryOffer: The introductory offer.
    ///   - promotionalOffers: The promotional offers.
    ///   - winBackOffers: The win-back offers.
    ///   - isEligibleForIntroOffer: Whether the customer may have the introductory offer.
    public init(
        id: String,
        displayName: String,
        displayPrice: String,
        type: ProductType?,
        subscriptionGroupId: String? = nil,
        price: Decimal? = nil,
        currencyCode: String? = nil,
        subscriptionPeriod: SubscriptionPeriod? = nil,
        introductoryOffer: StoreSubscriptionOffer? = nil,
        promotionalOffers: [StoreSubscriptionOffer] = [],
        winBackOffers: [StoreSubscriptionOffer] = [],
        isEligibleForIntroOffer: Bool? = nil
    ) {
        self.id = id
        self.displayName = displayName
        self.displayPrice = displayPrice
        self.type = type
        self.subscriptionGroupId = subscriptionGroupId
        self.price = price
        self.currencyCode = currencyCode
        self.subscriptionPeriod = subscriptionPeriod
        self.introductoryOffer = introductoryOffer
        self.promotionalOffers = promotionalOffers
        self.winBackOffers = winBackOffers
        self.isEligibleForIntroOffer = isEligibleForIntroOffer
    }
}

extension StoreProduct {
    private enum CodingKeys: String, CodingKey {
        case id, displayName, displayPrice, type, subscriptionGroupId, price, currencyCode, subscriptionPeriod
        case introductoryOffer, promotionalOffers, winBackOffers, isEligibleForIntroOffer
    }

    /// Decodes a product; the fields added after the first version may be missing (products an older version saved).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        displayName = try container.decode(String.self, forKey: .displayName)
        displayPrice = try container.decode(String.self, forKey: .displayPrice)
        type = try container.decodeIfPresent(ProductType.self, forKey: .type)
        subscriptionGroupId = try container.decodeIfPresent(String.self, forKey: .subscriptionGroupId)
        price = try container.decodeIfPresent(Decimal.self, forKey: .price)
        currencyCode = try container.decodeIfPresent(String.self, forKey: .currencyCode)
        subscriptionPeriod = try container.decodeIfPresent(SubscriptionPeriod.self, forKey: .subscriptionPeriod)
        introductoryOffer = try container.decodeIfPresent(StoreSubscriptionOffer.self, forKey: .introductoryOffer)
        promotionalOffers =
            try container.decodeIfPresent([StoreSubscriptionOffer].self, forKey: .promotionalOffers) ?? []
        winBackOffers = try container.decodeIfPresent([StoreSubscriptionOffer].self, forKey: .winBackOffers) ?? []
        isEligibleForIntroOffer = try container.decodeIfPresent(Bool.self, forKey: .isEligibleForIntroOffer)
    }

    /// The terms a paywall states beside the buy button, in English: the price and how often it is charged, and
    /// first the introductory offer when the customer may have it (``isEligibleForIntroOffer`` is `true`):
    /// `1 week free, then $9.99/month`, `$4.99/month for 3 months, then $9.99/month`,
    /// `$59.99 for 1 year, then $99.99/year`, `$29.99 every 3 months`. Anything but an auto-renewable subscription is
    /// its ``displayPrice``. Every figure comes from the store; another language builds its own sentence from the
    /// same fields.
    public var subscriptionTerms: String {
        guard let period = subscriptionPeriod else { return displayPrice }
        let recurring =
            period.value == 1
            ? "\(displayPrice)/\(Self.word(period.unit))" : "\(displayPrice) every \(Self.length(period))"
        guard isEligibleForIntroOffer == true, let offer = introductoryOffer else { return recurring }
        let whole = offer.period.repeated(offer.periodCount)
        switch offer.paymentMode {
        case .freeTrial:
            return "\(Self.length(whole)) free, then \(recurring)"
        case .payUpFront:
            return "\(offer.displayPrice) for \(Self.length(whole)), then \(recurring)"
        case .payAsYouGo:
            let each =
                offer.period.value == 1
                ? "\(offer.displayPrice)/\(Self.word(offer.period.unit))"
                : "\(offer.displayPrice) every \(Self.length(offer.period))"
            return "\(each) for \(Self.length(whole)), then \(recurring)"
        }
    }

    private static func word(_ unit: SubscriptionPeriod.Unit) -> String {
        unit.rawValue
    }

    private static func length(_ period: SubscriptionPeriod) -> String {
        "\(period.value) \(word(period.unit))\(period.value == 1 ? "" : "s")"
    }
}
