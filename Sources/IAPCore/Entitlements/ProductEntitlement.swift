#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// What one product (for subscriptions: one subscription group) gives a user at an instant.
public struct ProductEntitlement: Codable, Sendable, Hashable {
    /// The product the user has: for a subscription group, the product of its current transaction.
    public var productId: String
    /// The product's kind, from the catalog.
    public var kind: ProductKind
    /// Where the entitlement stands.
    public var state: EntitlementState
    /// Whether the user has access now: `state` is `active`, `willExpire` or `gracePeriod`.
    public var hasAccess: Bool
    /// When access ends: the subscription's `expiresDate` (the grace period's end in `gracePeriod`), the end of
    /// a non-renewing subscription's access; `nil` for a non-consumable.
    public var expiresDate: Date?
    /// The original transaction id of the transaction the entitlement stands on.
    public var originalTransactionId: String
    /// The transaction the entitlement stands on: the subscription's current transaction, the non-consumable
    /// purchase, or the non-renewing purchase whose access period applies.
    public var transactionId: String
    /// The subscription group, for auto-renewable subscriptions.
    public var subscriptionGroupId: String?
    /// The product the subscription renews to, when it differs from ``productId`` (a pending downgrade or
    /// crossgrade); `nil` otherwise.
    public var autoRenewProductId: String?
    /// Whether the user has the product through Family Sharing rather than their own purchase.
    public var isFamilyShared: Bool
    /// For a subscription billed with a commitment (`billingPlanType` `MONTHLY`, `commitmentInfo`): when the
    /// commitment ends; `nil` otherwise.
    public var commitmentExpiresDate: Date?
    /// For a subscription billed with a commitment: the renewals still owed within it (its billing periods after the
    /// current one); `nil` otherwise.
    public var commitmentRenewalsOwed: Int?

    /// Creates an entitlement.
    public init(
        productId: String,
        kind: ProductKind,
        state: EntitlementState,
        hasAccess: Bool,
        expiresDate: Date?,
        originalTransactionId: String,
        transactionId: String,
        subscriptionGroupId: String? = nil,
        autoRenewProductId: String? = nil,
        isFamilyShared: Bool = false
    ) {
        self.productId = productId
        self.kind = kind
        self.state = state
        self.hasAccess = hasAccess
        self.expiresDate = expiresDate
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.subscriptionGroupId = subscriptionGroupId
        self.autoRenewProductId = autoRenewProductId
        self.isFamilyShared = isFamilyShared
        self.commitmentExpiresDate = nil
        self.commitmentRenewalsOwed = nil
    }
}
