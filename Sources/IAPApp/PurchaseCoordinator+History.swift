#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension PurchaseCoordinator {
    // MARK: - Restore

    /// Restores purchases: syncs with the App Store, then submits each current entitlement the server has not
    /// confirmed to this device (a new device, a reinstall), so the server delivers what is missing.
    ///
    /// - Returns: The current entitlements and what was submitted.
    /// - Throws: ``IAPError`` from the store's sync (`transportFailure` when offline, `userCancelled`).
    public func restore() async throws -> RestoreReport {
        await loadIfNeeded()
        try await store.sync()
        let signed = try await store.currentEntitlements()
        var report = RestoreReport(entitlements: [], submitted: [], failures: [:])
        var transactions: [UnverifiedTransaction] = []
        for jws in signed {
            do {
                transactions.append(try UnverifiedTransaction(signedTransaction: jws))
            } catch {
                emit(.unreadable(IAPError.wrapping(error, as: .malformedSignedData, "an entitlement is unreadable")))
            }
        }
        for transaction in transactions {
            let id = transaction.transactionId
            mergeIntoHistory(transaction)
            let delivery = outbox.history[id]?.delivery
            if delivery != .delivered && delivery != .revoked {
                enqueue(transaction, userId: nil, orderId: nil)
                report.submitted.append(id)
            }
        }
        try? await persist()
        for id in report.submitted {
            switch await deliver(id) {
            case .delivered, .revoked, .busy: break
            case .waiting(let error):
                report.failures[id] = error ?? IAPError(.deliveryRejected, "not settled", isRetryable: true)
            case .rejected(let error): report.failures[id] = error
            }
        }
        report.entitlements = transactions.compactMap { outbox.history[$0.transactionId] }
        return report
    }

    // MARK: - Refunds

    /// Shows the App Store's refund sheet for a purchase, and marks it "refund requested" once the request is
    /// sent, until the revocation arrives through the updates.
    ///
    /// - Parameter transactionId: The transaction.
    /// - Returns: Whether the request was sent.
    /// - Throws: ``IAPError`` from the store (``PurchaseFailureKind/classify(_:)`` says what to tell the customer:
    ///   `refundAlreadyRequested` is ``PurchaseFailureKind/alreadyRequested``, `refundRequestFailed` and
    ///   `transportFailure` are ``PurchaseFailureKind/retryable``, `unsupportedOperation` is
    ///   ``PurchaseFailureKind/configuration``), or when the mark cannot be saved.
    public func requestRefund(transactionId: String) async throws -> RefundRequestStatus {
        await loadIfNeeded()
        let status = try await store.requestRefund(transactionId: transactionId)
        // The revocation may have arrived while the sheet was open: nothing is left to wait for then.
        if status == .success, outbox.history[transactionId]?.isRevoked != true {
            let now = clock.now
            outbox.refundRequests[transactionId] = now
            outbox.history[transactionId]?.refundRequestedAt = now
            changed()
            try await persist()
        }
        return status
    }

    /// Whether a refund was requested from this app and no revocation has arrived yet.
    ///
    /// - Parameter transactionId: The transaction.
    /// - Returns: `true` while the refund request is open.
    public func isRefundRequested(transactionId: String) async -> Bool {
        await loadIfNeeded()
        return outbox.refundRequests[transactionId] != nil
    }

    // MARK: - Order history

    /// One page of the order history, newest first, from the local cache.
    ///
    /// The first call fills the cache from the store's full list (``StoreClient/allTransactions()``); after that,
    /// every purchase and update keeps it current, and ``refreshHistory()`` merges the store's list again. The cache
    /// belongs to the device's Apple Account (its app transaction's `appTransactionId`): after the customer signs in to
    /// another account it is filled from that account's purchases, and a row another account made
    /// (``PurchaseHistoryItem/appTransactionId``) never shows; a row without one (older systems) shows to every account. Finished
    /// consumables, which the store's list leaves out, stay in the cache. The first page also lists the purchases
    /// waiting for a parent's approval (``PurchaseHistoryPage/pendingApprovals``), one per product and user.
    ///
    /// - Parameters:
    ///   - user: Only this business user's purchases; `nil` for every purchase of the device's account.
    ///   - cursor: The ``PurchaseHistoryPage/nextCursor`` of the previous page, or `nil` for the first.
    ///   - limit: The most items on the page (1...200).
    /// - Returns: The page.
    /// - Throws: ``IAPError`` `.invalidArgument` for a bad cursor or limit; the store's error when the cache must
    ///   be filled and the store cannot be asked.
    public func history(for user: String? = nil, after cursor: String? = nil, limit: Int = 20) async throws
        -> PurchaseHistoryPage
    {
        guard (1...200).contains(limit) else {
            throw IAPError(.invalidArgument, "the page limit \(limit) is outside 1...200")
        }
        var position: (Int64, String)?
        if let cursor {
            let parts = cursor.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let millis = Int64(parts[0]), !parts[1].isEmpty else {
                throw IAPError(.invalidArgument, "the history cursor '\(cursor)' is not one this coordinator made")
            }
            position = (millis, String(parts[1]))
        }
        await loadIfNeeded()
        // The rows are the device's Apple Account's: after the customer switched accounts the cache is filled from
        // the new account's purchases, and another account's rows never show (they stay cached for a switch back).
        let account = await currentAppleAccount()
        if let account, outbox.historyAccount != account {
            outbox.historyLoaded = false
        }
        if !outbox.historyLoaded {
            try await refreshHistory()
        }
        let ordered = outbox.history.values
            .filter { user == nil || $0.userId == user }
            .filter { account == nil || $0.appTransactionId == nil || $0.appTransactionId == account }
            .map { (key: Self.sortKey($0), item: $0) }
            .sorted { Self.precedes($0.key, $1.key) }
        let remaining = ordered.drop { entry in
            guard let position else { return false }
            return !Self.precedes(position, entry.key)
        }
        let page = Array(remaining.prefix(limit))
        let next = remaining.count > limit ? page.last.map { "\($0.key.0):\($0.key.1)" } : nil
        return PurchaseHistoryPage(
            items: page.map(\.item),
            nextCursor: next,
            pendingApprovals: cursor == nil ? pendingApprovals(for: user) : []
        )
    }

    /// The purchases waiting for a parent's approval, newest first: one row per product and user, the latest
    /// request's, for requests younger than ``Configuration/pendingApprovalLifetime``.
    func pendingApprovals(for user: String?) -> [PendingPurchase] {
        let oldest = clock.now.addingTimeInterval(-configuration.pendingApprovalLifetime.timeInterval)
        var rows: [String: PendingPurchase] = [:]
        for intent in outbox.intents where user == nil || intent.userId == user {
            guard let since = intent.awaitingApprovalSince, since >= oldest else { continue }
            let key = intent.userId + "\u{1}" + intent.productId
            if let row = rows[key], row.requestedAt >= since {
                continue
            }
            rows[key] = PendingPurchase(
                productId: intent.productId,
                userId: intent.userId,
                orderId: intent.orderId,
                quantity: intent.quantity ?? 1,
                requestedAt: since
            )
        }
        return rows.values.sorted { ($0.requestedAt, $0.productId) > ($1.requestedAt, $1.productId) }
    }

    /// Merges the store's full list of transactions into the history cache.
    ///
    /// - Throws: The store's error when it cannot be asked.
    public func refreshHistory() async throws {
        await loadIfNeeded()
        let account = await currentAppleAccount()
        let signed = try await store.allTransactions()
        for jws in signed {
            if let transaction = try? UnverifiedTransaction(signedTransaction: jws) {
                mergeIntoHistory(transaction)
            }
        }
        outbox.historyAccount = account ?? outbox.historyAccount
        outbox.historyLoaded = true
        changed()
        try? await persist()
    }

    /// The `appTransactionId` of the device's Apple Account (its app transaction), or `nil` when the store cannot say.
    func currentAppleAccount() async -> String? {
        guard let signed = try? await store.appTransaction(refresh: false) else { return nil }
        return (try? AppTransactionInfo(signedAppTransaction: signed))?.appTransactionId
    }

    /// Newest first: by purchase date, then by transaction id (numerically).
    static func sortKey(_ item: PurchaseHistoryItem) -> (Int64, String) {
        (item.purchaseDate?.millisecondsSince1970 ?? 0, item.transactionId)
    }

    /// Whether `lhs` comes before `rhs` in the newest-first order.
    static func precedes(_ lhs: (Int64, String), _ rhs: (Int64, String)) -> Bool {
        if lhs.0 != rhs.0 {
            return lhs.0 > rhs.0
        }
        return (lhs.1.count, lhs.1) > (rhs.1.count, rhs.1)
    }
}
