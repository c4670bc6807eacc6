#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Where an order stands, as a customer-support screen shows it.
public enum OrderState: String, Codable, Sendable, Hashable, CaseIterable {
    /// Granted.
    case delivered
    /// Recorded; the grant is under way.
    case pending
    /// The grant failed; a retry is scheduled.
    case retrying
    /// The grant failed too often; it waits for a person.
    case deadLettered
    /// Recorded; no user has claimed it yet.
    case awaitingOwner
    /// Refunded or revoked by the App Store, or withdrawn after a parent rescinded consent
    /// (``OrderHistoryItem/consentRescindedAt``).
    case revoked
    /// A share of the price was refunded (a prorated refund, ``OrderHistoryItem/revocationPercentage``); a consumable
    /// lost that share of its units, anything else keeps its access unless the pipeline's policy revokes it.
    case partlyRefunded
    /// Recorded, but its product is not in the catalog: nothing is granted until the catalog names it.
    case unknownProduct
}

/// One order in a user's history: no raw signed data, only what a person needs.
public struct OrderHistoryItem: Codable, Sendable, Hashable {
    /// The App Store transaction id.
    public var transactionId: String
    /// The original transaction id.
    public var originalTransactionId: String
    /// The product id.
    public var productId: String
    /// The App Store's product type.
    public var type: ProductType?
    /// When it was bought (or renewed).
    public var purchaseDate: Date?
    /// When a subscription period ends.
    public var expiresDate: Date?
    /// How many were bought.
    public var quantity: Int
    /// The price in milli-units of the currency (9990 is 9.99).
    public var price: Int64?
    /// The ISO 4217 currency code.
    public var currency: String?
    /// The App Store environment.
    public var environment: AppStoreEnvironment?
    /// Whether it came through Family Sharing.
    public var isFamilyShared: Bool
    /// The business order id the app attached.
    public var orderId: String?
    /// Where the order stands.
    public var state: OrderState
    /// When the ledger recorded it.
    public var recordedAt: Date
    /// When it was granted.
    public var deliveredAt: Date?
    /// When the App Store revoked it, or the server withdrew it (``consentRescindedAt``).
    public var revokedAt: Date?
    /// Why, when it was revoked: `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`.
    public var revocationType: RevocationType?
    /// For a prorated refund, the refunded share in thousandths of a percent (`25000` is 25 %).
    public var revocationPercentage: Int32?
    /// When the server withdrew it because a parent rescinded consent for the Apple Account (`RESCIND_CONSENT`).
    public var consentRescindedAt: Date?

    /// The history item of a ledger entry.
    public init(_ entry: LedgerEntry) {
        transactionId = entry.transactionId
        originalTransactionId = entry.originalTransactionId
        productId = entry.productId
        type = entry.transaction.type
        purchaseDate = entry.transaction.purchaseDate
        expiresDate = entry.transaction.expiresDate
        quantity = entry.transaction.effectiveQuantity
        price = entry.transaction.price
        currency = entry.transaction.currency
        environment = entry.transaction.environment
        isFamilyShared = entry.transaction.inAppOwnershipType == .familyShared
        orderId = entry.orderId
        recordedAt = entry.recordedAt
        deliveredAt = entry.deliveredAt
        revokedAt = entry.revokedAt
        revocationType = entry.revokedAt == nil ? nil : entry.transaction.revocationType
        revocationPercentage = entry.revokedAt == nil ? nil : entry.transaction.revocationPercentage
        consentRescindedAt = entry.consentRescindedAt
        state =
            if entry.consentRescindedAt != nil {
                .revoked
            } else if entry.revokedAt != nil {
                entry.transaction.isPartlyRefunded ? .partlyRefunded : .revoked
            } else {
                switch entry.deliveryState {
                case .delivered: .delivered
                case .pending: .pending
                case .retrying: .retrying
                case .deadLettered: .deadLettered
                case .awaitingOwner: .awaitingOwner
                case .unknownProduct: .unknownProduct
                }
            }
    }
}

/// Which orders a history page shows; `nil` means any.
public struct OrderHistoryFilter: Sendable, Hashable {
    /// Only these products.
    public var productIds: Set<String>?
    /// Only these product types.
    public var types: Set<ProductType>?
    /// Only orders in these states.
    public var states: Set<OrderState>?
    /// Only orders of the app with this bundle id (a ledger of several apps); `nil` means any app.
    public var bundleId: String?

    /// Creates a filter.
    public init(
        productIds: Set<String>? = nil,
        types: Set<ProductType>? = nil,
        states: Set<OrderState>? = nil,
        bundleId: String? = nil
    ) {
        self.productIds = productIds
        self.types = types
        self.states = states
        self.bundleId = bundleId
    }

    func matches(_ entry: LedgerEntry) -> Bool {
        guard let bundleId else { return true }
        return entry.transaction.bundleId == bundleId
    }

    func matches(_ item: OrderHistoryItem) -> Bool {
        if let productIds, !productIds.contains(item.productId) { return false }
        if let types, !types.contains(where: { $0 == item.type }) { return false }
        if let states, !states.contains(item.state) { return false }
        return true
    }
}

/// One page of a user's orders, newest first.
public struct OrderHistoryPage: Codable, Sendable, Hashable {
    /// The orders, newest first.
    public var items: [OrderHistoryItem]
    /// The cursor of the next (older) page, or `nil` at the end.
    public var nextCursor: String?
}

/// A user's orders, newest first, with a stable cursor and filters — revoked and pending orders included.
public struct OrderHistory: Sendable {
    /// The most ledger entries one page call examines; a page may hold fewer items than asked, with a cursor.
    public static let scanBudget = 1_000

