#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

/// The body of one webhook request: a grant or a take-back, with everything a wallet needs to apply it once.
///
/// The body holds exactly these fields: `type`, `idempotencyKey`, `userId`, `productId`, `transactionId`,
/// `originalTransactionId`, `environment`, `units`, `purchaseDate`, `expiresDate` and `revocationDate`. Dates are
/// milliseconds since 1970, as Apple writes them; a field that is not known is absent.
///
/// A receiver applies each `idempotencyKey` once. A revoke has a key of its own (`<transactionId>:revoke:<n>`),
/// stable across retries, and names the transaction whose grant it takes back: a receiver that never applied a
/// grant of that transaction (its call was interrupted) takes back nothing, and refuses that grant if it arrives
/// later (answer it 409).
///
/// ```json
/// {"type":"grant","idempotencyKey":"2000000000000001","userId":"alice","productId":"coins.100",
///  "transactionId":"2000000000000001","originalTransactionId":"2000000000000001","environment":"Production",
///  "units":100,"purchaseDate":1767225600000}
/// ```
public struct WebhookDelivery: Codable, Sendable, Hashable {
    /// `grant` or `revoke`.
    public var type: Delivery.Action
    /// Apply each key once; a revoke's key differs from its grant's and is stable across retries.
    public var idempotencyKey: String
    /// The business user.
    public var userId: String
    /// The product.
    public var productId: String
    /// The transaction.
    public var transactionId: String
    /// The purchase this transaction belongs to (a subscription's renewals share it).
    public var originalTransactionId: String
    /// `Production`, `Sandbox`, ...
    public var environment: String?
    /// Consumable units to add (grant) or take back (revoke); 1 for other products.
    public var units: Int64
    /// When the purchase (or renewal) was made.
    public var purchaseDate: Int64?
    /// When a subscription period ends.
    public var expiresDate: Int64?
    /// When the App Store revoked the purchase (a refund).
    public var revocationDate: Int64?

    /// The webhook body of a delivery.
    ///
    /// - Parameter delivery: What the pipeline asks the hook to do.
    public init(_ delivery: Delivery) {
        type = delivery.action
        idempotencyKey = delivery.idempotencyKey
        userId = delivery.userId
        productId = delivery.product.productId
        transactionId = delivery.transactionId
        originalTransactionId = delivery.transaction.originalTransactionId ?? delivery.transactionId
        environment = delivery.transaction.environment?.rawValue
        units = delivery.units
        purchaseDate = delivery.transaction.purchaseDate?.millisecondsSince1970
        expiresDate = delivery.transaction.expiresDate?.millisecondsSince1970
        revocationDate = delivery.transaction.revocationDate?.millisecondsSince1970
    }
}
