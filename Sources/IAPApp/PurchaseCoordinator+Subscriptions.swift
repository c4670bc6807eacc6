import IAPCore

extension PurchaseCoordinator {
    // MARK: - Subscriptions

    /// The status of each subscription of a group the account has or had, read for display: renewal state, auto
    /// renew, grace period, billing retry, price increase consent, eligible win-back offers.
    ///
    /// More than one with Family Sharing (one bought, one shared); the customer is entitled when any
    /// ``AppSubscriptionStatus/isEntitled``. Statuses whose signed data cannot be read are left out and reported
    /// as ``PurchaseEvent/unreadable(_:)``.
    ///
    /// - Parameter groupId: The subscription group (``StoreProduct/subscriptionGroupId``).
    /// - Returns: The statuses, entitled ones first; empty when the account never subscribed in the group.
    /// - Throws: ``IAPError`` from the store.
    public func subscriptionStatuses(groupId: String) async throws -> [AppSubscriptionStatus] {
        guard !groupId.isEmpty else {
            throw IAPError(.invalidArgument, "the subscription group id is empty")
        }
        var statuses: [AppSubscriptionStatus] = []
        for status in try await store.subscriptionStatuses(groupId: groupId) {
            do {
                statuses.append(try AppSubscriptionStatus(status))
            } catch {
                emit(.unreadable(IAPError.wrapping(error, as: .malformedSignedData, "a subscription status")))
            }
        }
        return statuses.enumerated().sorted { lhs, rhs in
            if lhs.element.isEntitled != rhs.element.isEntitled {
                return lhs.element.isEntitled
            }
            return lhs.offset < rhs.offset
        }.map(\.element)
    }

    /// The account's most recent transaction of a product (StoreKit's `Transaction.latest(for:)`), read for
    /// display and merged into the order history.
    ///
    /// - Parameter productId: The product.
    /// - Returns: The transaction as a history item (with what the server confirmed of it), or `nil` when the account
    ///   never bought the product.
    /// - Throws: ``IAPError`` from the store, or `.malformedSignedData` when the transaction cannot be read.
    public func latestTransaction(for productId: String) async throws -> PurchaseHistoryItem? {
        await loadIfNeeded()
        guard let signed = try await store.latestTransaction(for: productId) else { return nil }
        let transaction = try UnverifiedTransaction(signedTransaction: signed)
        mergeIntoHistory(transaction)
        try? await persist()
        return outbox.history[transaction.transactionId]
    }

    /// What the account is entitled to now according to the device's store (StoreKit's
    /// `Transaction.currentEntitlements`), read for display and merged into the order history. The server's
    /// ledger decides what is granted; ``restore()`` submits what it has not seen.
    ///
    /// - Returns: The latest transaction of each entitled product, as history items.
    /// - Throws: ``IAPError`` from the store.
    public func currentEntitlements() async throws -> [PurchaseHistoryItem] {
        await loadIfNeeded()
        var items: [PurchaseHistoryItem] = []
        for signed in try await store.currentEntitlements() {
            guard let transaction = try? UnverifiedTransaction(signedTransaction: signed) else {
                emit(.unreadable(IAPError(.malformedSignedData, "an entitlement is unreadable")))
                continue
            }
            mergeIntoHistory(transaction)
            if let item = outbox.history[transaction.transactionId] {
                items.append(item)
            }
        }
        try? await persist()
        return items
    }

    /// Shows the App Store's manage-subscriptions sheet (iOS, iPadOS, Mac Catalyst, visionOS), then sweeps, as a
    /// change made there (an upgrade, a resubscription) arrives as a transaction.
    ///
    /// - Parameter groupId: Only this subscription group (iOS 17 and later), or `nil` for every subscription.
    /// - Throws: ``IAPError`` from the store: `unsupportedOperation` on a platform without the sheet.
    public func showManageSubscriptions(groupId: String? = nil) async throws {
        try await store.showManageSubscriptions(groupId: groupId)
        _ = try? await sweep()
    }

    /// Shows the App Store's offer code redemption sheet (iOS 16, iPadOS, Mac Catalyst, visionOS; macOS 15), then
    /// sweeps: a redeemed code arrives as a transaction and is delivered like a purchase.
    ///
    /// - Throws: ``IAPError`` from the store: `unsupportedOperation` on a platform without the sheet.
    public func presentOfferCodeRedemption() async throws {
        try await store.presentOfferCodeRedemption()
        _ = try? await sweep()
    }

    // MARK: - App transaction

    /// The App Store's record of the app's download: `appTransactionId`, original app version, environment.
    ///
    /// - Parameter refresh: Whether to fetch it again from the App Store, which asks the customer to sign in: only in
    ///   answer to the customer's action, such as a "Restore" button.
    /// - Returns: The app transaction, read without verifying it (its signed form is in
    ///   ``AppTransactionInfo/signedAppTransaction`` for the server).
    /// - Throws: ``IAPError`` from the store, or `.malformedSignedData`.
    public func appTransaction(refresh: Bool = false) async throws -> AppTransactionInfo {
        let signed = try await store.appTransaction(refresh: refresh)
        let info = try AppTransactionInfo(signedAppTransaction: signed)
        signedAppTransaction = signed
        return info
    }

    /// The signed app transaction to send with a submission, read once; `nil` when the store cannot give it (the
    /// submission goes without it).
    func appTransactionForSubmission() async -> String? {
        if let signedAppTransaction {
            return signedAppTransaction
        }
        guard let signed = try? await store.appTransaction(refresh: false),
            (try? AppTransactionInfo(signedAppTransaction: signed)) != nil
        else { return nil }
        signedAppTransaction = signed
        return signed
    }
}
