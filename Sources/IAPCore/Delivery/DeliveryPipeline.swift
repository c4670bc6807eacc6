#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The anti-lost-order core: verifies a purchase, records it exactly once, grants it through the
/// integrator's hook, and retries until the grant is confirmed.
///
/// For each signed transaction the pipeline:
/// 1. verifies it (signature, chain, bundle id, environment — whatever the ``Verifier`` checks);
/// 2. looks the product up in the ``ProductCatalog`` (an unknown product is rejected, not guessed);
/// 3. resolves the owner: an appAccountToken is bound to the first user who presents it, for good, and a
///    transaction whose token or id belongs to another user is rejected (stolen-receipt replay);
/// 4. records it in the ``EntitlementStore``, idempotently by transaction id;
/// 5. claims it (compare-and-set, so only one deliverer at a time, across processes) and calls the
///    ``FulfillmentHook`` with an idempotency key;
/// 6. marks it delivered — or, when the hook fails, schedules a retry with exponential backoff and
///    jitter, and after ``RetryPolicy/maximumAttempts`` dead-letters it.
///
/// A crash anywhere leaves the entry recorded: an unclaimed or expired claim is picked up by the next
/// ``drainDueRetries(limit:)``. A revocation (a refund, or family sharing ended) calls the revoke hook
/// once; a reversed refund grants again under a new idempotency key. Newer signed data wins: an old
/// copy of a transaction can never undo a refund.
public final class DeliveryPipeline: Sendable {
    private let verifier: any Verifier
    private let catalog: any ProductCatalog
    private let store: any EntitlementStore
    private let hook: any FulfillmentHook
    private let clock: any WallClock
    /// The retry policy.
    public let retryPolicy: RetryPolicy

    /// Creates a pipeline.
    ///
    /// - Parameters:
    ///   - verifier: Verifies signed transactions.
    ///   - catalog: What the business sells.
    ///   - store: The durable ledger.
    ///   - hook: The integrator's grant and revoke code.
    ///   - clock: The wall clock for claims, retries and timestamps.
    ///   - retryPolicy: How failed hooks are retried.
    public init(
        verifier: some Verifier,
        catalog: some ProductCatalog,
        store: some EntitlementStore,
        hook: some FulfillmentHook,
        clock: some WallClock = SystemClock(),
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.verifier = verifier
        self.catalog = catalog
        self.store = store
        self.hook = hook
        self.clock = clock
        self.retryPolicy = retryPolicy
    }

    // MARK: - Submitting

    /// Verifies, records and delivers a signed transaction.
    ///
    /// - Parameters:
    ///   - signedTransaction: The JWS from StoreKit (`jwsRepresentation`) or the App Store Server API.
    ///   - userId: The business user the app says made the purchase, or `nil` to use the user bound to
    ///     the transaction's appAccountToken, else the owner of the purchase it continues (same
    ///     original transaction), else the token itself.
    ///   - orderId: The business order id, if any.
    /// - Returns: What happened; finish the StoreKit transaction only if
    ///   ``DeliveryOutcome/shouldFinishTransaction``.
    public func submit(signedTransaction: String, userId: String?, orderId: String? = nil) async -> DeliveryOutcome {
        let transaction: TransactionPayload
        do {
            transaction = try await verifier.verifyTransaction(signedTransaction)
        } catch {
            return .rejected(IAPError.wrapping(error, as: .internalError, "verification failed"))
        }
        return await process(transaction, userId: userId, orderId: orderId)
    }

