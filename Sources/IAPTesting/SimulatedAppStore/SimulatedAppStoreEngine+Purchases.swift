#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension SimulatedAppStoreEngine {
    /// Starts a purchase: fails it if a failure was injected or the request is invalid, parks it for Ask to Buy,
    /// or completes it.
    mutating func purchase(
        productId: String,
        account: String,
        appAccountToken: String?,
        quantity: Int,
        askToBuy: Bool,
        offer: SimulatedSubscriptionOffer? = nil,
        introductoryEligibility: Bool? = nil
    ) throws -> SimulatedPurchaseResult {
        if !purchaseFailures.isEmpty {
            return .failed(purchaseFailures.removeFirst())
        }
        guard let product = products[productId] else {
            return .failed(IAPError(.unknownProduct, "the store does not sell '\(productId)'"))
        }
        let allowed = product.kind == .consumable ? 1...Self.maximumQuantity : 1...1
        guard allowed.contains(quantity) else {
            return .failed(
                IAPError(
                    .invalidArgument,
                    "a purchase of \(productId) must have a quantity in \(allowed.lowerBound)...\(allowed.upperBound)"
                )
            )
        }
        if offer != nil || introductoryEligibility != nil, product.kind != .autoRenewable {
            return .failed(IAPError(.offerInvalid, "offers apply to auto-renewable subscriptions, not to \(productId)"))
        }
        ensureAccount(account)
        if askToBuy {
            askToBuyCount += 1
            let id = "ask-to-buy-\(askToBuyCount)"
            askToBuyRequests[id] = SimulatedAskToBuyRequest(
                productId: productId,
                account: account,
                appAccountToken: appAccountToken,
                quantity: quantity,
                offer: offer,
                introductoryEligibility: introductoryEligibility
            )
            return .pending(askToBuyRequestId: id)
        }
        return try completePurchase(
            product,
            account: account,
            appAccountToken: appAccountToken,
            quantity: quantity,
            offer: offer,
            introductoryEligibility: introductoryEligibility
        )
    }

    /// Completes a parked Ask to Buy purchase.
    mutating func approveAskToBuy(_ id: String) throws -> SimulatedPurchaseResult {
        guard let request = askToBuyRequests.removeValue(forKey: id) else {
            throw IAPError(.notFound, "no pending Ask to Buy request \(id)")
        }
        guard let product = products[request.productId] else {
            return .failed(IAPError(.unknownProduct, "the store does not sell '\(request.productId)'"))
        }
        return try completePurchase(
            product,
            account: request.account,
            appAccountToken: request.appAccountToken,
            quantity: request.quantity,
            offer: request.offer,
            introductoryEligibility: request.introductoryEligibility
        )
    }

    /// Drops a parked Ask to Buy purchase.
    mutating func declineAskToBuy(_ id: String) throws {
        guard askToBuyRequests.removeValue(forKey: id) != nil else {
            throw IAPError(.notFound, "no pending Ask to Buy request \(id)")
        }
    }

    private mutating func completePurchase(
        _ product: CatalogProduct,
        account: String,
        appAccountToken: String?,
        quantity: Int,
        offer: SimulatedSubscriptionOffer?,
        introductoryEligibility: Bool?
    ) throws -> SimulatedPurchaseResult {
        switch product.kind {
        case .autoRenewable:
            return try subscribe(
                product,
                account: account,
                appAccountToken: appAccountToken,
                offer: offer,
                introductoryEligibility: introductoryEligibility
            )
        case .nonConsumable:
            let owned = transactionIdsByAccount[account, default: []].compactMap { transactions[$0] }
                .first { record in
                    record.payload.productId == product.productId && record.payload.revocationDate == nil
                        && record.sharedFrom == nil
                }
            if let owned {
                // Like StoreKit: buying what the customer owns restores it, without a new charge.
                return .purchased(try signed(owned))
            }
        case .consumable, .nonRenewing:
            break
        }
        var payload = basePayload(productId: product.productId, account: account, purchaseDate: now)
        payload.quantity = Int32(quantity)
        payload.appAccountToken = appAccountToken
        let record = insert(payload, account: account, orderId: makeOrderId())
        try notify(.oneTimeCharge, transaction: record)
        if isFamilyShareable(product.productId) {
            for member in familyMembers(of: account) {
                try shareOneTimePurchase(record, with: member)
            }
        }
        return .purchased(try signed(record))
    }

    /// Makes the family-shared copy of a purchaser's non-consumable for a family member.
    mutating func shareOneTimePurchase(_ record: SimulatedTransactionRecord, with member: String) throws {
        // A member who already has the product, bought or through this purchase, gets no other copy.
        let alreadyHas = transactionIdsByAccount[member, default: []].contains { id in
            guard let other = transactions[id], other.payload.revocationDate == nil else { return false }
            return other.sharedFrom == record.id
                || (other.sharedFrom == nil && other.payload.productId == record.payload.productId)
        }
        guard !alreadyHas else { return }
        var payload = basePayload(productId: record.payload.productId ?? "", account: member, purchaseDate: now)
        payload.inAppOwnershipType = .familyShared
        let copy = insert(payload, account: member, orderId: nil, sharedFrom: record.id)
        try notify(.oneTimeCharge, transaction: copy)
    }
}