    private let store: any EntitlementStore

    /// Creates an order history over a ledger.
    public init(store: some EntitlementStore) {
        self.store = store
    }

    /// One page of a user's orders.
    ///
    /// - Parameters:
    ///   - userId: The user.
    ///   - cursor: `nil` for the newest orders, or the previous page's `nextCursor`.
    ///   - limit: The most orders to return, 1 to 200.
    ///   - filter: Which orders to show.
    /// - Returns: The page.
    /// - Throws: ``IAPError`` with code `invalidArgument` for a bad limit or cursor, or if the store fails.
    public func page(
        userId: String,
        cursor: String? = nil,
        limit: Int = 20,
        filter: OrderHistoryFilter = OrderHistoryFilter()
    ) async throws -> OrderHistoryPage {
        guard (1...200).contains(limit) else {
            throw IAPError(.invalidArgument, "the page size must be between 1 and 200, not \(limit)")
        }
        var items: [OrderHistoryItem] = []
        var next = cursor
        var examined = 0
        repeat {
            // Never ask for more than is still needed, so no examined entry is skipped by the cursor.
            let page = try await store.history(userId: userId, cursor: next, limit: limit - items.count)
            items += page.entries.filter(filter.matches).map(OrderHistoryItem.init).filter(filter.matches)
            examined += page.entries.count
            next = page.nextCursor
            // A filter that matches little must not walk a whole long history in one call: return what was
            // found with a cursor to go on from.
        } while items.count < limit && next != nil && examined < Self.scanBudget
        return OrderHistoryPage(items: items, nextCursor: next)
    }
}

extension OrderHistoryPage {
    /// The page as JSON for one user: `{"user", "items": [...], "nextCursor"}`, keys sorted, Apple's field names,
    /// dates in milliseconds since 1970, `nextCursor` `null` at the end.
    ///
    /// It is the one JSON shape of a user's history: `iap ledger history --json` prints it and
    /// `GET /iap/v1/users/{userId}/history` answers it.
    ///
    /// - Parameter userId: The user whose page it is.
    /// - Returns: The JSON text.
    /// - Throws: An encoding error (none for the values a page holds).
    public func jsonData(userId: String) throws -> Data {
        try AppStoreJSON.makeEncoder().encode(Document(user: userId, page: self))
    }

    private struct Document: Encodable {
        let user: String
        let page: OrderHistoryPage

        enum CodingKeys: String, CodingKey {
            case user, items, nextCursor
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(user, forKey: .user)
            try container.encode(page.items, forKey: .items)
            if let next = page.nextCursor {
                try container.encode(next, forKey: .nextCursor)
            } else {
                try container.encodeNil(forKey: .nextCursor)
            }
        }
    }
}

/// Everything one Apple Account bought in the app, whoever the app's users were: the ledger's entries whose
/// transaction carries its app transaction id (``TransactionPayload/appTransactionId``, stable per Apple Account and
/// app), newest first, each with its owner.
///
/// `iap ledger history --app-transaction-id ID --json` prints its JSON and
/// `GET /iap/v1/app-transactions/{appTransactionId}/history` answers it.
public struct AppAccountHistory: Sendable, Hashable {
    /// One purchase and who owns it.
    public struct Purchase: Sendable, Hashable {
        /// The user the ledger gives it to; `nil` while it waits for its owner.
        public var owner: String?
        /// The order, as a user's history shows it.
        public var item: OrderHistoryItem
    }

    /// The app transaction id.
    public var appTransactionId: String
    /// Its purchases, newest first.
    public var purchases: [Purchase]

    /// Whether a text can be an app transaction id: 1 to 64 visible ASCII characters (Apple's are digits).
    public static func isValid(appTransactionId: String) -> Bool {
        (1...64).contains(appTransactionId.utf8.count)
            && appTransactionId.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// Reads an Apple Account's purchases from a ledger.
    ///
    /// - Parameters:
    ///   - appTransactionId: The app transaction id.
    ///   - store: The ledger (``EntitlementStore/entries(appTransactionId:)``).
    /// - Throws: ``IAPError`` `unsupportedOperation` for a store without the index, or if the store fails.
    public static func read(appTransactionId: String, from store: some EntitlementStore) async throws
        -> AppAccountHistory
    {
        let entries = try await store.entries(appTransactionId: appTransactionId)
        return AppAccountHistory(
            appTransactionId: appTransactionId,
            purchases: entries.reversed().map { Purchase(owner: $0.owner, item: OrderHistoryItem($0)) }
        )
    }

    /// The history as JSON: `{"appTransactionId", "items": [...]}`, each item a user's history item with `userId`
    /// (`null` while it waits for its owner); keys sorted, Apple's field names, dates in milliseconds since 1970.
    ///
    /// - Returns: The JSON text.
    /// - Throws: An encoding error (none for the values a history holds).
    public func jsonData() throws -> Data {
        try AppStoreJSON.makeEncoder().encode(Document(history: self))
    }

    private struct Document: Encodable {
        let history: AppAccountHistory

        enum CodingKeys: String, CodingKey {
            case appTransactionId, items
        }

        struct Item: Encodable {
            let purchase: Purchase

            enum CodingKeys: String, CodingKey {
                case userId
            }

            func encode(to encoder: any Encoder) throws {
                try purchase.item.encode(to: encoder)
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(purchase.owner, forKey: .userId)
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(history.appTransactionId, forKey: .appTransactionId)
            try container.encode(history.purchases.map(Item.init), forKey: .items)
        }
    }
}
