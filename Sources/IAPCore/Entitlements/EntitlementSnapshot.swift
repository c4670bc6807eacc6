#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Everything one user is entitled to at an instant, as ``EntitlementEngine`` works it out.
///
/// `entitlements` holds one entry per non-consumable, per non-renewing subscription and per auto-renewable
/// subscription group the user ever bought, with or without access, sorted by product id. Consumables
/// appear only in `balances`: they grant units, not access.
public struct EntitlementSnapshot: Codable, Sendable, Hashable {
    /// The instant the snapshot is for.
    public var instant: Date
    /// One entitlement per non-consumable, non-renewing product and subscription group, sorted by product id.
    public var entitlements: [ProductEntitlement]
    /// The balance of every consumable product the user has transactions or uses for, by product id.
    public var balances: [String: ConsumableBalance]
    /// The entitlement ids the user has: the catalog `entitlements` of every product with access.
    public var entitlementIds: Set<String>
    /// Product ids found in the ledger (or in uses) that the catalog does not know, sorted; they were skipped.
    public var unknownProductIds: [String]

    /// Creates a snapshot.
    public init(
        instant: Date,
        entitlements: [ProductEntitlement],
        balances: [String: ConsumableBalance],
        entitlementIds: Set<String>,
        unknownProductIds: [String]
    ) {
        self.instant = instant
        self.entitlements = entitlements
        self.balances = balances
        self.entitlementIds = entitlementIds
        self.unknownProductIds = unknownProductIds
    }

    /// The entitlement of a product, or `nil` when the user never bought it.
    ///
    /// - Parameter productId: The product id (for a subscription group, the product of its current transaction).
    /// - Returns: The entitlement.
    public func entitlement(productId: String) -> ProductEntitlement? {
        entitlements.first { $0.productId == productId }
    }

    /// The entitlement of an auto-renewable subscription group, or `nil` when the user never subscribed to it.
    ///
    /// - Parameter subscriptionGroupId: The subscription group.
    /// - Returns: The entitlement.
    public func entitlement(subscriptionGroupId: String) -> ProductEntitlement? {
        entitlements.first { $0.subscriptionGroupId == subscriptionGroupId }
    }

    /// Whether the user has an entitlement id.
    ///
    /// - Parameter entitlementId: An entitlement id from the catalog, such as `"premium"`.
    /// - Returns: `true` when a product with access unlocks it.
    public func hasEntitlement(_ entitlementId: String) -> Bool {
        entitlementIds.contains(entitlementId)
    }
}

extension EntitlementSnapshot {
    private enum CodingKeys: String, CodingKey {
        case instant, entitlements, balances, entitlementIds, unknownProductIds
    }

    /// Encodes the snapshot, with `entitlementIds` sorted so that equal snapshots encode equally.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(instant, forKey: .instant)
        try container.encode(entitlements, forKey: .entitlements)
        try container.encode(balances, forKey: .balances)
        try container.encode(entitlementIds.sorted(), forKey: .entitlementIds)
        try container.encode(unknownProductIds, forKey: .unknownProductIds)
    }
}
