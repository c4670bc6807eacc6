#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// A purchase the app started, saved before the store is asked, so that its context (user, order) survives a
/// kill, an Ask to Buy that is approved days later, or a purchase that completes on the next launch.
struct PurchaseIntent: Sendable, Hashable, Codable {
    var productId: String
    var userId: String
    var orderId: String?
    /// The appAccountToken the purchase carries, lowercase.
    var appAccountToken: String
    var createdAt: Date
    /// How many were asked for; `nil` in intents saved by versions that did not record it.
    var quantity: Int?
    /// When the store answered that a parent must approve (Ask to Buy); `nil` while the purchase has not been
    /// parked. Shown as a pending row of the history.
    var awaitingApprovalSince: Date?
}
