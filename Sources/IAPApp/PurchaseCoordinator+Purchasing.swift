#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
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
    /// - Returns: `.delivered`; `.pending` for Ask to Buy, a delivery the server has not confirmed yet, or one that
    ///   waits for a sign-in (the purchase is safe in the outbox); `.cancelled`; or `.failed` with an error whose
    ///   ``PurchaseResult/failureKind`` says what to tell the customer.
    public func purchase(
        productId: String,
        for user: String,
        orderId: String? = nil,
        quantity: Int = 1
    ) async -> PurchaseResult {
        await purchase(productId: productId, for: user, orderId: orderId, options: PurchaseOptions(quantity: quantity))
    }

    /// Buys a product for a user with purchase options (offers, the server's introductory offer eligibility, an
    /// appAccountToken the server signed an offer for) and delivers it through the server.
    ///
    /// ```swift
    /// let token = await coordinator.appAccountToken(for: user)
    /// let signature = try await myServer.signOffer("plus.monthly", offer: "comeback", token: token)
    /// let result = await coordinator.purchase(
    ///     productId: "plus.monthly",
    ///     for: user,
    ///     options: PurchaseOptions(appAccountToken: token, offer: .promotional(signature))
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - productId: The product to buy.
    ///   - user: The business user the purchase is for.
    ///   - orderId: The business order id, if the purchase is for one.
    ///   - options: Quantity, appAccountToken and offers.
    /// - Returns: As ``purchase(productId:for:orderId:quantity:)``; `.failed` with `invalidArgument` for options
    ///   the coordinator refuses before asking the store (an appAccountToken of another user, a signature that is
    ///   not base64), `offerInvalid` or `offerIneligible` when the App Store refuses the offer.
    public func purchase(
        productId: String,
        for user: String,
        orderId: String? = nil,
        options: PurchaseOptions
    ) async -> PurchaseResult {
        let tokenUUID: UUID
        switch await purchaseToken(productId: productId, for: user, options: options) {
        case .failure(let problem): return .failed(problem)
        case .success(let token): tokenUUID = token
        }
        let token = tokenUUID.uuidString.lowercased()
        let intent = PurchaseIntent(
            productId: productId,
            userId: user,
            orderId: orderId,
            appAccountToken: token,
            createdAt: clock.now,
            quantity: options.quantity
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
            storeResult = try await store.purchase(
                productId: productId,
                options: StorePurchaseOptions(
                    appAccountToken: tokenUUID,
                    quantity: options.quantity,
                    offer: options.offer,
                    introductoryOfferEligibility: options.introductoryOfferEligibility
                )
            )
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
            markAwaitingApproval(intent)
            try? await persist()
            return .pending(.awaitingApproval)
        case .success(let signedTransaction):
            return await deliverPurchased(signedTransaction, intent: intent, for: user, orderId: orderId)
        }
    }

    /// Checks a purchase before it starts (the user, the quantity, the options, the product) and returns the
    /// appAccountToken it goes with: the one the options name, if this user was given it, or a new one.
    private func purchaseToken(
        productId: String,
        for user: String,
        options: PurchaseOptions
    ) async -> Result<UUID, IAPError> {
        guard !user.isEmpty else {
            return .failure(IAPError(.invalidArgument, "the user id is empty"))
        }
        guard options.quantity >= 1 else {
            return .failure(IAPError(.invalidArgument, "the quantity \(options.quantity) is not positive"))
        }
        if let problem = Self.problem(with: options) {
            return .failure(problem)
        }
        await loadIfNeeded()
        do {
            _ = try await product(id: productId)
        } catch {
            return .failure(IAPError.wrapping(error, as: .internalError, "the purchase could not start"))
        }
        guard let requested = options.appAccountToken else {
            return .success(newToken(for: user))
        }
        guard isToken(requested, of: user) else {
            return .failure(
                IAPError(
                    .invalidArgument,
                    "the appAccountToken \(requested.uuidString.lowercased()) was not issued to this user by "
                        + "appAccountToken(for:)"
                )
            )
        }
        return .success(requested)
    }

    /// After the store sold a product: puts its transaction in the outbox in place of the intent, delivers it
    /// through the server, and answers what the delivery got to.
    private func deliverPurchased(
        _ signedTransaction: String,
        intent: PurchaseIntent,
        for user: String,
        orderId: String?
    ) async -> PurchaseResult {
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
        case .waiting(let error) where error?.code == .authenticationRequired:
            result = .pending(.authenticationRequired(transactionId: transaction.transactionId))
        case .waiting, .busy:
            result = .pending(.awaitingDelivery(transactionId: transaction.transactionId))
        case .rejected(let error):
            result = .failed(error)
        }
        if case .delivered = attempt {
            // The server just answered, so the backoff has no reason left: send what waits in the outbox,
            // without holding up this purchase.
            Task { [weak self] in _ = await self?.drainOutbox(force: true) }
        }
        return result
    }

    /// The appAccountToken for a user's next purchase, to have the server sign a promotional offer for it (the
    /// version 1 signature signs the token) before passing both in ``PurchaseOptions``.
    ///
    /// With ``Configuration/appAccountTokenNamespace`` it is the user's derived token, always the same; otherwise
    /// a new random token, remembered as the user's.
    ///
    /// - Parameter user: The business user.
    /// - Returns: The token, to pass as ``PurchaseOptions/appAccountToken``.
    public func appAccountToken(for user: String) async -> UUID {
        await loadIfNeeded()
        let token = newToken(for: user)
        if configuration.appAccountTokenNamespace == nil {
            outbox.tokenOwners[token.uuidString.lowercased()] = user
            changed()
            try? await persist()
        }
        return token
    }

    /// A token for a user's purchase: derived, or random.
    func newToken(for user: String) -> UUID {
        configuration.appAccountTokenNamespace.map { AppAccountToken.derive(from: user, namespace: $0) } ?? UUID()
    }

    /// Whether a token passed in the options belongs to the user: derived from the user's id, or issued to them.
    func isToken(_ token: UUID, of user: String) -> Bool {
        if let namespace = configuration.appAccountTokenNamespace {
            return AppAccountToken.derive(from: user, namespace: namespace) == token
        }
        return outbox.tokenOwners[token.uuidString.lowercased()] == user
    }

    /// What is wrong with purchase options before the store sees them, if anything.
    static func problem(with options: PurchaseOptions) -> IAPError? {
        switch options.offer {
        case .promotional(let signature)?:
            if signature.offerId.isEmpty || signature.keyId.isEmpty {
                return IAPError(.invalidArgument, "the promotional offer has an empty offer id or key id")
            }
            if signature.signatureData?.isEmpty ?? true {
                return IAPError(.invalidArgument, "the promotional offer's signature is not standard base64")
            }
        case .promotionalJWS(let offerId, let compactJWS)?:
            if offerId.isEmpty || compactJWS.split(separator: ".", omittingEmptySubsequences: false).count != 3 {
                return IAPError(.invalidArgument, "the promotional offer needs an offer id and a compact JWS")
            }
        case .winBack(let offerId)?:
            if offerId.isEmpty {
                return IAPError(.invalidArgument, "the win-back offer id is empty")
            }
        case nil:
            break
        }
        if let jws = options.introductoryOfferEligibility,
            jws.split(separator: ".", omittingEmptySubsequences: false).count != 3
        {
            return IAPError(.invalidArgument, "the introductory offer eligibility is not a compact JWS")
        }
        return nil
    }

    func removeIntent(_ intent: PurchaseIntent) {
        if let index = outbox.intents.firstIndex(of: intent) {
            outbox.intents.remove(at: index)
            changed()
        }
    }

    /// Marks a purchase as waiting for a parent's approval: a pending row of the history until its transaction
    /// arrives.
    func markAwaitingApproval(_ intent: PurchaseIntent) {
        guard let index = outbox.intents.firstIndex(of: intent) else { return }
        outbox.intents[index].awaitingApprovalSince = clock.now
        changed()
    }
}

