import IAPCore

/// A subscription offer to apply to a purchase.
///
/// Promotional offers need the app's server's signature, made with `IAPCrypto`: the version 1 signature
/// (``promotional(_:)``, every OS) or the compact JWS of `OfferJWSSignatureCreator` (``promotionalJWS(offerId:compactJWS:)``,
/// which needs an app built with Xcode 26 or later; StoreKit back-deploys it to iOS 15). Win-back offers need no
/// signature, only the customer's eligibility (``AppSubscriptionStatus/eligibleWinBackOfferIds``), and StoreKit applies
/// them from iOS 18, macOS 15, tvOS 18, watchOS 11 and visionOS 2; on older systems the purchase fails with
/// `unsupportedOperation` and nothing is charged.
public enum PurchaseOffer: Sendable, Hashable {
    /// A promotional offer with the server's version 1 signature.
    case promotional(PromotionalOfferSignature)
    /// A promotional offer with the server's compact JWS signature.
    case promotionalJWS(offerId: String, compactJWS: String)
    /// A win-back offer, by its id in App Store Connect.
    case winBack(offerId: String)

    /// The offer's id in App Store Connect.
    public var offerId: String {
        switch self {
        case .promotional(let signature): signature.offerId
        case .promotionalJWS(let offerId, _): offerId
        case .winBack(let offerId): offerId
        }
    }
}
