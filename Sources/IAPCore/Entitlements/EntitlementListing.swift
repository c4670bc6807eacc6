#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// What a user has at an instant, as a list a backend or a person reads: one row per product the user ever bought
/// (a subscription group shows the product of its current transaction), consumables included, and each consumable
/// balance.
///
/// It is the one JSON shape of a user's entitlements: `iap ledger entitlements --json` prints it and
/// `GET /iap/v1/users/{userId}/entitlements` answers it.
///
/// ```json
/// {"at":1767225600000,"balances":{"coins.100":200},"entitlements":[{"expiresDate":null,"hasAccess":true,
///  "originalTransactionId":"2000000000000001","productId":"coins.100","state":"active","type":"consumable"}],
///  "user":"alice"}
/// ```
///
/// A consumable's row is `active` while any delivered purchase of it stands, `revoked` when every one was refunded,
/// and has access while its balance is above zero. A subscription billed with a commitment (`billingPlanType`
/// `MONTHLY`) also has `commitmentExpiresDate` and `commitmentRenewalsOwed`.
public struct EntitlementListing: Sendable, Hashable {
    /// One product the user has, or had.
    public struct Row: Sendable, Hashable {
        /// The product (for a subscription group, the product of its current transaction).
        public var productId: String
        /// The product's kind.
        public var kind: ProductKind
        /// Where the entitlement stands.
        public var state: EntitlementState
        /// Whether the user has access now.
        public var hasAccess: Bool
        /// When access ends; `nil` for a non-consumable or a consumable.
        public var expiresDate: Date?
        /// The purchase the row stands on.
        public var originalTransactionId: String
        /// When a subscription's commitment ends (``ProductEntitlement/commitmentExpiresDate``); `nil` otherwise.
        public var commitmentExpiresDate: Date?
        /// The renewals a subscription's commitment still owes (``ProductEntitlement/commitmentRenewalsOwed``).
        public var commitmentRenewalsOwed: Int?

        /// Creates a row.
        public init(
            productId: String,
            kind: ProductKind,
            state: EntitlementState,
            hasAccess: Bool,
            expiresDate: Date?,
            originalTransactionId: String
        ) {
            self.productId = productId
            self.kind = kind
            self.state = state
            self.hasAccess = hasAccess
            self.expiresDate = expiresDate
            self.originalTransactionId = originalTransactionId
            self.commitmentExpiresDate = nil
            self.commitmentRenewalsOwed = nil
        }
    }

    /// The user.
    public var userId: String
    /// The instant the listing is for.
    public var instant: Date
    /// One row per product, sorted by product id.
    public var rows: [Row]
    /// The units of each consumable the user holds, by product id.
    public var balances: [String: Int64]

    /// The listing of an entitlement snapshot and the ledger entries it was computed from.
    ///
    /// - Parameters:
    ///   - userId: The user.
    ///   - snapshot: What ``EntitlementEngine`` worked out.
    ///   - entries: The user's ledger entries.
    public init(userId: String, snapshot: EntitlementSnapshot, entries: [LedgerEntry]) {
        self.userId = userId
        self.instant = snapshot.instant
        var rows = snapshot.entitlements.map { item in
            var row = Row(
                productId: item.productId,
                kind: item.kind,
                state: item.state,
                hasAccess: item.hasAccess,
                expiresDate: item.expiresDate,
                originalTransactionId: item.originalTransactionId
            )
            row.commitmentExpiresDate = item.commitmentExpiresDate
            row.commitmentRenewalsOwed = item.commitmentRenewalsOwed
            return row
        }
        // Consumables show in the list too: active while any delivered purchase stands, revoked when all were refunded.
        for (productId, balance) in snapshot.balances.sorted(by: { $0.key < $1.key }) {
            let purchases = entries.filter { $0.productId == productId }.sorted { $0.sequence < $1.sequence }
            let standing = purchases.contains {
                ($0.revokedAt == nil && $0.transaction.revocationDate == nil || $0.transaction.isPartlyRefunded)
                    && $0.deliveredAt != nil
            }
            rows.append(
                Row(
                    productId: productId,
                    kind: .consumable,
                    state: standing ? .active : .revoked,
                    hasAccess: balance.balance > 0,
                    expiresDate: nil,
                    originalTransactionId: purchases.last?.originalTransactionId ?? ""
                )
            )
        }
        rows.sort { $0.productId < $1.productId }
        self.rows = rows
        self.balances = snapshot.balances.mapValues(\.balance)
    }