extension PurchaseCoordinator {
    /// Whether this customer may make payments on this device (StoreKit's `AppStore.canMakePayments`): a paywall
    /// shows its buy buttons only then, and otherwise says that purchases are turned off on this device.
    public func canMakePayments() async -> Bool {
        await store.canMakePayments()
    }

    /// The purchases customers start on the App Store (a promoted in-app purchase, a win-back offer redeemed outside
    /// the app when Streamlined Purchasing is off), as they come: StoreKit's `PurchaseIntent.intents`. Iterate it
    /// from launch, and complete each with ``purchase(_:for:)`` once a user is signed in (later, if a purchase would
    /// interrupt what the customer is doing).
    ///
    /// ```swift
    /// Task {
    ///     for await intent in coordinator.appStorePurchaseIntents() {
    ///         _ = await coordinator.purchase(intent, for: signedInUser)
    ///     }
    /// }
    /// ```
    public nonisolated func appStorePurchaseIntents() -> AsyncStream<AppStorePurchaseIntent> {
        store.purchaseIntents()
    }

    /// Completes a purchase the customer started on the App Store, with its offer, through the outbox and the server
    /// as any purchase: ``purchase(productId:for:orderId:options:)``.
    ///
    /// - Parameters:
    ///   - intent: The App Store's purchase intent.
    ///   - user: The business user the purchase is for.
    /// - Returns: As ``purchase(productId:for:orderId:options:)``.
    public func purchase(_ intent: AppStorePurchaseIntent, for user: String) async -> PurchaseResult {
        var options = PurchaseOptions()
        if let offerId = intent.offerId {
            options.offer = .winBack(offerId: offerId)
        }
        return await purchase(productId: intent.productId, for: user, options: options)
    }
}
