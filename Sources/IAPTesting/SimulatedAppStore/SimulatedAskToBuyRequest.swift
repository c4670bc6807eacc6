/// An Ask to Buy request waiting for a parent.
struct SimulatedAskToBuyRequest: Sendable {
    /// The product asked for.
    let productId: String
    /// The child's account.
    let account: String
    /// The app account token of the purchase.
    let appAccountToken: String?
    /// The quantity asked for.
    let quantity: Int
    /// The subscription offer the purchase carries, checked already.
    var offer: SimulatedSubscriptionOffer?
    /// The app server's signed introductory offer eligibility, checked already.
    var introductoryEligibility: Bool?
}
