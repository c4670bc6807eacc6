public import IAPCore

/// A subscription offer a ``SimulatedAppStore`` knows, as configured in App Store Connect: an introductory offer, a
/// promotional offer or a win-back offer of one auto-renewable subscription.
///
/// The store applies it to a new subscription or a resubscription, and a promotional offer or an offer code also to
/// a live subscription (from its next renewal, or at once with an upgrade: `OFFER_REDEEMED`). Each transaction in
/// the offer carries `offerType`, `offerIdentifier` (not for introductory offers), `offerDiscountType`,
/// `offerPeriod` (the offer's whole length) and the offer's price. A free trial or a pay-up-front offer is one
/// transaction lasting the whole offer; a pay-as-you-go offer is ``periodCount`` transactions of ``period`` each.
public struct SimulatedSubscriptionOffer: Sendable, Hashable {
    /// The kind of offer.
    public enum Kind: Sendable, Hashable {
        /// Applied by the store to customers who never subscribed in the group, or as the app's server decides
        /// with a signed introductory offer eligibility.
        case introductory
        /// Applied when the purchase carries the offer with a signature of the app's server.
        case promotional
        /// Applied when the purchase names it and the customer's subscription in the group has expired; listed in
        /// the renewal information's `eligibleWinBackOfferIds` meanwhile.
        case winBack
        /// Applied when the customer redeems a code of it in the offer code sheet
        /// (``SimulatedStoreClient/redeemOfferCodeInNextSheet(productId:offerId:)``).
        case offerCode
    }

    /// The offer's id (promotional and win-back offers are named by it; an introductory offer's is not sent).
    public var id: String
    /// The auto-renewable subscription it applies to.
    public var productId: String
    /// The kind of offer.
    public var kind: Kind
    /// How the customer pays during the offer.
    public var discountType: OfferDiscountType
    /// What each transaction in the offer costs, in milliunits of the store's currency (0 for a free trial).
    public var price: Int64
    /// The length of one period of the offer; `nil` for the subscription's own period.
    public var period: SubscriptionPeriod?
    /// How many periods the offer lasts, at least 1.
    public var periodCount: Int

    /// Creates an offer.
    ///
    /// - Parameters:
    ///   - id: The offer's id.
    ///   - productId: The subscription it applies to.
    ///   - kind: The kind of offer.
    ///   - discountType: How the customer pays during the offer.
    ///   - price: What each transaction in the offer costs, in milliunits.
    ///   - period: The length of one period of the offer; `nil` for the subscription's own period.
    ///   - periodCount: How many periods the offer lasts; values below 1 count as 1.
    public init(
        id: String,
        productId: String,
        kind: Kind,
        discountType: OfferDiscountType,
        price: Int64,
        period: SubscriptionPeriod? = nil,
        periodCount: Int = 1
    ) {
        self.id = id
        self.productId = productId
        self.kind = kind
        self.discountType = discountType
        self.price = price
        self.period = period
        self.periodCount = max(1, periodCount)
    }

    /// The `offerType` of the transactions it makes.
    var offerType: OfferType {
        switch kind {
        case .introductory: .introductoryOffer
        case .promotional: .promotionalOffer
        case .winBack: .winBackOffer
        case .offerCode: .offerCode
        }
    }
}
