#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Works out what a user is entitled to from their ledger entries, renewal infos and the catalog.
///
/// The engine is pure: it reads no clock, does no I/O and gives the same snapshot for the same input, with
/// every list sorted. The instant is compared only with expiry dates; the entries are taken as everything
/// known now, so a revocation counts whatever its date.
///
/// Rules, per kind of product (the catalog's kind wins over the transaction's `type`):
/// - **Non-consumable**: `active` (no expiry) while one purchase is not revoked, else `revoked`. A purchase of
///   the user's own is preferred over a family-shared one when both exist.
/// - **Consumable**: no entitlement, a balance. Delivered purchases add `quantity × unitsPerPurchase` units at
///   their purchase date; a refund of a delivered purchase takes them back at its revocation date; uses take
///   units at their date. Undelivered purchases count for nothing. ``ConsumableRefundPolicy`` says what
///   happens below zero.
/// - **Auto-renewable**: one entitlement per subscription group. Per original transaction id, the current
///   transaction is the latest by purchase date of those not superseded by an upgrade (`isUpgraded`); with
///   the renewal info of the same original transaction id (the latest signed one) it is `revoked`, `active`,
///   `willExpire` (auto-renew off), `gracePeriod` (billing retry, grace period not over; expiry shown is the
///   grace period's end), `billingRetry` or `expired`. Without a renewal info only the dates decide. When the
///   group has several original transactions (a family-shared one and the user's own, say), the one with
///   access, then the latest expiry, wins. A pending downgrade or crossgrade shows as `autoRenewProductId`.
/// - **Non-renewing**: each purchase that is not revoked gives access for the catalog `duration` from its
///   purchase date, or from the end of the access before it when it was bought before that ended. `active`
///   inside such a period, else `expired`; `revoked` when every purchase was revoked.
///
/// An entry counts as revoked when `revokedAt ?? transaction.revocationDate` is set, except a prorated refund of a
/// non-consumable or a subscription under ``ProratedRefundPolicy/keepAccess`` (the default) whose consent was not
/// rescinded (``LedgerEntry/consentRescindedAt``); a consumable's prorated
/// refund takes back its share of the units, rounded down. A non-renewing purchase whose purchase date is ahead of the
/// instant by more than ``clockSkewTolerance`` is `notStarted`, never `expired`. Entries with the same
/// `transactionId` count once (the highest `revision`). Entries whose product the catalog does not know are
/// skipped and listed in ``EntitlementSnapshot/unknownProductIds``.
public struct EntitlementEngine: Sendable {
    /// The catalog that says what each product is and unlocks: a ``StaticProductCatalog``, or the snapshot of
    /// another catalog.
    public let catalog: StaticProductCatalog
    /// What a consumable balance does below zero.
    public let refundPolicy: ConsumableRefundPolicy
    /// What a prorated refund does to a non-consumable or a subscription.
    public let proratedRefunds: ProratedRefundPolicy
    /// How far a purchase date may be ahead of the instant asked about and still count as begun: the App Store's
    /// clock and the server's disagree by a little. Five minutes by default.
    public let clockSkewTolerance: TimeInterval

    /// The default ``clockSkewTolerance``: five minutes.
    public static let defaultClockSkewTolerance: TimeInterval = 300

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - catalog: What each product is and unlocks.
    ///   - refundPolicy: What a consumable balance does when refunds take back more than it holds.
    ///   - proratedRefunds: What a prorated refund does to a non-consumable or a subscription; access is kept by
    ///     default.
    ///   - clockSkewTolerance: How far ahead of the instant a purchase may be and still count as begun.
    public init(
        catalog: StaticProductCatalog,
        refundPolicy: ConsumableRefundPolicy = .allowNegativeBalance,
        proratedRefunds: ProratedRefundPolicy = .keepAccess,
        clockSkewTolerance: TimeInterval = EntitlementEngine.defaultClockSkewTolerance
    ) {
        self.catalog = catalog
        self.refundPolicy = refundPolicy
        self.proratedRefunds = proratedRefunds
        self.clockSkewTolerance = clockSkewTolerance
    }

    /// Creates an engine over a snapshot of any catalog: one in a database, a remote one, a static one.
    ///
    /// The engine answers from the products the catalog lists now (``ProductCatalog/snapshot()``); take a new
    /// engine to see later changes.
    ///
    /// - Parameters:
    ///   - catalog: What each product is and unlocks.
    ///   - refundPolicy: What a consumable balance does when refunds take back more than it holds.
    ///   - proratedRefunds: What a prorated refund does to a non-consumable or a subscription.
    /// - Throws: ``IAPError`` when the catalog cannot be read or lists an invalid product.
    public init(
        snapshotOf catalog: some ProductCatalog,
        refundPolicy: ConsumableRefundPolicy = .allowNegativeBalance,
        proratedRefunds: ProratedRefundPolicy = .keepAccess
    ) async throws {
        self.init(catalog: try await catalog.snapshot(), refundPolicy: refundPolicy, proratedRefunds: proratedRefunds)
    }

