#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The delivery state machine: what an entry still needs, the claim, the hook call and its record, each change
/// made by compare-and-set on the entry's revision so that deliverers in every process agree.
extension DeliveryPipeline {
    /// How many times a compare-and-set is tried against an entry that keeps changing under it.
    static let compareAndSetAttempts = 8

    /// What one turn of ``compareAndSet(_:ifExhausted:change:)`` decided.
    enum Change<Result> {
        /// Nothing to write: the loop ends with this result.
        case done(Result)
        /// Replace the stored entry with this one if its revision is still the one read; then go on with the
        /// stored entry (its revision bumped). If another writer came first, the entry is read again and the
        /// turn decided again.
        case write(LedgerEntry, then: (LedgerEntry) async throws -> Result)
        /// As ``write(_:then:)``, for an entry whose `transaction` is replaced by newer signed data: the signed
        /// transaction kept with it is replaced too (by none for `nil`).
        case writeSigned(LedgerEntry, signedTransaction: String?, then: (LedgerEntry) async throws -> Result)
    }

    /// Reads, modifies and replaces an entry by compare-and-set, reading it again and deciding again each time
    /// another writer came first, up to ``compareAndSetAttempts`` times.
    ///
    /// - Parameters:
    ///   - entry: The entry as last read.
    ///   - exhausted: The result (or the error) when every attempt lost to another writer, given the entry as
    ///     last read.
    ///   - change: Decides, from the current entry, what to write, or that nothing is to be written.
    /// - Returns: The result of the turn that ended the loop.
    func compareAndSet<Result>(
        _ entry: LedgerEntry,
        ifExhausted exhausted: (LedgerEntry) throws -> Result,
        change: (LedgerEntry) async throws -> Change<Result>
    ) async throws -> Result {
        var current = entry
        for _ in 0..<Self.compareAndSetAttempts {
            switch try await change(current) {
            case .done(let result):
                return result
            case .write(var next, let then):
                if try await store.replace(next, ifRevision: current.revision) {
                    next.revision = current.revision + 1
                    return try await then(next)
                }
                current = try await reload(current.transactionId)
            case .writeSigned(var next, let signedTransaction, let then):
                if try await store.replace(next, ifRevision: current.revision, signedTransaction: signedTransaction) {
                    next.revision = current.revision + 1
                    return try await then(next)
                }
                current = try await reload(current.transactionId)
            }
        }
        return try exhausted(current)
    }

    /// What an entry still needs from the hook.
    static func pendingAction(_ entry: LedgerEntry) -> Delivery.Action? {
        if entry.deliveryState == .awaitingOwner {
            return nil
        }
        guard entry.revokedAt != nil else {
            return entry.deliveredAt == nil ? .grant : nil
        }
        if entry.revocationDelivered {
            return nil
        }
        // Take back whatever may have been given: a confirmed grant, or a grant call whose answer was lost.
        return entry.deliveredAt != nil || entry.grantAttempted ? .revoke : nil
    }

    /// Whether a deliverer holds the entry right now.
    func isClaimed(_ entry: LedgerEntry, at now: Date) -> Bool {
        entry.deliveryState == .pending && (entry.nextAttemptAt.map { $0 > now } ?? false)
    }

    /// Sets the delivery fields from what the entry needs; a claim in progress is left alone.
    func normalize(_ entry: inout LedgerEntry, now: Date) {
        if entry.deliveryState == .awaitingOwner || isClaimed(entry, at: now) {
            return
        }
        if Self.pendingAction(entry) == nil {
            if entry.revokedAt != nil {
                entry.revocationDelivered = true
            }
            entry.deliveryState = .delivered
            entry.nextAttemptAt = nil
            entry.lastError = nil
            entry.deliveryAttempts = 0
        } else if entry.deliveryState == .delivered {
            entry.deliveryState = .pending
            entry.nextAttemptAt = nil
            entry.deliveryAttempts = 0
            entry.lastError = nil
        }
    }

    /// Brings the entry in line with newer signed data: a new revocation, or a reversed refund. The signed
    /// transaction kept with the entry is replaced by `signedTransaction`, the JWS of the newer data (none when the
    /// caller has none: the older one no longer describes the entry).
    func reconcile(
        _ entry: LedgerEntry,
        with transaction: TransactionPayload,
        signedTransaction: String?
    ) async throws -> LedgerEntry {
        try await compareAndSet(
            entry,
            ifExhausted: { _ in
                throw IAPError(
                    .storageFailure,
                    "transaction \(entry.transactionId) kept changing; try again",
                    isRetryable: true
                )
            },
            change: { current in
                // A revocation counts unless it is older than what the ledger holds (a refund can be signed in
                // the same millisecond as the purchase); anything else, a reversal above all, must be newer.
                let revokes = transaction.revocationDate != nil && current.revokedAt == nil
                guard
                    Self.isNewer(transaction, than: current.transaction)
                        || (revokes && !Self.isNewer(current.transaction, than: transaction))
                else { return .done(current) }
                var updated = current
                updated.transaction = transaction
                if let revoked = transaction.revocationDate, current.revokedAt == nil {
                    updated.revokedAt = revoked
                    updated.revocationDelivered = false
                } else if transaction.revocationDate == nil, current.revokedAt != nil {
                    if current.revocationDelivered, current.deliveredAt != nil || current.grantAttempted {
                        // Taken back already: grant again, under a new idempotency key.
                        updated.grantGeneration += 1
                        updated.deliveredAt = nil
                        updated.grantAttempted = false
                        updated.grantedUnits = nil
                    }
                    // Otherwise the take-back never happened (or is under way and will report back): cancel it.
                    updated.revokedAt = nil
                    updated.revocationDelivered = false
                }
                normalize(&updated, now: clock.now)
                return .writeSigned(updated, signedTransaction: signedTransaction) { $0 }
            }
        )
    }

