#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// What the signed-in user has, as the purchase server's ledger says (`GET /iap/v1/me/entitlements` of `iap serve`):
/// the source of truth for unlocking, across the customer's devices and platforms.
public struct ServerEntitlements: Sendable, Hashable, Decodable {
    /// One product the user has, or had.
    public struct Entitlement: Sendable, Hashable, Decodable {
        /// The product (for a subscription group, the product of its current transaction).
        public var productId: String
        /// The App Store product type (`consumable`, `nonConsumable`, `autoRenewable`, `nonRenewing`).
        public var type: String
        /// Where it stands: `active`, `willExpire`, `gracePeriod`, `billingRetry`, `expired`, `revoked`, ...
        public var state: String
        /// Whether the user has access now.
        public var hasAccess: Bool
        /// When access ends, if it does.
        public var expiresDate: Date?
        /// The purchase it stands on.
        public var originalTransactionId: String
        /// When a subscription's commitment ends, for one billed with a commitment.
        public var commitmentExpiresDate: Date?
        /// The renewals such a commitment still owes.
        public var commitmentRenewalsOwed: Int?

        private enum CodingKeys: String, CodingKey {
            case productId, type, state, hasAccess, expiresDate, originalTransactionId, commitmentExpiresDate
            case commitmentRenewalsOwed
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            productId = try container.decode(String.self, forKey: .productId)
            type = try container.decode(String.self, forKey: .type)
            state = try container.decode(String.self, forKey: .state)
            hasAccess = try container.decode(Bool.self, forKey: .hasAccess)
            expiresDate = try container.decodeIfPresent(Int64.self, forKey: .expiresDate)
                .map(Date.init(millisecondsSince1970:))
            originalTransactionId = try container.decode(String.self, forKey: .originalTransactionId)
            commitmentExpiresDate = try container.decodeIfPresent(Int64.self, forKey: .commitmentExpiresDate)
                .map(Date.init(millisecondsSince1970:))
            commitmentRenewalsOwed = try container.decodeIfPresent(Int.self, forKey: .commitmentRenewalsOwed)
        }
    }

    /// The user the server authenticated.
    public var userId: String
    /// The instant the server answered for.
    public var instant: Date
    /// One row per product, sorted by product id.
    public var entitlements: [Entitlement]
    /// The units of each consumable the user holds, by product id.
    public var balances: [String: Int64]

    /// Whether any row grants access to `productId` now.
    public func hasAccess(to productId: String) -> Bool {
        entitlements.contains { $0.productId == productId && $0.hasAccess }
    }

    private enum CodingKeys: String, CodingKey {
        case user, at, entitlements, balances
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        userId = try container.decode(String.self, forKey: .user)
        instant = Date(millisecondsSince1970: try container.decode(Int64.self, forKey: .at))
        entitlements = try container.decode([Entitlement].self, forKey: .entitlements)
        balances = try container.decode([String: Int64].self, forKey: .balances)
    }
}
