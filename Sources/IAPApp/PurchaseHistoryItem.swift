#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// One purchase in the app's order history.
public struct PurchaseHistoryItem: Sendable, Hashable, Codable {
    /// How far the purchase got with the app's server.
    public enum Delivery: String, Sendable, Hashable, Codable {
        /// Seen in the store; never submitted from this device (bought on another device, or before install).
        case unknown
        /// Submitted; the server has not confirmed yet. It is kept in the outbox.
        case awaitingDelivery
        /// The server confirmed delivery.
        case delivered
        /// The server refused it; see the outbox entry's error.
        case rejected
        /// The server recorded the refund or revocation.
        case revoked
    }

    /// The App Store transaction id.
    public var transactionId: String
    /// The original transaction id (the first purchase of a subscription).
    public var originalTransactionId: String
    /// The product id.
    public var productId: String
    /// When it was bought or renewed.
    public var purchaseDate: Date?
    /// When a subscription period ends.
    public var expiresDate: Date?
    /// How many were bought.
    public var quantity: Int
    /// What the customer paid, in milliunits of ``currency`` (10990 is 10.99), after any offer; `nil` when the
    /// transaction does not say (StoreKit signs it from iOS 16 on).
    public var price: Int64?
    /// The currency of ``price`` (ISO 4217).
    public var currency: String?
    /// The kind of offer the customer bought with, if any.
    public var offerType: OfferType?
    /// The id of that offer (promotional, win-back or offer code), if any.
    public var offerId: String?
    /// When the App Store refunded or revoked it.
    public var revocationDate: Date?
    /// Whether it was shared by a family member rather than bought.
    public var isFamilyShared: Bool
    /// The business user, when the app knows it.
    public var userId: String?
    /// The business order id, when the purchase was made for one.
    public var orderId: String?
    /// How far the purchase got with the server.
    public var delivery: Delivery
    /// When the customer asked for a refund from this app, until the revocation arrives.
    public var refundRequestedAt: Date?
    /// The `signedDate` of the newest copy seen, to apply only newer data.
    public var signedDate: Date?
    /// The Apple Account that made it (the transaction's `appTransactionId`); `nil` when the store did not say
    /// (transactions of older systems).
    public var appTransactionId: String?

    /// Creates an item from a transaction's claims.
    ///
    /// - Parameters:
    ///   - transaction: The transaction.
    ///   - delivery: How far it got with the server.
    public init(_ transaction: UnverifiedTransaction, delivery: Delivery) {
        let payload = transaction.payload
        self.transactionId = transaction.transactionId
        self.originalTransactionId = payload.originalTransactionId ?? transaction.transactionId
        self.productId = transaction.productId
        self.purchaseDate = payload.purchaseDate
        self.expiresDate = payload.expiresDate
        self.quantity = payload.effectiveQuantity
        self.price = payload.price
        self.currency = payload.currency
        self.offerType = payload.offerType
        self.offerId = payload.offerIdentifier
        self.revocationDate = payload.revocationDate
        self.isFamilyShared = payload.inAppOwnershipType == .familyShared
        self.userId = nil
        self.orderId = nil
        self.delivery = delivery
        self.refundRequestedAt = nil
        self.signedDate = payload.signedDate
        self.appTransactionId = payload.appTransactionId
    }

    /// Whether the App Store refunded or revoked it.
    public var isRevoked: Bool { revocationDate != nil }
}
