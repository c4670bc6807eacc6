#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// What ``StoreClient/purchase(productId:options:)`` passes to the device's store: StoreKit's purchase options.
public struct StorePurchaseOptions: Sendable, Hashable {
    /// The app's UUID for the purchase; the App Store signs it into the transaction.
    public var appAccountToken: UUID
    /// How many (consumables only; 1 otherwise).
    public var quantity: Int
    /// A subscription offer to apply.
    public var offer: PurchaseOffer?
    /// The server's signed introductory offer eligibility (compact JWS).
    public var introductoryOfferEligibility: String?

    /// Creates options.
    ///
    /// - Parameters:
    ///   - appAccountToken: The app's UUID for the purchase.
    ///   - quantity: How many.
    ///   - offer: A subscription offer to apply.
    ///   - introductoryOfferEligibility: The server's signed introductory offer eligibility.
    public init(
        appAccountToken: UUID,
        quantity: Int = 1,
        offer: PurchaseOffer? = nil,
        introductoryOfferEligibility: String? = nil
    ) {
        self.appAccountToken = appAccountToken
        self.quantity = quantity
        self.offer = offer
        self.introductoryOfferEligibility = introductoryOfferEligibility
    }
}
