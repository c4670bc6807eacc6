/// What the fulfillment hook is asked to grant or take back.
public struct Delivery: Sendable, Hashable {
    /// Whether to grant or take back.
    public enum Action: String, Sendable, Hashable, Codable {
        /// Give the customer what they bought.
        case grant
        /// Take back what a refunded or revoked purchase gave.
        case revoke
    }

    /// Grant or revoke.
    public var action: Action
    /// The key to deduplicate on: the transaction id for the first grant; `<id>:grant:<n>` for a re-grant
    /// after a reversed refund; `<id>:revoke:<n>` for a take-back. The same key may arrive more than
    /// once (after a crash or a timeout), even while an earlier call with it is still running, so make the
    /// check-and-apply atomic; carrying it out twice must have the effect of once.
    public var idempotencyKey: String
    /// For a take-back, the key of the grant it undoes. A take-back can arrive for a grant whose call was
    /// interrupted and that you may never have applied: then record that key as cancelled, so a late
    /// grant with it is refused, and take back nothing.
    public var grantIdempotencyKey: String?
    /// For a take-back, whether the pipeline ever had the grant it undoes confirmed (the hook returned for it, before
    /// the revocation); `false` when the grant's call was made but its answer never arrived, so it may or may not
    /// have been applied; `nil` for a grant. Your own record of ``grantIdempotencyKey`` decides what to take back.
    public var grantAcknowledged: Bool?
    /// The App Store transaction id.
    public var transactionId: String
    /// The business user.
    public var userId: String
    /// The product, as the catalog describes it.
    public var product: CatalogProduct
    /// The verified transaction.
    public var transaction: TransactionPayload
    /// For consumables, the units to add or remove: quantity × units per purchase; 1 otherwise. A prorated refund
    /// (`transaction.revocationType` `REFUND_PRORATED`) of a consumable takes back its share, rounded down in the
    /// customer's favour: granted units × `revocationPercentage` / 100000. A take-back whose ``accessKept`` is
    /// `true` has 0 units.
    public var units: Int64
    /// For a take-back: the refund was prorated and the pipeline's ``ProratedRefundPolicy`` keeps the purchase's
    /// access (a non-consumable or a subscription): record the refunded share
    /// (`transaction.revocationPercentage`, thousandths of a percent), take nothing back. `false` otherwise.
    public var accessKept: Bool
    /// The business order id the app attached, if any.
    public var orderId: String?
    /// Whether the pipeline's ``SandboxPolicy/grantAndFlag`` flagged the purchase: a sandbox purchase (App Review,
    /// TestFlight, a sandbox tester) on a production server. Grant it as usual; keep it apart from real revenue.
    public var isFlagged: Bool

    /// The App Store environment the purchase was made in (`Production`, `Sandbox`, ...), from the signed
    /// transaction; `nil` when the data names none.
    public var environment: AppStoreEnvironment? {
        transaction.environment
    }

    /// Creates a delivery.
    public init(
        action: Action,
        idempotencyKey: String,
        grantIdempotencyKey: String? = nil,
        grantAcknowledged: Bool? = nil,
        transactionId: String,
        userId: String,
        product: CatalogProduct,
        transaction: TransactionPayload,
        units: Int64,
        orderId: String?,
        isFlagged: Bool = false,
        accessKept: Bool = false
    ) {
        self.action = action
        self.idempotencyKey = idempotencyKey
        self.grantIdempotencyKey = grantIdempotencyKey
        self.grantAcknowledged = grantAcknowledged
        self.transactionId = transactionId
        self.userId = userId
        self.product = product
        self.transaction = transaction
        self.units = units
        self.orderId = orderId
        self.isFlagged = isFlagged
        self.accessKept = accessKept
    }
}

/// The integrator's code that actually gives (and takes back) what was bought.
///
/// ## Implementation requirements
/// - Idempotent by ``Delivery/idempotencyKey``: the pipeline never calls again after a confirmed success,
///   but a crash or a timeout between your side effect and the pipeline recording it means the same key
///   can arrive again — even while an earlier call is still running, if it outlived its claim
///   (``RetryPolicy/claimDuration``). Check and apply atomically.
/// - A take-back names the grant it undoes (``Delivery/grantIdempotencyKey``); if you never applied that
///   grant, apply nothing and remember the grant key as cancelled.
/// - Throw to say "not done": the pipeline retries later with backoff. Return only when the effect is
///   durable on your side. Throw an ``IAPError`` with code ``IAPError/Code/fulfillmentRefused`` to say it can never
///   be done: the pipeline dead-letters the delivery at once instead of retrying it.
public protocol FulfillmentHook: Sendable {
    /// Grants a purchase.
    ///
    /// - Throws: Any error; the pipeline records it and retries.
    func grant(_ delivery: Delivery) async throws

    /// Takes back a refunded or revoked purchase.
    ///
    /// - Throws: Any error; the pipeline records it and retries.
    func revoke(_ delivery: Delivery) async throws
}

/// A fulfillment hook made of two closures.
public struct ClosureFulfillmentHook: FulfillmentHook {
    private let onGrant: @Sendable (Delivery) async throws -> Void
    private let onRevoke: @Sendable (Delivery) async throws -> Void

    /// Creates a hook.
    ///
    /// - Parameters:
    ///   - grant: Called to grant.
    ///   - revoke: Called to take back.
    public init(
        grant: @escaping @Sendable (Delivery) async throws -> Void,
        revoke: @escaping @Sendable (Delivery) async throws -> Void
    ) {
        self.onGrant = grant
        self.onRevoke = revoke
    }

    public func grant(_ delivery: Delivery) async throws {
        try await onGrant(delivery)
    }

    public func revoke(_ delivery: Delivery) async throws {
        try await onRevoke(delivery)
    }
}