    /// Records and delivers a transaction that was already verified (by a notification, or a reconciliation).
    ///
    /// - Parameters:
    ///   - transaction: The verified transaction.
    ///   - userId: The business user, or `nil` to resolve it from the appAccountToken.
    ///   - orderId: The business order id, if any.
    /// - Returns: What happened.
    public func process(_ transaction: TransactionPayload, userId: String?, orderId: String? = nil) async
        -> DeliveryOutcome
    {
        do {
            guard let transactionId = transaction.transactionId, !transactionId.isEmpty else {
                throw IAPError(.malformedSignedData, "the transaction has no transactionId")
            }
            guard let productId = transaction.productId, !productId.isEmpty else {
                throw IAPError(.malformedSignedData, "transaction \(transactionId) has no productId")
            }
            _ = try await catalog.product(id: productId)
            let owner = try await resolveOwner(of: transaction, transactionId: transactionId, requested: userId)
            var candidate = LedgerEntry(
                transaction: transaction,
                transactionId: transactionId,
                originalTransactionId: transaction.originalTransactionId ?? transactionId,
                userId: owner,
                productId: productId,
                orderId: orderId,
                recordedAt: clock.now
            )
            if let revoked = transaction.revocationDate {
                // Revoked before the ledger ever saw it: record it settled, never granted.
                candidate.revokedAt = revoked
                candidate.deliveryState = .delivered
                candidate.revocationDelivered = true
            }
            var entry: LedgerEntry
            switch try await store.insert(candidate) {
            case .inserted(let inserted):
                entry = inserted
            case .existing(let existing):
                guard existing.userId == owner else {
                    throw IAPError(
                        .ownershipConflict,
                        "transaction \(transactionId) is recorded for another user; it cannot be claimed by '\(owner)'"
                    )
                }
                entry = existing
            }
            entry = try await reconcile(entry, with: transaction)
            return try await settle(entry)
        } catch {
            return .rejected(Self.classify(error))
        }
    }

    /// Applies a revocation or a reversed refund that arrived as newer signed data (a notification).
    ///
    /// - Parameter transaction: The verified, newer transaction.
    /// - Returns: What happened, or `nil` when the ledger has no such transaction (deliver it first).
    public func apply(_ transaction: TransactionPayload) async -> DeliveryOutcome? {
        do {
            guard let transactionId = transaction.transactionId,
                let entry = try await store.entry(transactionId: transactionId)
            else {
                return nil
            }
            return try await settle(try await reconcile(entry, with: transaction))
        } catch {
            return .rejected(Self.classify(error))
        }
    }

    // MARK: - Draining

    /// What one drain did.
    public struct DrainReport: Sendable, Hashable {
        /// Entries the hook confirmed now.
        public var delivered = 0
        /// Entries whose hook failed again (rescheduled or dead-lettered).
        public var deferred = 0
        /// Entries another deliverer held, or that needed nothing.
        public var skipped = 0
        /// Failures of the store itself.
        public var errors: [IAPError] = []
    }

    /// Delivers every entry whose retry is due, and every entry left unclaimed by a crash.
    ///
    /// Safe to call from many tasks and processes at once: each entry is claimed by compare-and-set, so
    /// exactly one caller runs its hook.
    ///
    /// - Parameter limit: The most entries to take in this drain.
    /// - Returns: What was done.
    public func drainDueRetries(limit: Int = 100) async -> DrainReport {
        var report = DrainReport()
        let due: [LedgerEntry]
        do {
            due = try await store.dueDeliveries(at: clock.now, limit: limit)
        } catch {
            report.errors.append(Self.classify(error))
            return report
        }
        for entry in due {
            do {
                switch try await settle(entry) {
                case .delivered, .revoked: report.delivered += 1
                case .deferred: report.deferred += 1
                case .alreadyDelivered, .pending, .rejected: report.skipped += 1
                }
            } catch {
                report.errors.append(Self.classify(error))
            }
        }
        return report
    }

    // MARK: - Steps