    /// Runs the hook for an entry that needs it, unless another deliverer holds it.
    func settle(_ entry: LedgerEntry) async throws -> DeliveryOutcome {
        try await compareAndSet(
            entry,
            ifExhausted: { .pending($0) },
            change: { current in
                let now = clock.now
                if current.deliveryState == .awaitingOwner {
                    return .done(.awaitingOwner(current))
                }
                guard let action = Self.pendingAction(current) else {
                    guard current.deliveryState != .delivered, !isClaimed(current, at: now) else {
                        return .done(Self.finished(current))
                    }
                    var settled = current
                    normalize(&settled, now: now)
                    return .write(settled) { Self.finished($0) }
                }
                switch current.deliveryState {
                case .deadLettered:
                    return .done(.deferred(current, Self.deadLetterError(current)))
                case .retrying:
                    if let due = current.nextAttemptAt, due > now {
                        // An early resubmission does not skip the backoff.
                        return .done(
                            .deferred(
                                current,
                                IAPError(
                                    .fulfillmentFailed,
                                    current.lastError ?? "a retry is scheduled",
                                    isRetryable: true
                                )
                            )
                        )
                    }
                case .pending:
                    if isClaimed(current, at: now) {
                        return .done(.pending(current))
                    }
                case .delivered, .awaitingOwner:
                    break
                }
                var claimed = current
                if current.deliveryAttempts >= retryPolicy.maximumAttempts {
                    claimed.deliveryState = .deadLettered
                    claimed.nextAttemptAt = nil
                    return .write(claimed) { .deferred($0, Self.deadLetterError($0)) }
                }
                claimed.deliveryState = .pending
                claimed.nextAttemptAt = now.addingTimeInterval(retryPolicy.claimDuration.timeInterval)
                claimed.deliveryAttempts += 1
                if action == .grant {
                    claimed.grantAttempted = true
                }
                return .write(claimed) { try await self.runHook($0, action: action) }
            }
        )
    }

    private func runHook(_ claimed: LedgerEntry, action: Delivery.Action) async throws -> DeliveryOutcome {
        var failure: IAPError?
        var grantedUnits = claimed.grantedUnits
        let started = ContinuousClock.now
        do {
            let product = try await catalog.product(id: claimed.productId)
            let units =
                action == .revoke
                ? claimed.grantedUnits ?? Self.units(of: claimed, product: product)
                : Self.units(of: claimed, product: product)
            let grantKey =
                claimed.grantGeneration == 0
                ? claimed.transactionId : "\(claimed.transactionId):grant:\(claimed.grantGeneration)"
            let delivery = Delivery(
                action: action,
                idempotencyKey: action == .revoke
                    ? "\(claimed.transactionId):revoke:\(claimed.grantGeneration)" : grantKey,
                grantIdempotencyKey: action == .revoke ? grantKey : nil,
                transactionId: claimed.transactionId,
                userId: claimed.userId,
                product: product,
                transaction: claimed.transaction,
                units: units,
                orderId: claimed.orderId,
                isFlagged: isFlagged(claimed)
            )
            if action == .grant {
                grantedUnits = units
                try await hook.grant(delivery)
            } else {
                try await hook.revoke(delivery)
            }
        } catch {
            failure = IAPError.wrapping(error, as: .fulfillmentFailed, "the fulfillment hook failed")
        }
        let elapsed = ContinuousClock.now - started
        let outcome = try await recordHookResult(action, failure: failure, grantedUnits: grantedUnits, claimed: claimed)
        reportHookCall(action, claimed: claimed, failure: failure, outcome: outcome, elapsed: elapsed)
        return outcome
    }