    /// Works out one user's entitlements at an instant.
    ///
    /// - Parameters:
    ///   - entries: The user's ledger entries, in any order.
    ///   - renewalInfos: The renewal infos of the user's subscriptions, in any order; several per subscription
    ///     are fine (the latest signed one is used; on a tie, the last given).
    ///   - usage: The units of consumables the user spent, from the integrator's records; none by default.
    ///   - instant: Now, as the caller's clock says.
    /// - Returns: The snapshot.
    public func evaluate(
        entries: [LedgerEntry],
        renewalInfos: [RenewalInfoPayload],
        usage: [ConsumableUsage] = [],
        at instant: Date
    ) -> EntitlementSnapshot {
        var unknown = Set<String>()
        var purchasesByKind: [ProductKind: [Purchase]] = [:]
        for entry in Self.deduplicated(entries) {
            guard let product = catalog[productId: entry.productId] else {
                unknown.insert(entry.productId)
                continue
            }
            var purchase = Purchase(entry: entry, product: product)
            // A prorated refund's access as decided when it was processed; the policy decides only refunds recorded
            // before decisions were kept.
            purchase.accessKept =
                product.kind != .consumable && entry.transaction.isPartlyRefunded
                && (entry.refundAccessKept ?? (proratedRefunds == .keepAccess))
            purchasesByKind[product.kind, default: []].append(purchase)
        }
        var consumableUsage: [ConsumableUsage] = []
        for use in usage {
            guard let product = catalog[productId: use.productId] else {
                unknown.insert(use.productId)
                continue
            }
            if product.kind == .consumable {
                consumableUsage.append(use)
            }
        }

        var entitlements: [ProductEntitlement] = []
        entitlements += nonConsumableEntitlements(purchasesByKind[.nonConsumable] ?? [])
        entitlements += subscriptionEntitlements(
            purchasesByKind[.autoRenewable] ?? [],
            renewalInfos: renewalInfos,
            at: instant
        )
        entitlements += nonRenewingEntitlements(purchasesByKind[.nonRenewing] ?? [], at: instant)
        entitlements.sort { ($0.productId, $0.transactionId) < ($1.productId, $1.transactionId) }

        var entitlementIds = Set<String>()
        for entitlement in entitlements where entitlement.hasAccess {
            entitlementIds.formUnion(catalog[productId: entitlement.productId]?.entitlements ?? [])
        }

        return EntitlementSnapshot(
            instant: instant,
            entitlements: entitlements,
            balances: balances(purchasesByKind[.consumable] ?? [], usage: consumableUsage),
            entitlementIds: entitlementIds,
            unknownProductIds: unknown.sorted()
        )
    }

    /// Keeps one entry per transaction id: the one with the highest revision (the later one on a tie).
    private static func deduplicated(_ entries: [LedgerEntry]) -> [LedgerEntry] {
        var kept: [String: LedgerEntry] = [:]
        var order: [String] = []
        for entry in entries {
            if let existing = kept[entry.transactionId] {
                if entry.revision >= existing.revision {
                    kept[entry.transactionId] = entry
                }
            } else {
                kept[entry.transactionId] = entry
                order.append(entry.transactionId)
            }
        }
        return order.compactMap { kept[$0] }
    }
}

extension EntitlementEngine {
    /// A ledger entry with its catalog product and the dates the rules use.
    struct Purchase {
        var entry: LedgerEntry
        var product: CatalogProduct
        /// A prorated refund that the ``ProratedRefundPolicy`` lets keep its access.
        var accessKept = false

        var transaction: TransactionPayload { entry.transaction }

        /// When the purchase (or renewal) happened: the transaction's purchase date, else when it was recorded.
        var purchaseDate: Date { entry.transaction.purchaseDate ?? entry.recordedAt }

        /// When it was revoked, or `nil`.
        var revocationDate: Date? { entry.revokedAt ?? entry.transaction.revocationDate }

        /// Whether the purchase lost its access to a revocation (a prorated refund that keeps its access did not).
        var isRevoked: Bool { revocationDate != nil && (!accessKept || entry.consentRescindedAt != nil) }

        var isFamilyShared: Bool { entry.transaction.inAppOwnershipType == .familyShared }

        /// Chronological order: purchase date, then transaction id (shorter numeric ids first).
        static func chronological(_ lhs: Purchase, _ rhs: Purchase) -> Bool {
            if lhs.purchaseDate != rhs.purchaseDate {
                return lhs.purchaseDate < rhs.purchaseDate
            }
            let left = lhs.entry.transactionId
            let right = rhs.entry.transactionId
            return (left.count, left) < (right.count, right)
        }
    }

    private func nonConsumableEntitlements(_ purchases: [Purchase]) -> [ProductEntitlement] {
        Dictionary(grouping: purchases, by: \.product.productId).values.compactMap { group in
            let sorted = group.sorted(by: Purchase.chronological)
            let owned = sorted.filter { !$0.isRevoked }
            // The user's own purchase first, then the earliest.
            if let chosen = owned.first(where: { !$0.isFamilyShared }) ?? owned.first {
                return entitlement(for: chosen, state: .active, expiresDate: nil)
            }
            guard let latest = sorted.last else { return nil }
            return entitlement(for: latest, state: .revoked, expiresDate: nil)
        }
    }

    /// An entitlement that stands on one purchase.
    func entitlement(
        for purchase: Purchase,
        state: EntitlementState,
        expiresDate: Date?,
        autoRenewProductId: String? = nil
    ) -> ProductEntitlement {
        ProductEntitlement(
            productId: purchase.product.productId,
            kind: purchase.product.kind,
            state: state,
            hasAccess: state.grantsAccess,
            expiresDate: expiresDate,
            originalTransactionId: purchase.entry.originalTransactionId,
            transactionId: purchase.entry.transactionId,
            subscriptionGroupId: purchase.product.kind == .autoRenewable ? purchase.product.subscriptionGroupId : nil,
            autoRenewProductId: autoRenewProductId,
            isFamilyShared: purchase.isFamilyShared
        )
    }
}