    private func resolveOwner(of transaction: TransactionPayload, transactionId: String, requested: String?)
        async throws -> String
    {
        if let requested, requested.isEmpty {
            throw IAPError(.invalidArgument, "the user id is empty")
        }
        guard let rawToken = transaction.appAccountToken, !rawToken.isEmpty else {
            if let requested {
                return requested
            }
            // A renewal or a restore belongs to whoever owns the purchase it continues.
            if let owner = try await owner(ofOriginal: transaction.originalTransactionId) {
                return owner
            }
            throw IAPError(
                .invalidArgument,
                "transaction \(transactionId) carries no appAccountToken, continues no recorded purchase, "
                    + "and no user was given"
            )
        }
        guard let token = AppAccountToken.normalized(rawToken) else {
            throw IAPError(.invalidArgument, "the appAccountToken '\(rawToken)' is not a UUID")
        }
        guard let requested else {
            if let bound = try await store.user(forAppAccountToken: token) {
                return bound
            }
            return try await owner(ofOriginal: transaction.originalTransactionId) ?? token
        }
        switch try await store.bind(appAccountToken: token, to: requested) {
        case .bound, .alreadyBound:
            return requested
        case .conflict(let existing):
            throw IAPError(
                .ownershipConflict,
                "the appAccountToken of transaction \(transactionId) belongs to another user ('\(existing)'), "
                    + "not '\(requested)'"
            )
        }
    }

    private func owner(ofOriginal originalTransactionId: String?) async throws -> String? {
        guard let originalTransactionId, !originalTransactionId.isEmpty else { return nil }
        return try await store.entries(originalTransactionId: originalTransactionId).first?.userId
    }

    /// Brings the entry in line with newer signed data: a new revocation, or a reversed refund.
    private func reconcile(_ entry: LedgerEntry, with transaction: TransactionPayload) async throws -> LedgerEntry {
        var current = entry
        for _ in 0..<8 {
            // A revocation counts unless it is older than what the ledger holds (a refund can be signed in
            // the same millisecond as the purchase); anything else, a reversal above all, must be newer.
            let revokes = transaction.revocationDate != nil && current.revokedAt == nil
            guard
                Self.isNewer(transaction, than: current.transaction)
                    || (revokes && !Self.isNewer(current.transaction, than: transaction))
            else { return current }
            var updated = current
            updated.transaction = transaction
            if let revoked = transaction.revocationDate, current.revokedAt == nil {
                updated.revokedAt = revoked
                if current.deliveredAt != nil {
                    // Granted before: the revoke hook must run.
                    updated.deliveryState = .pending
                    updated.nextAttemptAt = nil
                    updated.deliveryAttempts = 0
                    updated.lastError = nil
                } else {
                    // Never granted: nothing to take back, and nothing will be granted.
                    updated.deliveryState = .delivered
                    updated.nextAttemptAt = nil
                    updated.revocationDelivered = true
                }
            } else if transaction.revocationDate == nil, current.revokedAt != nil {
                // Refund reversed: grant again, under a new idempotency key.
                updated.revokedAt = nil
                updated.revocationDelivered = false
                updated.deliveredAt = nil
                updated.grantGeneration += 1
                updated.deliveryState = .pending
                updated.nextAttemptAt = nil
                updated.deliveryAttempts = 0
                updated.lastError = nil
            }
            if try await store.replace(updated, ifRevision: current.revision) {
                updated.revision = current.revision + 1
                return updated
            }
            guard let reloaded = try await store.entry(transactionId: current.transactionId) else {
                throw IAPError(.storageFailure, "transaction \(current.transactionId) vanished from the store")
            }
            current = reloaded
        }
        throw IAPError(
            .storageFailure,
            "transaction \(entry.transactionId) kept changing; try again",
            isRetryable: true
        )
    }

    /// Runs the hook for an entry that needs it, unless another deliverer holds it.
    private func settle(_ entry: LedgerEntry) async throws -> DeliveryOutcome {
        var current = entry
        for _ in 0..<8 {
            switch current.deliveryState {
            case .delivered:
                return current.revokedAt != nil ? .revoked(current) : .alreadyDelivered(current)
            case .deadLettered:
                return .deferred(
                    current,
                    IAPError(
                        .fulfillmentFailed,
                        "delivery of \(current.transactionId) failed \(current.deliveryAttempts) times and waits "
                            + "for a person: \(current.lastError ?? "no error recorded")"
                    )
                )
            case .pending, .retrying:
                break
            }
            let now = clock.now
            if current.deliveryState == .pending, let heldUntil = current.nextAttemptAt, heldUntil > now {
                return .pending(current)
            }
            var claimed = current
            claimed.deliveryState = .pending
            claimed.nextAttemptAt = now.addingTimeInterval(RetryPolicy.seconds(retryPolicy.claimDuration))
            claimed.deliveryAttempts += 1
            if try await store.replace(claimed, ifRevision: current.revision) {
                claimed.revision = current.revision + 1
                return try await runHook(claimed)
            }
            guard let reloaded = try await store.entry(transactionId: current.transactionId) else {
                throw IAPError(.storageFailure, "transaction \(current.transactionId) vanished from the store")
            }
            current = reloaded
        }
        return .pending(current)
    }