    /// Reports one call of the hook: `delivery.granted` or `delivery.revoked` when it succeeded, `delivery.failed`
    /// (outcome `retrying` or `deadLettered`) when it failed.
    private func reportHookCall(
        _ action: Delivery.Action,
        claimed: LedgerEntry,
        failure: IAPError?,
        outcome: DeliveryOutcome,
        elapsed: Duration
    ) {
        let state: String
        if failure != nil {
            state = outcome.entry?.deliveryState == .deadLettered ? "deadLettered" : "retrying"
        } else {
            state = action == .grant ? "granted" : "revoked"
        }
        events.record(
            IAPEvent(
                time: clock.now,
                event: failure == nil ? "delivery.\(state)" : "delivery.failed",
                userId: claimed.userId,
                productId: claimed.productId,
                transactionId: claimed.transactionId,
                originalTransactionId: claimed.originalTransactionId,
                environment: claimed.environment?.rawValue,
                outcome: state,
                errorCode: failure?.code.rawValue,
                message: failure.map { "\(action.rawValue) attempt \(claimed.deliveryAttempts): \($0.message)" },
                durationMs: Int64((elapsed / .milliseconds(1)).rounded())
            )
        )
    }

    /// Records what a hook call did. A success is never lost: if the entry changed while the hook ran (a
    /// refund arrived, or another deliverer took over an expired claim), the fact is merged into the
    /// current entry and whatever it needs next is done.
    private func recordHookResult(
        _ action: Delivery.Action,
        failure: IAPError?,
        grantedUnits: Int64?,
        claimed: LedgerEntry
    ) async throws -> DeliveryOutcome {
        try await compareAndSet(
            claimed,
            ifExhausted: { _ in
                throw IAPError(
                    .storageFailure,
                    "transaction \(claimed.transactionId) kept changing while its hook ran; the next drain settles it",
                    isRetryable: true
                )
            },
            change: { current in
                let now = clock.now
                let ours =
                    current.deliveryState == .pending && current.nextAttemptAt == claimed.nextAttemptAt
                    && current.deliveryAttempts == claimed.deliveryAttempts
                let sameGeneration = current.grantGeneration == claimed.grantGeneration
                var next = current
                if let failure {
                    guard ours else {
                        // Another deliverer took over; its own call decides.
                        return .done(.pending(current))
                    }
                    next.lastError = failure.message
                    if next.deliveryAttempts >= retryPolicy.maximumAttempts {
                        next.deliveryState = .deadLettered
                        next.nextAttemptAt = nil
                    } else {
                        next.deliveryState = .retrying
                        next.nextAttemptAt = now.addingTimeInterval(
                            retryPolicy.delay(afterAttempts: next.deliveryAttempts)
                        )
                    }
                    return .write(next) { .deferred($0, failure) }
                }
                if action == .grant, sameGeneration {
                    next.deliveredAt = now
                    next.grantedUnits = grantedUnits
                    next.grantAttempted = true
                } else if action == .revoke, sameGeneration {
                    if next.revokedAt != nil {
                        next.revocationDelivered = true
                    } else {
                        // The refund was reversed while the take-back ran: grant again under a new key.
                        next.grantGeneration += 1
                        next.deliveredAt = nil
                        next.grantAttempted = false
                        next.grantedUnits = nil
                    }
                }
                if ours {
                    // Release the claim; what comes next (a take-back after a grant, say) is decided below.
                    next.deliveryState = .pending
                    next.nextAttemptAt = nil
                    next.deliveryAttempts = 0
                    next.lastError = nil
                }
                normalize(&next, now: now)
                return .write(next) { stored in
                    if Self.pendingAction(stored) != nil, stored.deliveryState == .pending,
                        !self.isClaimed(stored, at: now)
                    {
                        // Something is still owed (a refund arrived while the grant ran): do it now.
                        return try await self.settle(stored)
                    }
                    return Self.finished(stored, justDone: action)
                }
            }
        )
    }

    private static func finished(_ entry: LedgerEntry, justDone action: Delivery.Action? = nil) -> DeliveryOutcome {
        if entry.revokedAt != nil {
            return .revoked(entry)
        }
        if entry.deliveryState == .awaitingOwner {
            return .awaitingOwner(entry)
        }
        return action == .grant ? .delivered(entry) : .alreadyDelivered(entry)
    }

    private static func deadLetterError(_ entry: LedgerEntry) -> IAPError {
        IAPError(
            .fulfillmentFailed,
            "delivery of \(entry.transactionId) failed \(entry.deliveryAttempts) times and waits for a person: "
                + (entry.lastError ?? "no error recorded")
        )
    }

    private static func units(of entry: LedgerEntry, product: CatalogProduct) -> Int64 {
        product.kind == .consumable
            ? Int64(max(1, entry.transaction.effectiveQuantity)) * Int64(max(1, product.unitsPerPurchase)) : 1
    }

    private func reload(_ transactionId: String) async throws -> LedgerEntry {
        guard let entry = try await store.entry(transactionId: transactionId) else {
            throw IAPError(.storageFailure, "transaction \(transactionId) vanished from the store")
        }
        return entry
    }

    /// Whether `candidate` is newer signed data than `stored` (by `signedDate`; equal dates are not newer).
    private static func isNewer(_ candidate: TransactionPayload, than stored: TransactionPayload) -> Bool {
        guard let candidateDate = candidate.signedDate else { return false }
        guard let storedDate = stored.signedDate else { return true }
        return candidateDate > storedDate
    }
}
