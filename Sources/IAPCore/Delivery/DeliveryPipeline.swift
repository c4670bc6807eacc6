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
    /// Who owns a transaction that carries an appAccountToken no user has claimed, when no user is given
    /// (the App Store's notification arrived before the app's submission).
    public enum UnclaimedTokenPolicy: Sendable, Hashable {
        /// Record it as ``DeliveryState/awaitingOwner`` and grant nothing until a user presents it.
        case awaitOwner
        /// The token itself is the user (for ledgers whose users are their appAccountTokens).
        case tokenIsUser
    }

    private let verifier: any Verifier
    private let catalog: any ProductCatalog
    private let store: any EntitlementStore
    private let hook: any FulfillmentHook
    private let clock: any WallClock
    /// The retry policy.
    public let retryPolicy: RetryPolicy
    /// Who owns a transaction whose appAccountToken no user has claimed.
    public let unclaimedTokenPolicy: UnclaimedTokenPolicy

    /// Creates a pipeline.
    ///
    /// - Parameters:
    ///   - verifier: Verifies signed transactions.
    ///   - catalog: What the business sells.
    ///   - store: The durable ledger.
    ///   - hook: The integrator's grant and revoke code.
    ///   - clock: The wall clock for claims, retries and timestamps.
    ///   - retryPolicy: How failed hooks are retried.
    ///   - unclaimedTokenPolicy: Who owns a transaction whose appAccountToken no user has claimed.
    public init(
        verifier: some Verifier,
        catalog: some ProductCatalog,
        store: some EntitlementStore,
        hook: some FulfillmentHook,
        clock: some WallClock = SystemClock(),
        retryPolicy: RetryPolicy = RetryPolicy(),
        unclaimedTokenPolicy: UnclaimedTokenPolicy = .awaitOwner
    ) {
        self.verifier = verifier
        self.catalog = catalog
        self.store = store
        self.hook = hook
        self.clock = clock
        self.retryPolicy = retryPolicy.validated()
        self.unclaimedTokenPolicy = unclaimedTokenPolicy
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
        } catch let error as IAPError {
            return .rejected(error)
        } catch {
            // Not a verdict on the data (a custom verifier's network failure, a cancellation): try again later.
            return .rejected(IAPError(.internalError, "verification did not finish: \(error)", isRetryable: true))
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
            let claim = try await resolveOwner(of: transaction, transactionId: transactionId, requested: userId)
            var candidate = LedgerEntry(
                transaction: transaction,
                transactionId: transactionId,
                originalTransactionId: transaction.originalTransactionId ?? transactionId,
                userId: claim.owner,
                productId: productId,
                orderId: orderId,
                recordedAt: clock.now
            )
            if claim.awaitingOwner {
                candidate.deliveryState = .awaitingOwner
            }
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
                entry = try await adopt(existing, by: claim, transactionId: transactionId)
            }
            // Bind only once the ledger agreed the transaction is this user's: a rejected claim binds nothing.
            if let token = claim.token, !claim.awaitingOwner, claim.owner != token {
                if case .conflict(let holder) = try await store.bind(appAccountToken: token, to: claim.owner) {
                    // Another user bound the token between our check and our insert: the first binding
                    // wins, so the purchase is theirs.
                    try await hand(entry, to: holder)
                    throw IAPError(
                        .ownershipConflict,
                        "the appAccountToken of transaction \(transactionId) belongs to another user ('\(holder)'), "
                            + "not '\(claim.owner)'"
                    )
                }
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

    /// The owner recorded for a transaction nobody can be named for yet: `unowned:<transactionId>`.
    public static let unownedPrefix = "unowned:"

    /// Who a transaction is for, decided without writing anything.
    private struct OwnerClaim {
        var owner: String
        var token: String?
        var awaitingOwner: Bool
    }

    private func resolveOwner(of transaction: TransactionPayload, transactionId: String, requested: String?)
        async throws -> OwnerClaim
    {
        if let requested, requested.isEmpty {
            throw IAPError(.invalidArgument, "the user id is empty")
        }
        var token: String?
        if let rawToken = transaction.appAccountToken, !rawToken.isEmpty {
            guard let normalized = AppAccountToken.normalized(rawToken) else {
                throw IAPError(.invalidArgument, "the appAccountToken '\(rawToken)' is not a UUID")
            }
            token = normalized
        }
        var bound: String?
        if let token {
            bound = try await store.user(forAppAccountToken: token)
        }
        // The owner of the purchase this one continues (a renewal, an upgrade), unless that is itself
        // still waiting for its owner.
        let continued = try await owner(ofOriginal: transaction.originalTransactionId, token: token)

        if let requested {
            if let bound, bound != requested {
                throw IAPError(
                    .ownershipConflict,
                    "the appAccountToken of transaction \(transactionId) belongs to another user ('\(bound)'), "
                        + "not '\(requested)'"
                )
            }
            if let continued, continued != requested {
                throw IAPError(
                    .ownershipConflict,
                    "transaction \(transactionId) continues a purchase of another user ('\(continued)'), "
                        + "not '\(requested)'"
                )
            }
            return OwnerClaim(owner: requested, token: token, awaitingOwner: false)
        }
        if let bound {
            return OwnerClaim(owner: bound, token: token, awaitingOwner: false)
        }
        if let continued {
            return OwnerClaim(owner: continued, token: token, awaitingOwner: false)
        }
        guard let token else {
            // Nobody can be named yet (a notification about a purchase the app never reported): record it, so a
            // refund is never lost, and give it to the first user who presents it.
            return OwnerClaim(owner: Self.unownedPrefix + transactionId, token: nil, awaitingOwner: true)
        }
        return OwnerClaim(owner: token, token: token, awaitingOwner: unclaimedTokenPolicy == .awaitOwner)
    }

    /// The stored entry, once its owner is settled: a transaction waiting for its owner is given to the
    /// user who presents it with its token; anyone else's claim on a recorded transaction is rejected.
    private func adopt(_ existing: LedgerEntry, by claim: OwnerClaim, transactionId: String) async throws
        -> LedgerEntry
    {
        if existing.userId == claim.owner {
            return existing
        }
        // A placeholder owner (the token itself, or `unowned:<id>`) gives way to the first user who presents the
        // transaction, whatever became of it meanwhile (a refund may have settled it already).
        let placeholder =
            existing.deliveryState == .awaitingOwner || existing.userId.hasPrefix(Self.unownedPrefix)
        let claimable =
            claim.token == existing.userId
            || (claim.token == nil && existing.userId == Self.unownedPrefix + existing.transactionId)
        if placeholder, !claim.awaitingOwner, claimable {
            var current = existing
            for _ in 0..<8 {
                var adopted = current
                adopted.userId = claim.owner
                if current.deliveryState == .awaitingOwner {
                    adopted.deliveryState = .pending
                    adopted.nextAttemptAt = nil
                }
                if try await store.replace(adopted, ifRevision: current.revision) {
                    adopted.revision = current.revision + 1
                    return adopted
                }
                guard let reloaded = try await store.entry(transactionId: transactionId) else {
                    throw IAPError(.storageFailure, "transaction \(transactionId) vanished from the store")
                }
                if reloaded.userId == claim.owner {
                    return reloaded
                }
                current = reloaded
            }
        }
        throw IAPError(
            .ownershipConflict,
            "transaction \(transactionId) is recorded for another user; it cannot be claimed by '\(claim.owner)'"
        )
    }

    private func hand(_ entry: LedgerEntry, to holder: String) async throws {
        var current = entry
        for _ in 0..<8 where current.userId != holder {
            var moved = current
            moved.userId = holder
            if try await store.replace(moved, ifRevision: current.revision) {
                return
            }
            current = try await reload(entry.transactionId)
        }
    }

    private func owner(ofOriginal originalTransactionId: String?, token: String?) async throws -> String? {
        guard let originalTransactionId, !originalTransactionId.isEmpty else { return nil }
        let family = try await store.entries(originalTransactionId: originalTransactionId)
        return family.first { $0.deliveryState != .awaitingOwner && !$0.userId.hasPrefix(Self.unownedPrefix) }?.userId
    }

    // MARK: - The state machine

    /// What an entry still needs from the hook.
    private static func pendingAction(_ entry: LedgerEntry) -> Delivery.Action? {
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
    private func isClaimed(_ entry: LedgerEntry, at now: Date) -> Bool {
        entry.deliveryState == .pending && (entry.nextAttemptAt.map { $0 > now } ?? false)
    }

    /// Sets the delivery fields from what the entry needs; a claim in progress is left alone.
    private func normalize(_ entry: inout LedgerEntry, now: Date) {
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
            let now = clock.now
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
            normalize(&updated, now: now)
            if try await store.replace(updated, ifRevision: current.revision) {
                updated.revision = current.revision + 1
                return updated
            }
            current = try await reload(current.transactionId)
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
            let now = clock.now
            if current.deliveryState == .awaitingOwner {
                return .pending(current)
            }
            guard let action = Self.pendingAction(current) else {
                if current.deliveryState != .delivered, !isClaimed(current, at: now) {
                    var settled = current
                    normalize(&settled, now: now)
                    if try await store.replace(settled, ifRevision: current.revision) {
                        settled.revision = current.revision + 1
                        current = settled
                    } else {
                        current = try await reload(current.transactionId)
                        continue
                    }
                }
                return Self.finished(current)
            }
            switch current.deliveryState {
            case .deadLettered:
                return .deferred(current, Self.deadLetterError(current))
            case .retrying:
                if let due = current.nextAttemptAt, due > now {
                    // An early resubmission does not skip the backoff.
                    return .deferred(
                        current,
                        IAPError(.fulfillmentFailed, current.lastError ?? "a retry is scheduled", isRetryable: true)
                    )
                }
            case .pending:
                if isClaimed(current, at: now) {
                    return .pending(current)
                }
            case .delivered, .awaitingOwner:
                break
            }
            var claimed = current
            if current.deliveryAttempts >= retryPolicy.maximumAttempts {
                claimed.deliveryState = .deadLettered
                claimed.nextAttemptAt = nil
                if try await store.replace(claimed, ifRevision: current.revision) {
                    claimed.revision = current.revision + 1
                    return .deferred(claimed, Self.deadLetterError(claimed))
                }
                current = try await reload(current.transactionId)
                continue
            }
            claimed.deliveryState = .pending
            claimed.nextAttemptAt = now.addingTimeInterval(retryPolicy.claimDuration.timeInterval)
            claimed.deliveryAttempts += 1
            if action == .grant {
                claimed.grantAttempted = true
            }
            if try await store.replace(claimed, ifRevision: current.revision) {
                claimed.revision = current.revision + 1
                return try await runHook(claimed, action: action)
            }
            current = try await reload(current.transactionId)
        }
        return .pending(current)
    }

    private func runHook(_ claimed: LedgerEntry, action: Delivery.Action) async throws -> DeliveryOutcome {
        var failure: IAPError?
        var grantedUnits = claimed.grantedUnits
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
                orderId: claimed.orderId
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
        return try await record(action, failure: failure, grantedUnits: grantedUnits, claimed: claimed)
    }

    /// Records what a hook call did. A success is never lost: if the entry changed while the hook ran (a
    /// refund arrived, or another deliverer took over an expired claim), the fact is merged into the
    /// current entry and whatever it needs next is done.
    private func record(
        _ action: Delivery.Action,
        failure: IAPError?,
        grantedUnits: Int64?,
        claimed: LedgerEntry
    ) async throws -> DeliveryOutcome {
        var current = claimed
        for _ in 0..<8 {
            let now = clock.now
            let ours =
                current.deliveryState == .pending && current.nextAttemptAt == claimed.nextAttemptAt
                && current.deliveryAttempts == claimed.deliveryAttempts
            let sameGeneration = current.grantGeneration == claimed.grantGeneration
            var next = current
            if let failure {
                guard ours else {
                    // Another deliverer took over; its own call decides.
                    return .pending(current)
                }
                next.lastError = failure.message
                if next.deliveryAttempts >= retryPolicy.maximumAttempts {
                    next.deliveryState = .deadLettered
                    next.nextAttemptAt = nil
                } else {
                    next.deliveryState = .retrying
                    next.nextAttemptAt = now.addingTimeInterval(retryPolicy.delay(afterAttempts: next.deliveryAttempts))
                }
            } else {
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
            }
            if try await store.replace(next, ifRevision: current.revision) {
                next.revision = current.revision + 1
                if let failure {
                    return .deferred(next, failure)
                }
                if Self.pendingAction(next) != nil, next.deliveryState == .pending, !isClaimed(next, at: now) {
                    // Something is still owed (a refund arrived while the grant ran): do it now.
                    return try await settle(next)
                }
                return Self.finished(next, justDone: action)
            }
            current = try await reload(claimed.transactionId)
        }
        throw IAPError(
            .storageFailure,
            "transaction \(claimed.transactionId) kept changing while its hook ran; the next drain settles it",
            isRetryable: true
        )
    }

    private static func finished(_ entry: LedgerEntry, justDone action: Delivery.Action? = nil) -> DeliveryOutcome {
        if entry.revokedAt != nil {
            return .revoked(entry)
        }
        if entry.deliveryState == .awaitingOwner {
            return .pending(entry)
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

    private static func classify(_ error: any Error) -> IAPError {
        var wrapped = IAPError.wrapping(error, as: .storageFailure, "the store failed")
        if wrapped.code == .storageFailure || wrapped.code == .storageLocked {
            wrapped.isRetryable = true
        }
        return wrapped
    }
}