    private func runHook(_ claimed: LedgerEntry) async throws -> DeliveryOutcome {
        let product = try await catalog.product(id: claimed.productId)
        let revoking = claimed.revokedAt != nil
        let units =
            product.kind == .consumable
            ? Int64(max(1, claimed.transaction.effectiveQuantity)) * Int64(product.unitsPerPurchase) : 1
        let key =
            revoking
            ? "\(claimed.transactionId):revoke:\(claimed.grantGeneration)"
            : (claimed.grantGeneration == 0
                ? claimed.transactionId : "\(claimed.transactionId):grant:\(claimed.grantGeneration)")
        let delivery = Delivery(
            action: revoking ? .revoke : .grant,
            idempotencyKey: key,
            transactionId: claimed.transactionId,
            userId: claimed.userId,
            product: product,
            transaction: claimed.transaction,
            units: units,
            orderId: claimed.orderId
        )
        var next = claimed
        let failure: IAPError?
        do {
            if revoking {
                try await hook.revoke(delivery)
            } else {
                try await hook.grant(delivery)
            }
            failure = nil
        } catch {
            failure = IAPError.wrapping(error, as: .fulfillmentFailed, "the fulfillment hook failed")
        }
        let now = clock.now
        if let failure {
            next.lastError = failure.message
            if next.deliveryAttempts >= retryPolicy.maximumAttempts {
                next.deliveryState = .deadLettered
                next.nextAttemptAt = nil
            } else {
                next.deliveryState = .retrying
                next.nextAttemptAt = now.addingTimeInterval(backoff(afterAttempts: next.deliveryAttempts))
            }
        } else {
            next.deliveryState = .delivered
            next.nextAttemptAt = nil
            next.lastError = nil
            if revoking {
                next.revocationDelivered = true
            } else {
                next.deliveredAt = now
            }
        }
        guard try await store.replace(next, ifRevision: claimed.revision) else {
            // The claim expired and another deliverer took over; report what the ledger says now.
            guard let current = try await store.entry(transactionId: claimed.transactionId) else {
                throw IAPError(.storageFailure, "transaction \(claimed.transactionId) vanished from the store")
            }
            return current.deliveryState == .delivered
                ? (current.revokedAt != nil ? .revoked(current) : .alreadyDelivered(current)) : .pending(current)
        }
        next.revision = claimed.revision + 1
        if let failure {
            return .deferred(next, failure)
        }
        return revoking ? .revoked(next) : .delivered(next)
    }

    private func backoff(afterAttempts attempts: Int) -> TimeInterval {
        let nominal = retryPolicy.nominalDelay(afterAttempts: attempts)
        let spread = max(0, min(1, retryPolicy.jitter))
        guard spread > 0 else { return nominal }
        return nominal * Double.random(in: (1 - spread)...(1 + spread))
    }

    /// Whether `candidate` is newer signed data than `stored` (by `signedDate`; equal dates are not newer).
    private static func isNewer(_ candidate: TransactionPayload, than stored: TransactionPayload) -> Bool {
        guard let candidateDate = candidate.signedDate else { return false }
        guard let storedDate = stored.signedDate else { return true }
        return candidateDate > storedDate
    }

    private static func classify(_ error: any Error) -> IAPError {
        var wrapped = IAPError.wrapping(error, as: .storageFailure, "the store failed")
        if wrapped.code == .storageFailure || wrapped.code == .storageLocked {
            wrapped.isRetryable = true
        }
        return wrapped
    }
}
