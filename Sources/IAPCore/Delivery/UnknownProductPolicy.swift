/// What a ``DeliveryPipeline`` does with a purchase of a product its catalog does not know.
public enum UnknownProductPolicy: Sendable, Hashable {
    /// The default: the purchase is recorded and parked (``DeliveryState/unknownProduct``), reported as the event
    /// `delivery.unknownProduct`, and granted once the catalog names the product
    /// (``DeliveryPipeline/releaseParked(limit:)``). Nothing is ever granted by guess.
    case park
    /// For a ledger that is its own entitlement source and has no catalog at all (`iap serve --ledger-only` without
    /// `--catalog`): the product's kind is taken from the signed transaction's `type` (a consumable counts its
    /// `quantity`, one unit each; a non-consumable or subscription unlocks its own product id). A transaction whose
    /// `type` is missing or unknown is parked as with ``park``.
    case signedType

    /// The product a signed transaction describes, under ``signedType``.
    ///
    /// - Parameter transaction: The verified transaction.
    /// - Returns: The product, or `nil` when the transaction names no product or no known type.
    public static func product(describedBy transaction: TransactionPayload) -> CatalogProduct? {
        guard let productId = transaction.productId, !productId.isEmpty, let type = transaction.type else {
            return nil
        }
        let kind: ProductKind
        switch type {
        case .consumable: kind = .consumable
        case .nonConsumable: kind = .nonConsumable
        case .autoRenewableSubscription: kind = .autoRenewable
        case .nonRenewingSubscription: kind = .nonRenewing
        default: return nil
        }
        return CatalogProduct(
            productId: productId,
            kind: kind,
            subscriptionGroupId: kind == .autoRenewable ? transaction.subscriptionGroupIdentifier ?? productId : nil,
            entitlements: kind == .consumable ? [] : [productId]
        )
    }
}
