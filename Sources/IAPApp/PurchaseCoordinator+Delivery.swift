#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension PurchaseCoordinator {
    /// What one delivery attempt came to.
    enum DeliveryAttempt {
        case delivered(PurchaseHistoryItem)
        case revoked(PurchaseHistoryItem)
        case waiting(IAPError?)
        case rejected(IAPError)
        /// Another task is submitting it right now.
        case busy
    }

    // MARK: - Draining

    /// Submits the purchases in the outbox: those whose backoff is over, or all of them.
    ///
    /// Call it when the network comes back, or after the customer signed in again; ``sweep(force:)`` (at launch
    /// and on returning to the foreground), ``signIn(_:)`` and each delivered purchase call it too.
    ///
    /// - Parameter force: Whether to submit entries whose backoff is not over yet.
    /// - Returns: What was delivered and what still waits.
    @discardableResult
    public func drainOutbox(force: Bool = false) async -> OutboxDrainReport {
        await loadIfNeeded()
        return await drain(sortedEntries().map(\.transactionId), force: force)
    }

    /// Submits the given outbox entries, oldest first, skipping those whose backoff is not over unless `force`.
    func drain(_ transactionIds: [String], force: Bool) async -> OutboxDrainReport {
        var report = OutboxDrainReport()
        let now = clock.now
        for id in transactionIds {
            guard let entry = outbox.entries[id] else { continue }
            if !force, let due = entry.nextAttemptAt, due > now {
                report.notDue.append(id)
                continue
            }
            switch await deliver(id) {
            case .delivered, .revoked:
                report.delivered.append(id)
            case .waiting, .rejected, .busy:
                report.waiting.append(id)
                if outbox.entries[id]?.isAwaitingAuthentication == true {
                    report.awaitingAuthentication.append(id)
                }
            }
        }
        return report
    }

    // MARK: - Updates

    /// Handles one transaction from the store's updates: a renewal, an Ask to Buy approval, a refund, a purchase
    /// from another device, or an unfinished transaction of an earlier run.
    func handleUpdate(_ signedTransaction: String) async {
        await loadIfNeeded()
        let transaction: UnverifiedTransaction
        do {
            transaction = try UnverifiedTransaction(signedTransaction: signedTransaction)
        } catch {
            emit(.unreadable(IAPError.wrapping(error, as: .malformedSignedData, "an update could not be read")))
            return
        }
        if await absorb(transaction) {
            _ = await deliver(transaction.transactionId)
        }
    }

    /// Takes a transaction from the store into the outbox, unless the server confirmed this state of it already
    /// (an unfinished copy handed out again): then only the finish may be missing, and it is done here.
    ///
    /// - Returns: Whether the transaction is in the outbox and must be submitted.
    func absorb(_ transaction: UnverifiedTransaction) async -> Bool {
        let id = transaction.transactionId
        if outbox.entries[id] == nil, let known = outbox.history[id],
            known.delivery == (transaction.payload.revocationDate != nil ? .revoked : .delivered)
        {
            // The cache's revocation date proves nothing: the store's list may have brought it before the server
            // heard of the refund. What counts is what the server confirmed.
            mergeIntoHistory(transaction)
            try? await persist()
            try? await store.finish(transactionId: id)
            return false
        }
        enqueue(transaction, userId: nil, orderId: nil)
        try? await persist()
        return true
    }

    /// Adds a transaction to the outbox (or updates its signed data when newer), with its context, and to the
    /// history cache. Context passed in wins; otherwise it is resolved from the saved purchases.
    func enqueue(_ transaction: UnverifiedTransaction, userId: String?, orderId: String?) {
        let id = transaction.transactionId
        mergeIntoHistory(transaction)
        if transaction.payload.revocationDate != nil {
            outbox.refundRequests[id] = nil
            outbox.history[id]?.refundRequestedAt = nil
        }
        if var entry = outbox.entries[id] {
            if Self.isNewer(transaction.payload, than: entry.signedTransaction) {
                entry.signedTransaction = transaction.signedTransaction
                entry.nextAttemptAt = nil
                entry.state = .awaitingDelivery
                outbox.entries[id] = entry
            }
            changed()
            return
        }
        var context = (userId: userId, orderId: orderId)
        if context.userId == nil {
            context = resolveContext(of: transaction)
        }
        if let user = context.userId {
            // The purchase a parent approved arrived: it no longer shows as waiting (nor do repeated requests for
            // it, which the App Store merges into one).
            for index in outbox.intents.indices
            where outbox.intents[index].productId == transaction.productId && outbox.intents[index].userId == user {
                outbox.intents[index].awaitingApprovalSince = nil
            }
        }
        outbox.entries[id] = PurchaseOutboxEntry(
            transactionId: id,
            productId: transaction.productId,
            signedTransaction: transaction.signedTransaction,
            userId: context.userId,
            orderId: context.orderId,
            enqueuedAt: clock.now
        )
        if var item = outbox.history[id] {
            item.userId = item.userId ?? context.userId
            item.orderId = item.orderId ?? context.orderId
            if item.delivery == .unknown {
                item.delivery = .awaitingDelivery
            }
            outbox.history[id] = item
        }
        changed()
    }

    /// The user and order of a transaction the app did not just buy: the saved purchase it completes, the owner
    /// of its appAccountToken, or the signed-in user (see ``fallbackUser(forToken:)``).
    func resolveContext(of transaction: UnverifiedTransaction) -> (userId: String?, orderId: String?) {
        if let known = outbox.history[transaction.transactionId], let user = known.userId {
            return (user, known.orderId)
        }
        guard let token = transaction.appAccountToken else {
            return (signedInUser, nil)
        }
        if let index = outbox.intents.firstIndex(where: {
            $0.appAccountToken == token && $0.productId == transaction.productId
        }) {
            let intent = outbox.intents.remove(at: index)
            return (intent.userId, intent.orderId)
        }
        if let owner = outbox.tokenOwners[token] {
            return (owner, nil)
        }
        return (fallbackUser(forToken: token), nil)
    }

    /// The signed-in user, as the owner of a transaction nothing else names; `nil` when tokens are derived
    /// (``Configuration/appAccountTokenNamespace``) and the transaction's is not the signed-in user's: it is then
    /// another user's purchase, and the server resolves its owner from the token's binding.
    func fallbackUser(forToken token: String?) -> String? {
        guard let user = signedInUser else { return nil }
        guard let namespace = configuration.appAccountTokenNamespace, let token else { return user }
        return AppAccountToken.derive(from: user, namespace: namespace).uuidString.lowercased() == token ? user : nil
    }

    /// Puts a transaction's newest claims in the history cache, keeping what the app knows about it.
    func mergeIntoHistory(_ transaction: UnverifiedTransaction) {
        let id = transaction.transactionId
        guard var item = outbox.history[id] else {
            var item = PurchaseHistoryItem(transaction, delivery: .unknown)
            item.refundRequestedAt = outbox.refundRequests[id]
            outbox.history[id] = item
            changed()
            return
        }
        let fresh = PurchaseHistoryItem(transaction, delivery: item.delivery)
        let newer = (fresh.signedDate ?? .distantPast) > (item.signedDate ?? .distantPast)
        guard newer || (fresh.revocationDate != nil && item.revocationDate == nil) else { return }
        item.expiresDate = fresh.expiresDate
        item.revocationDate = fresh.revocationDate
        item.signedDate = fresh.signedDate
        item.quantity = fresh.quantity
        outbox.history[id] = item
        changed()
    }

    // MARK: - Delivering

    /// Submits one outbox entry until the server settles it or the submission fails, and finishes the store's
    /// transaction once the server confirmed.
    func deliver(_ transactionId: String) async -> DeliveryAttempt {
        guard outbox.entries[transactionId] != nil else {
            if let item = outbox.history[transactionId], item.delivery == .delivered || item.delivery == .revoked {
                return item.delivery == .revoked ? .revoked(item) : .delivered(item)
            }
            return .busy
        }
        guard inFlight.insert(transactionId).inserted else { return .busy }
        defer { inFlight.remove(transactionId) }
        // Submitted again when newer signed data (a refund) arrived while a submission ran.
        for _ in 0..<4 {
            guard let entry = outbox.entries[transactionId] else { return .busy }
            // What the server said, not what the cache read from the store's list.
            var revoked = outbox.history[transactionId]?.delivery == .revoked
            if entry.state != .confirmed {
                switch await submit(entry, transactionId: transactionId, revoked: revoked) {
                case .settled(let attempt): return attempt
                case .changed: continue
                case .confirmed(let confirmedRevoked): revoked = confirmedRevoked
                }
            }
            guard let attempt = await finishConfirmed(entry, transactionId: transactionId, revoked: revoked) else {
                continue
            }
            return attempt
        }
        return .busy
    }

    /// Where one submission of an entry left it.
    private enum SubmissionStep {
        /// The delivery ends here, with this answer.
        case settled(DeliveryAttempt)
        /// Newer signed data arrived meanwhile: submit again.
        case changed
        /// The server confirmed (revoked, or not); the store's transaction is to be finished.
        case confirmed(revoked: Bool)
    }

    /// Submits an entry once and records the server's answer in the outbox.
    private func submit(
        _ entry: PurchaseOutboxEntry,
        transactionId: String,
        revoked: Bool
    ) async -> SubmissionStep {
        let token = (try? UnverifiedTransaction(signedTransaction: entry.signedTransaction))?.appAccountToken
        var submission = TransactionSubmission(
            signedTransaction: entry.signedTransaction,
            userId: entry.userId ?? fallbackUser(forToken: token),
            orderId: entry.orderId
        )
        if configuration.sendsAppTransaction {
            submission.signedAppTransaction = await appTransactionForSubmission()
        }
        let result: TransactionSubmissionResult
        do {
            result = try await delivery.submit(submission)
        } catch {
            var failure = IAPError.wrapping(error, as: .transportFailure, "the server could not be reached")
            failure.isRetryable = true
            result = TransactionSubmissionResult(outcome: .rejected, transactionId: nil, error: failure)
        }
        guard var current = outbox.entries[transactionId] else { return .settled(.busy) }
        current.attempts += 1
        guard result.finish else {
            return .settled(await recordUnfinished(result, current, entry: entry, transactionId: transactionId))
        }
        current.state = .confirmed
        current.lastErrorCode = nil
        current.lastErrorMessage = nil
        current.nextAttemptAt = nil
        let revoked = revoked || result.outcome == .revoked
        if current.signedTransaction != entry.signedTransaction {
            // Newer signed data arrived meanwhile: the server must see it before the transaction is done.
            current.state = .awaitingDelivery
            outbox.entries[transactionId] = current
            changed()
            return .changed
        }
        outbox.entries[transactionId] = current
        setDelivery(transactionId, revoked ? .revoked : .delivered)
        changed()
        try? await persist()
        return .confirmed(revoked: revoked)
    }

    /// Records a submission the server did not settle: the entry waits for its next attempt, or is rejected.
    private func recordUnfinished(
        _ result: TransactionSubmissionResult,
        _ current: PurchaseOutboxEntry,
        entry: PurchaseOutboxEntry,
        transactionId: String
    ) async -> DeliveryAttempt {
        var current = current
        let error =
            result.error
            ?? IAPError(
                .deliveryRejected,
                "the server answered \(result.outcome.rawValue)",
                isRetryable: result.isRetryable
            )
        current.state = result.isRetryable ? .awaitingDelivery : .rejected
        current.lastErrorCode = error.code.rawValue
        current.lastErrorMessage = error.message
        current.nextAttemptAt = clock.now.addingTimeInterval(
            retryPolicy.delay(afterAttempts: current.attempts)
        )
        if current.signedTransaction != entry.signedTransaction {
            current.nextAttemptAt = nil
        }
        outbox.entries[transactionId] = current
        setDelivery(transactionId, current.state == .rejected ? .rejected : .awaitingDelivery)
        changed()
        try? await persist()
        if current.state == .rejected {
            emit(.rejected(transactionId: transactionId, error))
            return .rejected(error)
        }
        emit(.deferred(transactionId: transactionId, error))
        return .waiting(error)
    }

    /// Finishes the store's transaction of a confirmed entry and takes the entry out of the outbox; `nil` when newer
    /// signed data arrived meanwhile (to be submitted again).
    private func finishConfirmed(
        _ entry: PurchaseOutboxEntry,
        transactionId: String,
        revoked: Bool
    ) async -> DeliveryAttempt? {
        do {
            try await store.finish(transactionId: transactionId)
        } catch {
            // The server has it; only the finish is left, tried again at the next drain.
            let failure = IAPError.wrapping(error, as: .internalError, "finishing the transaction failed")
            emit(.deferred(transactionId: transactionId, failure))
            return .waiting(failure)
        }
        guard let finished = outbox.entries[transactionId] else { return .busy }
        if finished.signedTransaction != entry.signedTransaction {
            return nil
        }
        outbox.entries[transactionId] = nil
        changed()
        try? await persist()
        let fallback = (try? UnverifiedTransaction(signedTransaction: entry.signedTransaction)).map {
            PurchaseHistoryItem($0, delivery: revoked ? .revoked : .delivered)
        }
        guard let item = outbox.history[transactionId] ?? fallback else { return .busy }
        if revoked {
            emit(.revoked(item))
            return .revoked(item)
        }
        emit(.delivered(item))
        return .delivered(item)
    }

    func setDelivery(_ transactionId: String, _ delivery: PurchaseHistoryItem.Delivery) {
        outbox.history[transactionId]?.delivery = delivery
    }

    /// Whether `payload` is newer signed data than the JWS `stored` (by `signedDate`), or revokes what it does not.
    static func isNewer(_ payload: TransactionPayload, than stored: String) -> Bool {
        guard let old = try? UnverifiedTransaction(signedTransaction: stored) else { return true }
        if payload.revocationDate != nil, old.payload.revocationDate == nil {
            return true
        }
        return (payload.signedDate ?? .distantPast) > (old.payload.signedDate ?? .distantPast)
    }
}
