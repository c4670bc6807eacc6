#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// The filters and order of a transaction history request.
///
/// Mirrors Apple's `TransactionHistoryRequest`, the query parameters of the App Store Server API's Get Transaction
/// History (`startDate`, `endDate`, `productId`, `productType`, `sort`, `subscriptionGroupIdentifier`,
/// `inAppOwnershipType`, `revoked`). Send the same filters with every page and with every later resume from a
/// saved revision, as Apple requires.
public struct TransactionHistoryRequest: Codable, Hashable, Sendable {
    /// A product type filter value (`productType`).
    public enum ProductType: String, Codable, Hashable, Sendable, CaseIterable {
        /// Auto-renewable subscriptions.
        case autoRenewable = "AUTO_RENEWABLE"
        /// Non-renewing subscriptions.
        case nonRenewable = "NON_RENEWABLE"
        /// Consumables.
        case consumable = "CONSUMABLE"
        /// Non-consumables.
        case nonConsumable = "NON_CONSUMABLE"
    }

    /// The order of the records (`sort`), by when they were last modified.
    public enum Order: String, Codable, Hashable, Sendable, CaseIterable {
        /// Oldest modification first, the default.
        case ascending = "ASCENDING"
        /// Newest modification first.
        case descending = "DESCENDING"
    }

    /// Only transactions purchased at or after this instant.
    public var startDate: Date?
    /// Only transactions purchased before this instant.
    public var endDate: Date?
    /// Only these products; `nil` or empty for all.
    public var productIds: [String]?
    /// Only these product types; `nil` or empty for all.
    public var productTypes: [ProductType]?
    /// The order of the records; ascending when `nil`.
    public var sort: Order?
    /// Only these subscription groups; `nil` or empty for all.
    public var subscriptionGroupIdentifiers: [String]?
    /// Only purchased, or only family-shared, transactions.
    public var inAppOwnershipType: InAppOwnershipType?
    /// Only revoked (`true`) or only unrevoked (`false`) transactions; `nil` for both.
    public var revoked: Bool?

    /// Creates a request; every filter defaults to none.
    public init(
        startDate: Date? = nil,
        endDate: Date? = nil,
        productIds: [String]? = nil,
        productTypes: [ProductType]? = nil,
        sort: Order? = nil,
        subscriptionGroupIdentifiers: [String]? = nil,
        inAppOwnershipType: InAppOwnershipType? = nil,
        revoked: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.productIds = productIds
        self.productTypes = productTypes
        self.sort = sort
        self.subscriptionGroupIdentifiers = subscriptionGroupIdentifiers
        self.inAppOwnershipType = inAppOwnershipType
        self.revoked = revoked
    }
}
