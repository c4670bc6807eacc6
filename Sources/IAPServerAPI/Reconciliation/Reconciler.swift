#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

/// Compares Apple's record of a customer's purchases with the ledger and repairs the ledger in both directions:
/// delivers what Apple sold but the server never heard of (a lost order), and takes back what Apple refunded but the
/// server missed (a lost refund notification).
///
/// For one customer, the reconciler pages through Apple's transaction history and refund history (App Store Server
/// API), starting from the revisions a ``ReconciliationCheckpointStore`` kept from the last run, so that a run asks
/// only for what changed since (a saved revision that Apple refuses is dropped, and that history read whole). It
/// verifies every signed transaction with the ``Verifier``; delivers what the ledger lacks through the
/// ``DeliveryPipeline`` (idempotently: the owner comes from the ledger and the appAccountToken binding, as for a
/// notification); applies Apple's newer data to what the ledger has (both through
/// ``DeliveryPipeline/deliver(_:signedTransaction:userId:orderId:)``, which takes back a refund once); and answers a ``ReconciliationReport``. When the ledger had left more of Apple's
/// transactions unsettled than ``Configuration/alarmThreshold``, it raises the alarm.
///
/// Three ways in:
/// - one customer, by any transaction id or by user id: ``reconcile(transactionId:)``, ``reconcile(userId:)``;
/// - every customer in the ledger, with progress and a rate limit: ``reconcileLedger(progress:)``;
/// - client-driven: the app uploads every signed transaction it holds (StoreKit's `Transaction.all`):
///   ``reconcileUpload(_:userId:)``.
///
/// Safe to run again at any time, and concurrently with the pipeline and the notification processor: every
/// change goes through the pipeline's compare-and-set, so nothing is granted or taken back twice. Requests to Apple
/// are spaced by ``Configuration/requestsPerSecond`` on the injected `Swift.Clock`.
public actor Reconciler {
    /// How the reconciler runs.
    public struct Configuration: Sendable, Hashable {
        /// The alarm fires when a run finds more than this many of Apple's transactions that the ledger had not
        /// settled (``ReconciliationReport/discrepancy``). `0` alarms on any repair.
        public var alarmThreshold: Int
        /// The most App Store Server API requests per second, across every run of this reconciler; `0` or less
        /// does not pace.
        public var requestsPerSecond: Double
        /// How many purchase families one page of the ledger walk reads.
        public var ledgerPageSize: Int

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - alarmThreshold: The largest discrepancy that raises no alarm.
        ///   - requestsPerSecond: The most requests per second to Apple.
        ///   - ledgerPageSize: Families per page of the ledger walk.
        public init(alarmThreshold: Int = 0, requestsPerSecond: Double = 10, ledgerPageSize: Int = 500) {
            self.alarmThreshold = alarmThreshold
            self.requestsPerSecond = requestsPerSecond
            self.ledgerPageSize = ledgerPageSize
        }
    }

    /// The configuration.
    public nonisolated let configuration: Configuration

    private let client: AppStoreServerAPIClient
    private let verifier: any Verifier
    private let pipeline: DeliveryPipeline
    private let store: any EntitlementStore
    private let checkpoints: any ReconciliationCheckpointStore
    private let wallClock: any WallClock
    private let pacer: any RequestPacing
    private let alarm: (@Sendable (ReconciliationAlarm) async -> Void)?

    /// Creates a reconciler.
    ///
    /// - Parameters:
    ///   - client: The App Store Server API client of the app.
    ///   - verifier: Verifies what Apple answers (the same configuration as the pipeline's).
    ///   - pipeline: Delivers and takes back, over `store`.
    ///   - store: The ledger the pipeline writes.
    ///   - checkpoints: Where each customer's revisions are kept.
    ///   - configuration: Alarm threshold, rate limit, page size.
    ///   - clock: The clock the rate limit sleeps on (tests pass one that does not wait).
    ///   - wallClock: The clock of the checkpoints' dates.
    ///   - alarm: Called when a run's discrepancy exceeds the threshold.
    public init(
        client: AppStoreServerAPIClient,
        verifier: some Verifier,
        pipeline: DeliveryPipeline,
        store: some EntitlementStore,
        checkpoints: some ReconciliationCheckpointStore,
        configuration: Configuration = Configuration(),
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: any WallClock = SystemClock(),
        alarm: (@Sendable (ReconciliationAlarm) async -> Void)? = nil
    ) {
        self.client = client
        self.verifier = verifier
        self.pipeline = pipeline
        self.store = store
        self.checkpoints = checkpoints
        self.configuration = configuration
        self.wallClock = wallClock
        self.pacer = makeRequestPacer(clock: clock, requestsPerSecond: configuration.requestsPerSecond)
        self.alarm = alarm
    }

    // MARK: - One customer

    /// Reconciles the customer of a transaction with Apple's histories.
    ///
    /// The checkpoint is kept under the transaction's original transaction id as the ledger knows it (else the
    /// given id).
    ///
    /// - Parameter transactionId: Any transaction id of the customer (an original transaction id works too).
    /// - Returns: What was found and repaired.
    /// - Throws: ``IAPError`` when Apple's API or the ledger fails as a whole (`apiError` with
    ///   ``APIErrorCode/transactionIdNotFound`` for an id Apple does not know); what was repaired before stays.
    public func reconcile(transactionId: String) async throws -> ReconciliationReport {
        guard !transactionId.isEmpty else {
            throw IAPError(.invalidArgument, "reconciliation needs a transaction id")
        }
        let key = try await store.entry(transactionId: transactionId)?.originalTransactionId ?? transactionId
        var report = ReconciliationReport(customer: transactionId, customerKey: key, source: .appStoreHistory)
        var covered = Coverage()
        do {
            try await reconcileFamily(anyTransactionId: transactionId, key: key, into: &report, covered: &covered)
        } catch {
            // What was repaired before the failure stays repaired, and is alarmed on.
            await raiseAlarmIfNeeded(report)
            throw error
        }
        await raiseAlarmIfNeeded(report)
        return report
    }

    /// Reconciles a user: every purchase family the ledger holds for the user, one history request per Apple
    /// account (a family that an earlier history covered is not asked for again).
    ///
    /// - Parameter userId: The business user.
    /// - Returns: What was found and repaired, for all of the user's families.
    /// - Throws: ``IAPError`` `notFound` when the ledger has no transaction of the user (there is nothing to ask
    ///   Apple with: use ``reconcileUpload(_:userId:)``), or when Apple's API or the ledger fails as a whole.
    public func reconcile(userId: String) async throws -> ReconciliationReport {
        var families: [String] = []
        var seen = Set<String>()
        var cursor: String?
        repeat {
            let page = try await store.history(userId: userId, cursor: cursor, limit: 200)
            for entry in page.entries where seen.insert(entry.originalTransactionId).inserted {
                families.append(entry.originalTransactionId)
            }
            cursor = page.nextCursor
        } while cursor != nil
        guard !families.isEmpty else {
            throw IAPError(.notFound, "the ledger has no transaction of user '\(userId)' to ask the App Store about")
        }
        // Oldest family first: its key stays the same as the user buys more.
        families.reverse()
        var report = ReconciliationReport(customer: userId, customerKey: families[0], source: .appStoreHistory)
        var covered = Coverage()
        do {
            for family in families where try await !isCovered(family, by: covered) {
                try await reconcileFamily(anyTransactionId: family, key: family, into: &report, covered: &covered)
            }
        } catch {
            // What was repaired before the failure stays repaired, and is alarmed on.
            await raiseAlarmIfNeeded(report)
            throw error
        }
        await raiseAlarmIfNeeded(report)
        return report
    }

    // MARK: - The app's upload

    /// Client-driven reconciliation: verifies every signed transaction an app uploaded for a user (StoreKit's
    /// `Transaction.all`, as JWS) and delivers what the ledger lacks to that user.
    ///
    /// Signed data that does not verify — forged, for another app (bundle id) or environment — is reported in
    /// ``ReconciliationReport/rejectedSignatures`` and changes nothing. A transaction that belongs to another user
    /// (by appAccountToken or ledger) is reported in ``ReconciliationReport/stillFailing`` with
    /// `ownershipConflict`. No request goes to Apple and no checkpoint is written.
    ///
    /// - Parameters:
    ///   - signedTransactions: The JWS strings the app holds.
    ///   - userId: The user the app is signed in as.
    /// - Returns: What was found and repaired.
    public func reconcileUpload(_ signedTransactions: [String], userId: String) async -> ReconciliationReport {
        var report = ReconciliationReport(customer: userId, customerKey: nil, source: .clientUpload)
        var seen = Set<String>()
        var unrecorded = false
        for (index, signed) in signedTransactions.enumerated() {
            guard let transaction = await verified(signed, index: index, into: &report) else { continue }
            await settle(
                transaction,
                signed: signed,
                index: index,
                userId: userId,
                into: &report,
                seen: &seen,
                unrecorded: &unrecorded
            )
        }
        await raiseAlarmIfNeeded(report)
        return report
    }

    // MARK: - The whole ledger

    /// Reconciles every customer of the ledger: each purchase family the ledger knows, one history request per
    /// Apple account, paced by ``Configuration/requestsPerSecond``.
    ///
    /// Families are walked in the order of their first purchase with
    /// ``EntitlementStore/originalTransactionIds(cursor:limit:)``; a family that an earlier customer's history
    /// already covered is skipped. A family whose reconciliation fails as a whole (Apple refused it) is recorded in
    /// ``LedgerReconciliationSummary/failedCustomers`` and the walk goes on.
    ///
    /// - Parameter progress: Called after each family with done/total.
    /// - Returns: The totals.
    /// - Throws: ``IAPError`` when the ledger cannot be listed, or `cancelled`.
    public func reconcileLedger(
        progress: (@Sendable (ReconciliationProgress) async -> Void)? = nil
    ) async throws -> LedgerReconciliationSummary {
        var families: [String] = []
        var cursor: String?
        repeat {
            let page = try await store.originalTransactionIds(
                cursor: cursor,
                limit: max(1, configuration.ledgerPageSize)
            )
            families += page.originalTransactionIds
            cursor = page.nextCursor
        } while cursor != nil
        var summary = LedgerReconciliationSummary()
        summary.families = families.count
        var covered = Coverage()
        for (index, family) in families.enumerated() {
            if Task.isCancelled {
                throw IAPError(.cancelled, "the reconciliation of the ledger was cancelled")
            }
            if (try? await isCovered(family, by: covered)) == true {
                summary.coveredByOthers += 1
            } else {
                var report = ReconciliationReport(customer: family, customerKey: family, source: .appStoreHistory)
                do {
                    try await reconcileFamily(anyTransactionId: family, key: family, into: &report, covered: &covered)
                    summary.add(report)
                    if await raiseAlarmIfNeeded(report) {
                        summary.alarms += 1
                    }
                } catch let error as IAPError where error.code == .cancelled {
                    throw error
                } catch is CancellationError {
                    throw IAPError(.cancelled, "the reconciliation of the ledger was cancelled")
                } catch {
                    // What the family repaired before it failed stays repaired: count it, and alarm on it.
                    summary.count(report)
                    if await raiseAlarmIfNeeded(report) {
                        summary.alarms += 1
                    }
                    summary.failedCustomers[family] = IAPError.wrapping(
                        error,
                        as: .internalError,
                        "reconciliation failed"
                    )
                }
            }
            await progress?(ReconciliationProgress(done: index + 1, total: families.count, current: family))
        }
        return summary
    }

    // MARK: - Steps

    /// The Apple accounts and purchase families that a run's history requests already answered for: one history
    /// request answers for every purchase of one Apple account in the app.
    private struct Coverage {
        /// Original transaction ids seen in Apple's answers (or asked for).
        var originals: Set<String> = []
        /// `appTransactionId`s (one per Apple account and app) of the families asked for and of Apple's answers.
        var accounts: Set<String> = []
    }

    /// Whether a family needs no request of its own: Apple answered for it, or for its Apple account, already.
    private func isCovered(_ family: String, by coverage: Coverage) async throws -> Bool {
        if coverage.originals.contains(family) {
            return true
        }
        guard !coverage.accounts.isEmpty,
            let account = try await store.entries(originalTransactionId: family).first?.transaction.appTransactionId
        else {
            return false
        }
        return coverage.accounts.contains(account)
    }

    /// Reads pages until the last one, one request per turn of the pacer, and settles every transaction that
    /// verifies; the originals and Apple accounts it names go into `coverage`.
    private func settlePages(
        _ nextPage: () async throws -> (signedTransactions: [String], hasMore: Bool)?,
        into report: inout ReconciliationReport,
        coverage: inout Coverage,
        seen: inout Set<String>,
        unrecorded: inout Bool
    ) async throws {
        var more = true
        while more {
            try await pacer.waitForTurn()
            guard let page = try await nextPage() else { break }
            report.requests += 1
            for (index, signed) in page.signedTransactions.enumerated() {
                guard let transaction = await verified(signed, index: index, into: &report) else { continue }
                if let original = transaction.originalTransactionId {
                    coverage.originals.insert(original)
                }
                if let account = transaction.appTransactionId {
                    coverage.accounts.insert(account)
                }
                await settle(
                    transaction,
                    signed: signed,
                    index: index,
                    userId: nil,
                    into: &report,
                    seen: &seen,
                    unrecorded: &unrecorded
                )
            }
            more = page.hasMore
        }
    }

    /// Reads a family's transaction and refund histories from its checkpoint, settles each transaction, and saves
    /// the new revisions when everything Apple answered is recorded.
    ///
    /// `covered` grows only once both histories were read to their end: a family that failed covers nothing.
    private func reconcileFamily(
        anyTransactionId: String,
        key: String,
        into report: inout ReconciliationReport,
        covered: inout Coverage
    ) async throws {
        var coverage = covered
        coverage.originals.insert(key)
        if let account = try await store.entries(originalTransactionId: key).first?.transaction.appTransactionId {
            coverage.accounts.insert(account)
        }
        let checkpoint = try await checkpoints.checkpoint(customerKey: key)
        if report.startRevision == nil {
            report.startRevision = checkpoint?.historyRevision
        }
        var seen = Set<String>()
        var unrecorded = false
        let rejectedBefore = report.rejectedSignatures.count

        // A saved revision that Apple refuses (invalidRequestRevision) would fail every run: read the whole history
        // instead, once.
        var history = client.transactionHistory(
            anyTransactionId: anyTransactionId,
            revision: checkpoint?.historyRevision
        )
        transactionPages: while true {
            var pages = history.makeAsyncIterator()
            do {
                try await settlePages(
                    { try await pages.next().map { ($0.signedTransactions ?? [], $0.hasMore == true) } },
                    into: &report,
                    coverage: &coverage,
                    seen: &seen,
                    unrecorded: &unrecorded
                )
                break transactionPages
            } catch let error as IAPError where Self.refusesRevision(error, from: history.startRevision) {
                if report.startRevision == history.startRevision {
                    report.startRevision = nil
                }
                history = client.transactionHistory(anyTransactionId: anyTransactionId, revision: nil)
            }
        }

        var refunds = client.refundHistory(anyTransactionId: anyTransactionId, revision: checkpoint?.refundRevision)
        refundPages: while true {
            var pages = refunds.makeAsyncIterator()
            do {
                // Refunds name transactions of families the transaction history answered for already.
                var refundCoverage = Coverage()
                try await settlePages(
                    { try await pages.next().map { ($0.signedTransactions ?? [], $0.hasMore == true) } },
                    into: &report,
                    coverage: &refundCoverage,
                    seen: &seen,
                    unrecorded: &unrecorded
                )
                break refundPages
            } catch let error as IAPError where Self.refusesRevision(error, from: refunds.startRevision) {
                refunds = client.refundHistory(anyTransactionId: anyTransactionId, revision: nil)
            }
        }
        covered = coverage

        // Go on from here next time only if nothing Apple answered is missing from the ledger: a transaction that
        // was not recorded, or data that did not verify, must be read again.
        guard !unrecorded, report.rejectedSignatures.count == rejectedBefore else {
            report.checkpointSaved = false
            return
        }
        try await checkpoints.saveCheckpoint(
            ReconciliationCheckpoint(
                customerKey: key,
                historyRevision: history.lastRevision,
                refundRevision: refunds.lastRevision,
                reconciledAt: wallClock.now
            )
        )
        report.checkpointSaved = true
    }

    /// Whether Apple refused a history because of the saved revision it started from.
    private static func refusesRevision(_ error: IAPError, from startRevision: String?) -> Bool {
        startRevision != nil && error.code == .apiError
            && error.apiErrorCode == APIErrorCode.invalidRequestRevision.rawValue
    }

    /// The verified transaction, or `nil` after recording the rejection.
    private func verified(_ signed: String, index: Int, into report: inout ReconciliationReport) async
        -> TransactionPayload?
    {
        do {
            return try await verifier.verifyTransaction(signed)
        } catch let error as IAPError {
            report.rejectedSignatures.append(.init(index: index, error: error))
            return nil
        } catch {
            // Not a verdict on the data (a custom verifier's network failure): as the pipeline says of it.
            report.rejectedSignatures.append(
                .init(
                    index: index,
                    error: IAPError(.internalError, "verification did not finish: \(error)", isRetryable: true)
                )
            )
            return nil
        }
    }

    /// Compares one verified transaction with the ledger and repairs what differs.
    private func settle(
        _ transaction: TransactionPayload,
        signed: String,
        index: Int,
        userId: String?,
        into report: inout ReconciliationReport,
        seen: inout Set<String>,
        unrecorded: inout Bool
    ) async {
        guard let transactionId = transaction.transactionId, !transactionId.isEmpty else {
            report.rejectedSignatures.append(
                .init(index: index, error: IAPError(.malformedSignedData, "a signed transaction has no transactionId"))
            )
            return
        }
        // The refund history repeats what the transaction history showed, signed the same way.
        guard seen.insert(transactionId).inserted else { return }
        report.appleTransactions.append(transactionId)
        let existing: LedgerEntry?
        do {
            existing = try await store.entry(transactionId: transactionId)
        } catch {
            unrecorded = true
            report.stillFailing.append(
                .init(
                    transactionId: transactionId,
                    error: IAPError.wrapping(error, as: .storageFailure, "the store failed")
                )
            )
            return
        }
        if let existing, Self.isSettled(existing, as: transaction), userId == nil || existing.userId == userId {
            report.alreadyDelivered.append(transactionId)
            return
        }
        switch await pipeline.deliver(transaction, signedTransaction: signed, userId: userId) {
        case .delivered:
            report.deliveredNow.append(transactionId)
        case .revoked:
            report.revokedNow.append(transactionId)
        case .alreadyDelivered:
            report.alreadyDelivered.append(transactionId)
        case .awaitingOwner:
            report.awaitingOwner.append(transactionId)
        case .pending:
            report.stillFailing.append(
                .init(
                    transactionId: transactionId,
                    error: IAPError(
                        .fulfillmentFailed,
                        "transaction \(transactionId) is being delivered by another deliverer",
                        isRetryable: true
                    )
                )
            )
        case .deferred(_, let error):
            report.stillFailing.append(.init(transactionId: transactionId, error: error))
        case .rejected(let error):
            // Not recorded, or Apple's newer data (a refund, a reversal) not applied to what the ledger has: the
            // next run must see it again.
            unrecorded = true
            report.stillFailing.append(.init(transactionId: transactionId, error: error))
        }
    }

    /// Whether the ledger already reflects what Apple says of a transaction: granted and not revoked, or revoked
    /// and taken back, and settled.
    private static func isSettled(_ entry: LedgerEntry, as transaction: TransactionPayload) -> Bool {
        guard entry.deliveryState == .delivered else { return false }
        return (transaction.revocationDate != nil) == (entry.revokedAt != nil)
    }

    /// Calls the alarm when the report's discrepancy exceeds the threshold.
    @discardableResult
    private func raiseAlarmIfNeeded(_ report: ReconciliationReport) async -> Bool {
        guard report.discrepancy > configuration.alarmThreshold else { return false }
        let apple = report.appleTransactions.count
        let settled = apple - report.discrepancy
        await alarm?(
            ReconciliationAlarm(
                customer: report.customer,
                appleCount: apple,
                deliveredCount: settled,
                difference: report.discrepancy,
                threshold: configuration.alarmThreshold,
                report: report
            )
        )
        return true
    }
}
