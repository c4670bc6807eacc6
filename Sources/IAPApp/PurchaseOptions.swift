#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// How a purchase through ``PurchaseCoordinator/purchase(productId:for:orderId:options:)`` is made.
public struct PurchaseOptions: Sendable, Hashable {
    /// How many (consumables only; 1 otherwise).
    public var quantity: Int
    /// The appAccountToken the purchase carries; `nil` lets the coordinator choose (the user's derived token, or a
    /// fresh one). Set it to the token the server signed a promotional offer for, which must come from
    /// ``PurchaseCoordinator/appAccountToken(for:)`` for the same user.
    public var appAccountToken: UUID?
    /// A subscription offer to apply.
    public var offer: PurchaseOffer?
    /// The server's signed decision on the customer's introductory offer eligibility (the compact JWS of
    /// `OfferJWSSignatureCreator.introductoryOfferEligibilitySignature`), which overrides the App Store's own;
    /// StoreKit back-deploys it to iOS 15 in apps built with Xcode 16.3 or later.
    public var introductoryOfferEligibility: String?

    /// Creates options.
    ///
    /// - Parameters:
    ///   - quantity: How many.
    ///   - appAccountToken: The token the purchase carries, or `nil` for the coordinator's choice.
    ///   - offer: A subscription offer to apply.
    ///   - introductoryOfferEligibility: The server's signed introductory offer eligibility.
    public init(
        quantity: Int = 1,
        appAccountToken: UUID? = nil,
        offer: PurchaseOffer? = nil,
        introductoryOfferEligibility: String? = nil
    ) {
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.offer = offer
        self.introductoryOfferEligibility = introductoryOfferEligibility
    }
}
