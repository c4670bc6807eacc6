#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension PurchaseCoordinator {
    // MARK: - Products

    /// Loads products, from the cache while it is fresh.
    ///
    /// - Parameter productIds: The ids to load, in display order.
    /// - Returns: The products found, in the order asked for, and the ids the store did not return with what it
    ///   takes to fix them.
    /// - Throws: ``IAPError`` when the store cannot be asked (`transportFailure`, retryable).
    public func products(_ productIds: [String]) async throws -> ProductLookup {
        let now = clock.now
        let lifetime = configuration.productCacheLifetime.timeInterval
        let stale = Set(
            productIds.filter { id in
                guard let cached = productCache[id] else { return true }
                return now >= cached.loadedAt.addingTimeInterval(lifetime)
            }
        )
        if !stale.isEmpty {
            let loaded = try await store.products(for: stale)
            let loadedAt = clock.now
            for product in loaded where stale.contains(product.id) {
                productCache[product.id] = (product, loadedAt)
            }
            for id in stale where !loaded.contains(where: { $0.id == id }) {
                productCache[id] = nil
            }
        }
        var products: [StoreProduct] = []
        var missing: [ProductLookup.MissingProduct] = []
        var seen: Set<String> = []
        for id in productIds where seen.insert(id).inserted {
            if let cached = productCache[id] {
                products.append(cached.product)
            } else {
                missing.append(
                    ProductLookup.MissingProduct(
                        productId: id,
                        bundleId: configuration.bundleId,
                        environment: configuration.environment,
                        appVersion: configuration.appVersion
                    )
                )
            }
        }
        return ProductLookup(products: products, missing: missing)
    }

    /// Loads one product, from the cache while it is fresh.
    ///
    /// - Parameter productId: The product id.
    /// - Returns: The product.
    /// - Throws: ``IAPError`` `.unknownProduct` with the bundle id, environment and app version when the store
    ///   does not know it; the store's error when it cannot be asked.
    public func product(id productId: String) async throws -> StoreProduct {
        let lookup = try await products([productId])
        if let missing = lookup.missing.first {
            throw missing.error
        }
        guard let product = lookup.products.first else {
            throw IAPError(.unknownProduct, "the App Store returned no product '\(productId)'")
        }
        return product
    }

    // MARK: - Purchasing

    /// Buys a product for a user and delivers it through the server.
    ///
    /// The purchase's context is saved before the store is asked, and the signed transaction before the server
    /// is asked; the store's transaction is finished only after the server confirmed delivery. If the app is
    /// killed anywhere on the way, the next ``start(signedInUser:)`` delivers the purchase, once, to the same user
    /// and order.
    ///
    /// - Parameters:
    ///   - productId: The product to buy.
    ///   - user: The business user the purchase is for.
    ///   - orderId: The business order id, if the purchase is for one; it reaches the fulfillment hook.
    ///   - quantity: How many (consumables only).
    /// - Returns: `.delivered`; `.pending` for Ask to Buy or a delivery the server has not confirmed yet (the
    ///   purchase is safe in the outbox); `.cancelled`; or `.failed` with an error whose
    ///   ``PurchaseResult/failureKind`` says what to tell the customer.
    public func purchase(
        productId: String,
        for user: String,
        orderId: String? = nil,
        quantity: Int = 1
    ) async -> PurchaseResult {
        guard !user.isEmpty else {
            return .failed(IAPError(.invalidArgument, "the user id is empty"))
        }
        guard quantity >= 1 else {
            return .failed(IAPError(.invalidArgument, "the quantity \(quantity) is not positive"))
        }
        do {
            try await loadIfNeeded()
            _ = try await product(id: productId)
        } catch {
            return .failed(IAPError.wrapping(error, as: .internalError, "the purchase could not start"))
        }
        let tokenUUID =
            configuration.appAccountTokenNamespace.map {
                AppAccountToken.derive(from: user, namespace: $0)
            } ?? UUID()
        let token = tokenUUID.uuidString.lowercased()
        let intent = PurchaseIntent(
            productId: productId,
            userId: user,
            orderId: orderId,
            appAccountToken: token,
            createdAt: clock.now
        )
        outbox.intents.append(intent)
        outbox.tokenOwners[token] = user
        changed()
        do {
            try await persist()
        } catch {
            // Without its context saved, the purchase is not started.
            removeIntent(intent)
            return .failed(IAPError.wrapping(error, as: .storageFailure, "the purchase could not be saved"))
        }
        let storeResult: StorePurchaseResult
        do {
            storeResult = try await store.purchase(productId: productId, appAccountToken: tokenUUID, quantity: quantity)
        } catch {
            removeIntent(intent)
            try? await persist()
            let failure = IAPError.wrapping(error, as: .internalError, "the store's purchase failed")
            return failure.code == .userCancelled ? .cancelled : .failed(failure)
        }
        switch storeResult {
        case .userCancelled:
            removeIntent(intent)
            try? await persist()
            return .cancelled
        case .pending:
            return .pending(.awaitingApproval)
        case .success(let signedTransaction):
            let transaction: UnverifiedTransaction
            do {
                transaction = try UnverifiedTransaction(signedTransaction: signedTransaction)
            } catch {
                removeIntent(intent)
                try? await persist()
                return .failed(
                    IAPError.wrapping(error, as: .malformedSignedData, "the store's transaction is unreadable")
                )
            }
            removeIntent(intent)
            enqueue(transaction, userId: user, orderId: orderId)
            // Saved if the disk allows; otherwise the intent on disk and the unfinished transaction recover it.
            try? await persist()
            let attempt = await deliver(transaction.transactionId)
            let result: PurchaseResult
            switch attempt {
            case .delivered(let item):
                result = .delivered(item)
            case .revoked:
                result = .failed(
                    IAPError(.purchaseRevoked, "the App Store revoked transaction \(transaction.transactionId)")
                )
            case .waiting, .busy:
                result = .pending(.awaitingDelivery(transactionId: transaction.transactionId))
            case .rejected(let error):
                result = .failed(error)
            }
            if case .delivered = attempt {
                // The server just answered, so the backoff has no reason left: send what waits in the outbox,
                // without holding up this purchase.
                Task { [weak self] in _ = try? await self?.drainOutbox(force: true) }
            }
            return result
        }
    }

    func removeIntent(_ intent: PurchaseIntent) {
        if let index = outbox.intents.firstIndex(of: intent) {
            outbox.intents.remove(at: index)
            changed()
        }
    }
}
