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
        /// Replace the stored entry with this one and carry out the delivery in the same atomic commit (a
        /// ``TransactionalFulfillmentStore``); then go on as `write` does. If another writer came first, the entry
        /// is read again and the turn decided again. If the fulfillment failed, nothing was written: `failed`
        /// answers, given the entry as last read and the failure.
        case fulfill(
            LedgerEntry,
            Delivery,
            in: any TransactionalFulfillmentStore,
            then: (LedgerEntry) async throws -> Result,
            failed: (LedgerEntry, IAPError) async throws -> Result
        )
    }

    /// What recording a new purchase together with its grant came to.
    enum Recorded {
        /// This call recorded the purchase; this is what became of its grant.
        case settled(DeliveryOutcome)
        /// Another deliverer recorded it first: go on with the stored entry.
        case existing(LedgerEntry)
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
            case .fulfill(var next, let delivery, let ledger, let then, let failed):
                let stored: Bool
                do {
                    stored = try await ledger.replace(next, ifRevision: current.revision, fulfilling: delivery)
                } catch let failure as IAPError where failure.code == .fulfillmentFailed {
                    return try await failed(current, failure)
                }
                if stored {
                    next.revision = current.revision + 1
                    return try await then(next)
                }
                current = try await reload(current.transactionId)
            }
        }
        return try exhausted(current)
    }

    /// What an entry still needs from the hook.
    func pendingAction(_ entry: LedgerEntry) -> Delivery.Action? {
        if entry.deliveryState == .awaitingOwner || entry.deliveryState == .unknownProduct {
            return nil
        }
        guard entry.revokedAt != nil else {
            return entry.deliveredAt == nil ? .grant : nil
        }
        if entry.revocationDelivered {
            return nil
        }
        if entry.deliveredAt == nil, keepsPartOfAGrant(entry) {
            // A refund of a share leaves the customer the rest: the grant is owed first (retried under its own key
            // until confirmed), then the take-back of the share.
            return .grant
        }
        // Take back whatever may have been given: a confirmed grant, or a grant call whose answer was lost.
        return entry.deliveredAt != nil || entry.grantAttempted ? .revoke : nil
    }

    /// Whether a revocation leaves the customer part of the grant: a prorated refund of a share below 100 % of a
    /// consumable (the rest of its units), or of anything else whose access the ``proratedRefunds`` policy keeps.
    /// The signed transaction's `type` tells a consumable, so no catalog is needed.
    func keepsPartOfAGrant(_ entry: LedgerEntry) -> Bool {
        guard entry.transaction.isPartlyRefunded else { return false }
        return entry.transaction.type == .consumable || keepsAccess(entry)
    }

    /// Whether a prorated refund of a non-consumable or a subscription keeps its access: as recorded when the refund
    /// was processed (``LedgerEntry/refundAccessKept``), else (a refund an earlier version recorded) as the
    /// ``proratedRefunds`` policy says now.
    func keepsAccess(_ entry: LedgerEntry) -> Bool {
        entry.refundAccessKept ?? (proratedRefunds == .keepAccess)
    }

    /// The decision the ``proratedRefunds`` policy takes, once, for a refund being recorded: whether a prorated
    /// refund of a non-consumable or a subscription keeps its access; `nil` for any other revocation (a consumable
    /// always takes back its share, a full refund everything).
    func decideRefundAccess(of transaction: TransactionPayload) -> Bool? {
        guard transaction.isPartlyRefunded, transaction.type != .consumable else { return nil }
        return proratedRefunds == .keepAccess
    }

    /// Whether a deliverer holds the entry right now.
    func isClaimed(_ entry: LedgerEntry, at now: Date) -> Bool {
        entry.deliveryState == .pending && (entry.nextAttemptAt.map { $0 > now } ?? false)
    }

    /// Sets the delivery fields from what the entry needs; a claim in progress is left alone.
    func normalize(_ entry: inout LedgerEntry, now: Date) {
        if entry.deliveryState == .awaitingOwner || entry.deliveryState == .unknownProduct || isClaimed(entry, at: now)
        {
            return
        }
        if self.pendingAction(entry) == nil {
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
                if let conflict = Self.environmentConflict(transaction, current) {
                    throw conflict
                }
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
                    updated.refundAccessKept = decideRefundAccess(of: transaction)
                } else if transaction.revocationDate == nil, current.revokedAt != nil, current.consentRescindedAt == nil
                {
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
                    updated.refundAccessKept = nil
                }
                normalize(&updated, now: clock.now)
                return .writeSigned(updated, signedTransaction: signedTransaction) { $0 }
            }
        )
    }

    /// Runs the hook for an entry that needs it, unless another deliverer holds it.
    ///
    /// - Parameters:
    ///   - entry: The entry as last read.
    ///   - releasingParked: Whether an entry parked for an unknown product is put back on its way (pending, its
    ///     attempts reset) and claimed in the same write, so that no drain can take it in between.
    func settle(_ entry: LedgerEntry, releasingParked: Bool = false) async throws -> DeliveryOutcome {
        try await compareAndSet(
            entry,
            ifExhausted: { .pending($0) },
            change: { latest in
                let now = clock.now
                var current = latest
                if releasingParked, current.deliveryState == .unknownProduct {
                    current = Self.unparked(current)
                }
                if current.deliveryState == .awaitingOwner {
                    return .done(.awaitingOwner(current))
                }
                if current.deliveryState == .unknownProduct {
                    return .done(.deferred(current, Self.parkedError(current)))
                }
                guard let action = self.pendingAction(current) else {
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
                case .delivered, .awaitingOwner, .unknownProduct:
                    break
                }
                guard let product = try await knownProduct(of: current.transaction, id: current.productId) else {
                    // The catalog no longer (or not yet) names the product: park it rather than fail attempts.
                    var parked = current
                    parked.deliveryState = .unknownProduct
                    parked.nextAttemptAt = nil
                    return .write(parked) { stored in
                        self.report(
                            "delivery.unknownProduct",
                            stored.transaction,
                            userId: stored.userId,
                            error: Self.parkedError(stored)
                        )
                        return .deferred(stored, Self.parkedError(stored))
                    }
                }
                var claimed = current
                if current.deliveryAttempts >= retryPolicy.maximumAttempts {
                    claimed.deliveryState = .deadLettered
                    claimed.nextAttemptAt = nil
                    claimed.givenUpAt = nil
                    return .write(claimed) { .deferred($0, Self.deadLetterError($0)) }
                }
                if case .transactional(let ledger) = fulfillment {
                    // No claim: the ledger takes the write and the fulfillment together, or neither.
                    let delivery = self.delivery(for: current, action: action, product: product)
                    return .fulfill(
                        fulfilled(current, action: action, units: delivery.units, now: now),
                        delivery,
                        in: ledger,
                        then: { Self.finished($0, justDone: action) },
                        failed: { latest, failure in
                            try await self.recordFailedAttempt(latest, action: action, failure: failure)
                        }
                    )
                }
                claimed.deliveryState = .pending
                claimed.nextAttemptAt = now.addingTimeInterval(retryPolicy.claimDuration.timeInterval)
                claimed.deliveryAttempts += 1
                if action == .grant {
                    claimed.grantAttempted = true
                }
                return .write(claimed) { try await self.runHook($0, action: action, product: product) }
            }
        )
    }

    /// Calls the hook for an entry this deliverer has claimed, and records what it did.
    ///
    /// - Parameters:
    ///   - claimed: The entry, claimed.
    ///   - action: Grant or take back.
    ///   - product: Its product, as the catalog (or the signed type) said when it was claimed.
    func runHook(
        _ claimed: LedgerEntry,
        action: Delivery.Action,
        product: CatalogProduct
    ) async throws -> DeliveryOutcome {
        guard case .hook(let hook) = fulfillment else {
            throw IAPError(
                .internalError,
                "transaction \(claimed.transactionId) was claimed for a hook, but there is none"
            )
        }
        var failure: IAPError?
        var grantedUnits = claimed.grantedUnits
        let started = ContinuousClock.now
        do {
            let delivery = self.delivery(for: claimed, action: action, product: product)
            if action == .grant {
                grantedUnits = delivery.units
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

    /// What the fulfillment is asked to do for an entry of a product.
    func delivery(for entry: LedgerEntry, action: Delivery.Action, product: CatalogProduct) -> Delivery {
        var units = Self.units(of: entry, product: product)
        var accessKept = false
        if action == .revoke {
            let granted = entry.grantedUnits ?? units
            if product.kind == .consumable {
                // A prorated refund takes back its share, rounded down; any other, everything granted.
                units = entry.transaction.revocationDate == nil ? granted : entry.transaction.refundedUnits(of: granted)
            } else if entry.transaction.isPartlyRefunded, keepsAccess(entry) {
                units = 0
                accessKept = true
            } else {
                units = granted
            }
        }
        let grantKey =
            entry.grantGeneration == 0 ? entry.transactionId : "\(entry.transactionId):grant:\(entry.grantGeneration)"
        return Delivery(
            action: action,
            idempotencyKey: action == .revoke ? "\(entry.transactionId):revoke:\(entry.grantGeneration)" : grantKey,
            grantIdempotencyKey: action == .revoke ? grantKey : nil,
            grantAcknowledged: action == .revoke ? entry.deliveredAt != nil : nil,
            transactionId: entry.transactionId,
            userId: entry.userId,
            product: product,
            transaction: entry.transaction,
            units: units,
            orderId: entry.orderId,
            isFlagged: isFlagged(entry),
            accessKept: accessKept
        )
    }

    /// The entry once a delivery was carried out on it (nobody holding it): granted or taken back, settled.
    func fulfilled(_ entry: LedgerEntry, action: Delivery.Action, units: Int64, now: Date) -> LedgerEntry {
        var next = entry
        if action == .grant {
            next.deliveredAt = now
            next.grantedUnits = units
            next.grantAttempted = true
        } else {
            next.revocationDelivered = true
        }
        next.deliveryState = .pending
        next.nextAttemptAt = nil
        next.deliveryAttempts = 0
        next.lastError = nil
        normalize(&next, now: now)
        return next
    }

    /// Records a new purchase that needs its grant, and grants it, in as few commits as the fulfillment allows:
    /// - with a hook, the entry is inserted already claimed by this deliverer (what ``settle(_:)`` would write next,
    ///   so the insert and the claim are one commit), the hook is called, and the entry is marked: two commits;
    /// - with a ``TransactionalFulfillmentStore``, the entry is inserted delivered with the grant carried out in the
    ///   same commit: one commit. A failed grant was rolled back; the purchase is then recorded with the failed
    ///   attempt, for a retry with backoff.
    ///
    /// An id another deliverer recorded first is `.existing`, with nothing granted.
    ///
    /// - Parameters:
    ///   - candidate: The new entry, owed a grant, unclaimed.
    ///   - signedTransaction: The compact JWS its transaction was verified from, kept with it.
    ///   - product: Its product.
    ///   - inserted: Called with the entry once this call recorded it.
    func recordAndGrant(
        _ candidate: LedgerEntry,
        signedTransaction: String?,
        product: CatalogProduct,
        inserted: (LedgerEntry) -> Void
    ) async throws -> Recorded {
        let now = clock.now
        switch fulfillment {
        case .hook:
            var claimed = candidate
            claimed.deliveryState = .pending
            claimed.nextAttemptAt = now.addingTimeInterval(retryPolicy.claimDuration.timeInterval)
            claimed.deliveryAttempts = 1
            claimed.grantAttempted = true
            switch try await store.insert(claimed, signedTransaction: signedTransaction) {
            case .inserted(let stored):
                inserted(stored)
                return .settled(try await runHook(stored, action: .grant, product: product))
            case .existing(let existing):
                return .existing(existing)
            }
        case .transactional(let ledger):
            let delivery = self.delivery(for: candidate, action: .grant, product: product)
            let granted = fulfilled(candidate, action: .grant, units: delivery.units, now: now)
            let failure: IAPError
            do {
                switch try await ledger.insert(granted, signedTransaction: signedTransaction, fulfilling: delivery) {
                case .inserted(let stored):
                    inserted(stored)
                    return .settled(Self.finished(stored, justDone: .grant))
                case .existing(let existing):
                    return .existing(existing)
                }
            } catch let error as IAPError where error.code == .fulfillmentFailed {
                failure = error
            }
            // Nothing was written: record the purchase with its failed attempt.
            var failed = candidate
            failed.deliveryAttempts = 1
            schedule(&failed, after: failure, now: now)
            switch try await store.insert(failed, signedTransaction: signedTransaction) {
            case .inserted(let stored):
                inserted(stored)
                return .settled(.deferred(stored, failure))
            case .existing(let existing):
                return .existing(existing)
            }
        }
    }

    /// Records a failed transactional fulfillment (which wrote nothing): one more attempt, and a retry with backoff
    /// or the dead letter. If another deliverer settled or holds the entry meanwhile, its own call decides.
    private func recordFailedAttempt(
        _ entry: LedgerEntry,
        action: Delivery.Action,
        failure: IAPError
    ) async throws -> DeliveryOutcome {
        try await compareAndSet(
            entry,
            ifExhausted: { .deferred($0, failure) },
            change: { current in
                let now = clock.now
                guard self.pendingAction(current) == action, current.grantGeneration == entry.grantGeneration,
                    current.deliveryState != .deadLettered, !isClaimed(current, at: now)
                else {
                    return .done(self.pendingAction(current) == nil ? Self.finished(current) : .pending(current))
                }
                var next = current
                next.deliveryAttempts += 1
                schedule(&next, after: failure, now: now)
                return .write(next) { .deferred($0, failure) }
            }
        )
    }

    /// Schedules the retry of an entry whose latest attempt failed, or dead-letters it after the last attempt, or at
    /// once when the hook refused it for good (``IAPError/Code/fulfillmentRefused``).
    private func schedule(_ entry: inout LedgerEntry, after failure: IAPError, now: Date) {
        entry.lastError = failure.message
        if entry.deliveryAttempts >= retryPolicy.maximumAttempts || failure.code == .fulfillmentRefused {
            entry.deliveryState = .deadLettered
            entry.nextAttemptAt = nil
            // A new dead letter waits for a person, even if an operator gave up an earlier one of this entry.
            entry.givenUpAt = nil
        } else {
            entry.deliveryState = .retrying
            entry.nextAttemptAt = now.addingTimeInterval(retryPolicy.delay(afterAttempts: entry.deliveryAttempts))
        }
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
                    schedule(&next, after: failure, now: now)
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
                    if self.pendingAction(stored) != nil, stored.deliveryState == .pending,
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