    /// Reads a user's entries and renewal infos from a ledger and lists what the user has at an instant.
    ///
    /// The catalog's snapshot decides each product; a product the snapshot does not list is asked of the catalog
    /// (a catalog that answers for any product, or one kept elsewhere), and skipped when the catalog does not know it —
    /// unless `unknownProducts` is ``UnknownProductPolicy/signedType``: then the product is the one its latest signed
    /// transaction describes, as the pipeline delivered it.
    ///
    /// - Parameters:
    ///   - userId: The user.
    ///   - store: The ledger.
    ///   - catalog: What each product is.
    ///   - unknownProducts: What a product the catalog does not know is: skipped by default.
    ///   - proratedRefunds: What a prorated refund does to a non-consumable or a subscription (access kept by default).
    ///   - instant: Now, as the caller's clock says.
    ///   - bundleId: On a ledger of several apps, the app whose entitlements to list: only its purchases count, each
    ///     product as its own catalog says (``AppRoutingCatalog/catalog(bundleId:)``); `nil` lists every purchase.
    /// - Returns: The listing.
    /// - Throws: ``IAPError`` when the ledger or the catalog fails.
    public static func read(
        userId: String,
        from store: some EntitlementStore,
        catalog: some ProductCatalog,
        unknownProducts: UnknownProductPolicy = .park,
        proratedRefunds: ProratedRefundPolicy = .keepAccess,
        at instant: Date,
        bundleId: String? = nil
    ) async throws -> EntitlementListing {
        guard let bundleId else {
            return try await read(
                userId: userId,
                entries: try await store.allHistory(userId: userId),
                from: store,
                catalog: catalog,
                unknownProducts: unknownProducts,
                proratedRefunds: proratedRefunds,
                at: instant
            )
        }
        return try await read(
            userId: userId,
            entries: try await store.allHistory(userId: userId).filter { $0.transaction.bundleId == bundleId },
            from: store,
            catalog: catalog.products(ofApp: bundleId),
            unknownProducts: unknownProducts,
            proratedRefunds: proratedRefunds,
            at: instant
        )
    }

    private static func read(
        userId: String,
        entries: [LedgerEntry],
        from store: some EntitlementStore,
        catalog: any ProductCatalog,
        unknownProducts: UnknownProductPolicy,
        proratedRefunds: ProratedRefundPolicy,
        at instant: Date
    ) async throws -> EntitlementListing {
        var renewals: [RenewalInfoPayload] = []
        // Renewal infos exist for auto-renewable subscriptions only: a purchase of another kind asks for none (a
        // customer of consumables costs one query, not one per purchase). A transaction that names no type is asked.
        let otherKinds: Set<ProductType> = [.consumable, .nonConsumable, .nonRenewingSubscription]
        let subscriptions = entries.filter { !otherKinds.contains($0.transaction.type ?? .autoRenewableSubscription) }
        for original in Set(subscriptions.map(\.originalTransactionId)).sorted() {
            if let renewal = try await store.renewalInfo(originalTransactionId: original) {
                renewals.append(renewal)
            }
        }
        var snapshot = try await catalog.snapshot()
        var extra: [CatalogProduct] = []
        for productId in Set(entries.map(\.productId)).sorted() where snapshot[productId: productId] == nil {
            do {
                extra.append(try await catalog.product(id: productId))
            } catch let error as IAPError where error.code == .unknownProduct {
                let latest = entries.last { $0.productId == productId }
                if unknownProducts == .signedType, let latest,
                    let described = UnknownProductPolicy.product(describedBy: latest.transaction)
                {
                    extra.append(described)
                }
                continue
            }
        }
        if !extra.isEmpty {
            snapshot = try StaticProductCatalog(
                products: snapshot.allProducts() + extra,
                storeKitSettings: snapshot.storeKitSettings
            )
        }
        let evaluated = EntitlementEngine(catalog: snapshot, proratedRefunds: proratedRefunds).evaluate(
            entries: entries,
            renewalInfos: renewals,
            at: instant
        )
        return EntitlementListing(userId: userId, snapshot: evaluated, entries: entries)
    }

