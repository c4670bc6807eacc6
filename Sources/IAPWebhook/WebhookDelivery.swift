#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

/// The body of one webhook request: a grant or a take-back, with everything a wallet needs to apply it once.
///
/// The body holds these fields: `type`, `idempotencyKey`, `userId`, `productId`, `transactionId`,
/// `originalTransactionId`, `environment`, `bundleId` (the app: a user id spans a team's apps), `units`, `purchaseDate`, `expiresDate` and `revocationDate`; a revoke
/// also holds `grantIdempotencyKey`, `grantAcknowledged`, `revocationType` and `revocationPercentage`, and
/// `accessKept: true` for a prorated refund whose purchase keeps its access (then `units` is 0). Dates are
/// milliseconds since 1970, as Apple writes them; a field that is not known is absent. Later versions may add
/// fields: a receiver ignores the ones it does not know.
///
/// A receiver applies each `idempotencyKey` once. A revoke has a key of its own (`<transactionId>:revoke:<n>`),
/// stable across retries, and names the grant it takes back (`grantIdempotencyKey`). Take back only what was
/// granted: a receiver that never applied that grant (its call was interrupted) takes back nothing and records the
/// grant key as cancelled, so that the grant is refused if it arrives later (answer it 409). `units` is what to take
/// back (for a prorated refund of a consumable, the refunded share).
///
/// ```json
/// {"type":"grant","idempotencyKey":"2000000000000001","userId":"alice","productId":"coins.100",
///  "transactionId":"2000000000000001","originalTransactionId":"2000000000000001","environment":"Production",
///  "bundleId":"com.example.app","units":100,"purchaseDate":1767225600000}
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
    /// The bundle id of the app the purchase was made in: on a server of several apps, which app's product
    /// `productId` is.
    public var bundleId: String?
    /// Consumable units to add (grant) or take back (revoke); 1 for other products.
    public var units: Int64
    /// When the purchase (or renewal) was made.
    public var purchaseDate: Int64?
    /// When a subscription period ends.
    public var expiresDate: Int64?
    /// When the App Store revoked the purchase (a refund).
    public var revocationDate: Int64?
    /// A revoke: the `idempotencyKey` of the grant it takes back. If you never applied that key, take back nothing
    /// and record it as cancelled.
    public var grantIdempotencyKey: String?
    /// A revoke: whether the server had that grant confirmed (a 2xx or 409 answer) before the revocation; `false`
    /// when its call was made but no answer arrived, so it may or may not have been applied. Your own record of
    /// `grantIdempotencyKey` decides.
    public var grantAcknowledged: Bool?
    /// A revoke: Apple's `revocationType`, `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`, when Apple gave one.
    public var revocationType: String?
    /// A revoke: Apple's `revocationPercentage` of a prorated refund, in thousandths of a percent (`25000` is 25 %),
    /// when Apple gave one.
    public var revocationPercentage: Int32?
    /// A revoke of a prorated refund that keeps the purchase's access (a non-consumable or a subscription, under the
    /// pipeline's default `ProratedRefundPolicy.keepAccess`): `true`, and `units` is 0 — record the refunded share,
    /// take nothing back. Absent otherwise.
    public var accessKept: Bool?

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
        bundleId = delivery.transaction.bundleId
        units = delivery.units
        purchaseDate = delivery.transaction.purchaseDate?.millisecondsSince1970
        expiresDate = delivery.transaction.expiresDate?.millisecondsSince1970
        revocationDate = delivery.transaction.revocationDate?.millisecondsSince1970
        if delivery.action == .revoke {
            grantIdempotencyKey = delivery.grantIdempotencyKey
            grantAcknowledged = delivery.grantAcknowledged
            revocationType = delivery.transaction.revocationType?.rawValue
            revocationPercentage = delivery.transaction.revocationPercentage
            accessKept = delivery.accessKept ? true : nil
        }
    }
}