    /// The listing as JSON: `{"user", "at", "entitlements": [...], "balances": {...}}`, keys sorted, dates in
    /// milliseconds since 1970, an unknown `expiresDate` as `null`.
    ///
    /// - Returns: The JSON text.
    /// - Throws: An encoding error (none for the values a listing holds).
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(Document(self))
    }

    /// The listings of one user in each of several apps as one JSON document: `{"user", "at", "apps": [{"bundleId",
    /// "entitlements": [...], "balances": {...}}, ...]}`, the apps in the order given, each part as ``jsonData()``
    /// writes a listing; keys sorted.
    ///
    /// - Parameters:
    ///   - userId: The user: a user id spans the apps.
    ///   - instant: The instant of every listing.
    ///   - apps: Each app's bundle id and listing (``read(userId:from:catalog:unknownProducts:proratedRefunds:at:bundleId:)``
    ///     with its bundle id).
    /// - Returns: The JSON text.
    /// - Throws: An encoding error (none for the values a listing holds).
    public static func jsonData(
        userId: String,
        at instant: Date,
        apps: [(bundleId: String, listing: EntitlementListing)]
    ) throws -> Data {
        struct App: Encodable {
            let bundleId: String
            let entitlements: [Document.Item]
            let balances: [String: Int64]
        }
        struct Apps: Encodable {
            let user: String
            let at: Int64
            let apps: [App]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(
            Apps(
                user: userId,
                at: instant.millisecondsSince1970,
                apps: apps.map {
                    App(
                        bundleId: $0.bundleId,
                        entitlements: $0.listing.rows.map(Document.Item.init),
                        balances: $0.listing.balances
                    )
                }
            )
        )
    }

    /// The JSON document.
    private struct Document: Encodable {
        struct Item: Encodable {
            let row: Row

            enum CodingKeys: String, CodingKey {
                case productId, type, state, hasAccess, expiresDate, originalTransactionId
                case commitmentExpiresDate, commitmentRenewalsOwed
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(row.productId, forKey: .productId)
                try container.encode(row.kind.rawValue, forKey: .type)
                try container.encode(row.state.rawValue, forKey: .state)
                try container.encode(row.hasAccess, forKey: .hasAccess)
                if let expires = row.expiresDate {
                    try container.encode(expires.millisecondsSince1970, forKey: .expiresDate)
                } else {
                    try container.encodeNil(forKey: .expiresDate)
                }
                try container.encode(row.originalTransactionId, forKey: .originalTransactionId)
                if let end = row.commitmentExpiresDate {
                    try container.encode(end.millisecondsSince1970, forKey: .commitmentExpiresDate)
                }
                if let owed = row.commitmentRenewalsOwed {
                    try container.encode(owed, forKey: .commitmentRenewalsOwed)
                }
            }
        }

        let user: String
        let at: Int64
        let entitlements: [Item]
        let balances: [String: Int64]

        init(_ listing: EntitlementListing) {
            user = listing.userId
            at = listing.instant.millisecondsSince1970
            entitlements = listing.rows.map(Item.init)
            balances = listing.balances
        }
    }
}
