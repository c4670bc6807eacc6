#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

/// Compares Apple's record of a customer's purchases with the ledger and repairs the ledger in both directions:
/// delivers what Apple sold but the server never heard of (a lost order), takes back what Apple refunded but the
/// server missed (a lost refund notification), and records the renewal state of each subscription (a lost
/// `DID_FAIL_TO_RENEW` would otherwise end a subscriber's access at the expiry date, in the middle of the billing
/// grace period).
///
/// For one customer, the reconciler pages through Apple's transaction history and refund history (App Store Server
/// API), starting from the revisions a ``ReconciliationCheckpointStore`` kept from the last run, so that a run asks
/// only for what changed since (a saved revision that Apple refuses is dropped, and that history read whole). It
/// verifies every signed transaction with the ``Verifier``; delivers what the ledger lacks through the
/// ``DeliveryPipeline`` (idempotently: the owner comes from the ledger and the appAccountToken binding, as for a
/// notification); applies Apple's newer data to what the ledger has (both through
/// ``DeliveryPipeline/deliver(_:signedTransaction:userId:orderId:)``, which takes back a refund once). For a customer with an
/// auto-renewable subscription it then asks Get All Subscription Statuses and records, for each subscription, the
/// newest signed transaction (through the pipeline) and renewal info (``EntitlementStore/storeRenewalInfo(_:)``):
/// newer `signedDate` wins, so nothing goes back in time. It answers a ``ReconciliationReport``, and raises the alarm
/// when the ledger had missed more than ``Configuration/alarmThreshold`` things (``ReconciliationReport/discrepancies``).
///
/// Each customer is asked of the App Store Server API of its own environment: the ledger keeps each transaction's
/// environment, and ``AppStoreServerAPIClients`` holds one client per environment (an App Review purchase on a
/// production server is a Sandbox transaction, which only the Sandbox API knows). A transaction the ledger does not
/// know is asked of each client in turn, first to last, until one knows it.
///
/// Four ways in:
/// - one customer, by any transaction id or by user id: ``reconcile(transactionId:)``, ``reconcile(userId:)``;
/// - every customer in the ledger, with progress and a rate limit: ``reconcileLedger(progress:)``;
/// - every subscription the ledger believes live (active, in its grace period, in billing retry, or due to renew),
///   by its statuses only, cheap enough to run hourly: ``reconcileSubscriptions(progress:)``;
/// - client-driven: the app uploads every signed transaction it holds (StoreKit's `Transaction.all`):
///   ``reconcileUpload(_:userId:)``.
///
/// Safe to run again at any time, and concurrently with the pipeline and the notification processor: every
/// change goes through the pipeline's compare-and-set, so nothing is granted or taken back twice. Requests to Apple
/// are spaced by ``Configuration/requestsPerSecond`` on the injected `Swift.Clock`.
public actor Reconciler {
    /// How the reconciler runs.
    public struct Configuration: Sendable, Hashable {
        /// The alarm fires when a run finds that the ledger had missed more than this many things
        /// (``ReconciliationReport/discrepancy``). `0` alarms on anything missed.
        public var alarmThreshold: Int
        /// The most App Store Server API requests per second, across every run of this reconciler; `0` or less
        /// does not pace.
        public var requestsPerSecond: Double
        /// How many purchase families one page of the ledger walk reads.
        public var ledgerPageSize: Int
        /// Whether a customer with an auto-renewable subscription is also asked Get All Subscription Statuses, to
        /// record the newest renewal info and transaction of each subscription. On by default.
        public var resyncsSubscriptions: Bool
        /// How long after its expiry date a subscription whose renewal the ledger expected (auto-renew on) still
        /// counts as live: the ledger cannot tell a lost `DID_RENEW` or `DID_FAIL_TO_RENEW` from an expiry until it
        /// asks. 60 days by default, the longest billing retry.
        public var renewalOverdueWindow: Duration

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - alarmThreshold: The most discrepancies that raise no alarm.
        ///   - requestsPerSecond: The most requests per second to Apple.
        ///   - ledgerPageSize: Families per page of the ledger walk.
        ///   - resyncsSubscriptions: Whether subscription statuses are asked too.
        ///   - renewalOverdueWindow: How long an overdue renewal keeps a subscription live.
        public init(
            alarmThreshold: Int = 0,
            requestsPerSecond: Double = 10,
            ledgerPageSize: Int = 500,
            resyncsSubscriptions: Bool = true,
            renewalOverdueWindow: Duration = .seconds(60 * 86_400)
        ) {
            self.alarmThreshold = alarmThreshold
            self.requestsPerSecond = requestsPerSecond
            self.ledgerPageSize = ledgerPageSize
            self.resyncsSubscriptions = resyncsSubscriptions
            self.renewalOverdueWindow = renewalOverdueWindow
        }
    }

    /// The configuration.
    public nonisolated let configuration: Configuration

    private let clients: AppStoreServerAPIClients
    private let verifier: any Verifier
    private let pipeline: DeliveryPipeline
    private let store: any EntitlementStore
    private let checkpoints: any ReconciliationCheckpointStore
    private let wallClock: any WallClock
    private let pacer: any RequestPacing
    private let events: any EventSink
    private let alarm: (@Sendable (ReconciliationAlarm) async -> Void)?

    /// Creates a reconciler.
    ///
    /// - Parameters:
    ///   - clients: The App Store Server API clients of the app, one per environment its ledger holds.
    ///   - verifier: Verifies what Apple answers (the same configuration as the pipeline's).
    ///   - pipeline: Delivers and takes back, over `store`.
    ///   - store: The ledger the pipeline writes.
    ///   - checkpoints: Where each customer's revisions are kept.
    ///   - configuration: Alarm threshold, rate limit, page size, subscription statuses.
    ///   - clock: The clock the rate limit sleeps on (tests pass one that does not wait).
    ///   - wallClock: The clock of the checkpoints' dates, of what counts as live, and of events.
    ///   - events: Where each customer's visit, each discrepancy, each failure and each signed data that did not
    ///     verify is reported (`reconciliation.customer`, `reconciliation.discrepancy`, `reconciliation.failed`,
    ///     `reconciliation.rejected`), and each alarm (`reconciliation.alarm`).
    ///   - alarm: Called when a run's discrepancies exceed the threshold.
    public init(
        clients: AppStoreServerAPIClients,
        verifier: some Verifier,
        pipeline: DeliveryPipeline,
        store: some EntitlementStore,
        checkpoints: some ReconciliationCheckpointStore,
        configuration: Configuration = Configuration(),
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: any WallClock = SystemClock(),
        events: any EventSink = DiscardingEventSink(),
        alarm: (@Sendable (ReconciliationAlarm) async -> Void)? = nil
    ) {
        self.clients = clients
        self.verifier = verifier
        self.pipeline = pipeline
        self.store = store
        self.checkpoints = checkpoints
        self.configuration = configuration
        self.wallClock = wallClock
        self.pacer = makeRequestPacer(clock: clock, requestsPerSecond: configuration.requestsPerSecond)
        self.events = events
        self.alarm = alarm
    }

    /// Creates a reconciler with one App Store Server API client: for a ledger of one environment.
    ///
    /// - Parameters:
    ///   - client: The App Store Server API client of the app.
    ///   - verifier: Verifies what Apple answers (the same configuration as the pipeline's).
    ///   - pipeline: Delivers and takes back, over `store`.
    ///   - store: The ledger the pipeline writes.
    ///   - checkpoints: Where each customer's revisions are kept.
    ///   - configuration: Alarm threshold, rate limit, page size, subscription statuses.
    ///   - clock: The clock the rate limit sleeps on (tests pass one that does not wait).
    ///   - wallClock: The clock of the checkpoints' dates, of what counts as live, and of events.
    ///   - events: Where visits, discrepancies and failures are reported.
    ///   - alarm: Called when a run's discrepancies exceed the threshold.
    public init(
        client: AppStoreServerAPIClient,
        verifier: some Verifier,
        pipeline: DeliveryPipeline,
        store: some EntitlementStore,
        checkpoints: some ReconciliationCheckpointStore,
        configuration: Configuration = Configuration(),
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: any WallClock = SystemClock(),
        events: any EventSink = DiscardingEventSink(),
        alarm: (@Sendable (ReconciliationAlarm) async -> Void)? = nil
    ) {
        self.init(
            clients: AppStoreServerAPIClients(client),
            verifier: verifier,
            pipeline: pipeline,
            store: store,
            checkpoints: checkpoints,
            configuration: configuration,
            clock: clock,
            wallClock: wallClock,
            events: events,
            alarm: alarm
        )
    }

    // MARK: - One customer

    /// Reconciles the customer of a transaction with Apple's histories, and with the statuses of the customer's
    /// subscriptions.
    ///
    /// The checkpoint is kept under the transaction's original transaction id as the ledger knows it (else the
    /// given id).
    ///
    /// - Parameter transactionId: Any transaction id of the customer (an original transaction id works too).
    /// - Returns: What was found and repaired.
    /// - Throws: ``IAPError`` when Apple's API or the ledger fails as a whole (`apiError` with
    ///   ``APIErrorCode/transactionIdNotFound`` for an id no client's environment knows; `environmentMismatch` for a
    ///   transaction of an environment without a client); what was repaired before stays.
    public func reconcile(transactionId: String) async throws -> ReconciliationReport {
        guard !transactionId.isEmpty else {
            throw IAPError(.invalidArgument, "reconciliation needs a transaction id")
        }
        let key = try await store.entry(transactionId: transactionId)?.originalTransactionId ?? transactionId
        var report = ReconciliationReport(customer: transactionId, customerKey: key, source: .appStoreHistory)
        var covered = Coverage()
        try await visit(into: &report) { report in
            try await reconcileFamily(
                anyTransactionId: transactionId,
                key: key,
                into: &report,
                covered: &covered,
                statuses: .everySubscription
            )
        }
        return report
    }

    /// Reconciles a user: every purchase family the ledger holds for the user, one history request per Apple
    /// account (a family that an earlier history covered is not asked for again), and the statuses of the user's
    /// subscriptions.
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
        try await visit(into: &report) { report in
            for family in families {
                if try await !isCovered(family, by: covered) {
                    try await reconcileFamily(
                        anyTransactionId: family,
                        key: family,
                        into: &report,
                        covered: &covered,
                        statuses: .everySubscription
                    )
                } else if try await needsStatuses(family, covered: covered, scope: .everySubscription) {
                    try await resyncStatuses(of: family, into: &report, covered: &covered)
                }
            }
        }
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
        let started = wallClock.now
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
        await finish(report, started: started, error: nil)
        return report
    }

    // MARK: - The whole ledger

    /// Reconciles every customer of the ledger: each purchase family the ledger knows, one history request per
    /// Apple account, paced by ``Configuration/requestsPerSecond``; and, for subscriptions the ledger believes live
    /// (see ``reconcileSubscriptions(progress:)``), their statuses.
    ///
    /// Families are walked in the order of their first purchase with
    /// ``EntitlementStore/originalTransactionIds(cursor:limit:)``; a family that an earlier customer's history
    /// already covered is skipped (but a live subscription among them still has its statuses asked, once per Apple
    /// account). A family whose reconciliation fails as a whole (Apple refused it) is recorded in
    /// ``LedgerReconciliationSummary/failedCustomers`` and the walk goes on.
    ///
    /// - Parameter progress: Called after each family with done/total.
    /// - Returns: The totals.
    /// - Throws: ``IAPError`` when the ledger cannot be listed, or `cancelled`.
    public func reconcileLedger(
        progress: (@Sendable (ReconciliationProgress) async -> Void)? = nil
    ) async throws -> LedgerReconciliationSummary {
        let families = try await allFamilies()
        var summary = LedgerReconciliationSummary()
        summary.families = families.count
        var covered = Coverage()
        for (index, family) in families.enumerated() {
            if Task.isCancelled {
                throw IAPError(.cancelled, "the reconciliation of the ledger was cancelled")
            }
            var report = ReconciliationReport(customer: family, customerKey: family, source: .appStoreHistory)
            let historyCovered = (try? await isCovered(family, by: covered)) == true
            var statusesOnly = false
            if historyCovered {
                statusesOnly = (try? await needsStatuses(family, covered: covered, scope: .liveSubscriptions)) == true
            }
            if historyCovered && !statusesOnly {
                summary.coveredByOthers += 1
            } else {
                try await walkStep(family, into: &report, summary: &summary) { report in
                    if statusesOnly {
                        try await resyncStatuses(of: family, into: &report, covered: &covered)
                    } else {
                        try await reconcileFamily(
                            anyTransactionId: family,
                            key: family,
                            into: &report,
                            covered: &covered,
                            statuses: .liveSubscriptions
                        )
                    }
                }
            }
            await progress?(ReconciliationProgress(done: index + 1, total: families.count, current: family))
        }
        return summary
    }

    /// Asks Get All Subscription Statuses for every subscription the ledger believes live, and records the newest
    /// renewal info and transaction of each: the repair for lost renewal notifications, cheap enough to run often
    /// (one request per Apple account with a live subscription, no history read).
    ///
    /// A subscription is believed live when its latest transaction is not revoked and it has not expired, or its
    /// renewal info says it is in billing retry (with or without a grace period), or its renewal was expected
    /// (auto-renew not off) and its expiry is less than ``Configuration/renewalOverdueWindow`` ago: a ledger that
    /// missed `DID_RENEW` or `DID_FAIL_TO_RENEW` still believes the subscription due to renew, and asks.
    ///
    /// - Parameter progress: Called after each live subscription with done/total.
    /// - Returns: The totals; ``LedgerReconciliationSummary/families`` counts the live subscriptions.
    /// - Throws: ``IAPError`` when the ledger cannot be listed (`unsupportedOperation` for a store without
    ///   ``EntitlementStore/originalTransactionIds(cursor:limit:)``), or `cancelled`.
    public func reconcileSubscriptions(
        progress: (@Sendable (ReconciliationProgress) async -> Void)? = nil
    ) async throws -> LedgerReconciliationSummary {
        var live: [String] = []
        for family in try await allFamilies() {
            if try await isBelievedLive(family) {
                live.append(family)
            }
        }
        var summary = LedgerReconciliationSummary()
        summary.families = live.count
        var covered = Coverage()
        for (index, family) in live.enumerated() {
            if Task.isCancelled {
                throw IAPError(.cancelled, "the reconciliation of the subscriptions was cancelled")
            }
            if covered.statusOriginals.contains(family) {
                summary.coveredByOthers += 1
            } else {
                var report = ReconciliationReport(customer: family, customerKey: family, source: .appStoreHistory)
                try await walkStep(family, into: &report, summary: &summary) { report in
                    try await resyncStatuses(of: family, into: &report, covered: &covered)
                }
            }
            await progress?(ReconciliationProgress(done: index + 1, total: live.count, current: family))
        }
        return summary
    }

    /// Whether the ledger believes a subscription live: see ``reconcileSubscriptions(progress:)``.
    ///
    /// - Parameter originalTransactionId: The subscription's original transaction id.
    /// - Returns: `false` for a family that is not an auto-renewable subscription.
    /// - Throws: ``IAPError`` when the ledger fails.
    public func isBelievedLive(_ originalTransactionId: String) async throws -> Bool {
        let entries = try await store.entries(originalTransactionId: originalTransactionId)
        let subscriptions = entries.filter {
            $0.transaction.type == .autoRenewableSubscription && $0.transaction.isUpgraded != true
        }
        guard let latest = subscriptions.max(by: Self.isOlder) else { return false }
        guard latest.revokedAt == nil, latest.transaction.revocationDate == nil else { return false }
        guard let expires = latest.transaction.expiresDate else { return true }
        let now = wallClock.now
        if expires > now {
            return true
        }
        let renewal = try await store.renewalInfo(originalTransactionId: originalTransactionId)
        if renewal?.isInBillingRetryPeriod == true {
            return true
        }
        if renewal?.autoRenewStatus == .off {
            return false
        }
        return expires > now.addingTimeInterval(-configuration.renewalOverdueWindow.timeInterval)
    }

    // MARK: - Steps

    /// The Apple accounts and purchase families that a run's requests already answered for: one history request
    /// answers for every purchase of one Apple account in the app, one status request for every subscription.
    private struct Coverage {
        /// Original transaction ids seen in Apple's history answers (or asked for).
        var originals: Set<String> = []
        /// `appTransactionId`s (one per Apple account and app), with their environment, of the families asked for and
        /// of Apple's answers.
        var accounts: Set<String> = []
        /// Original transaction ids of the auto-renewable subscriptions seen in history answers.
        var subscriptionOriginals: Set<String> = []
        /// Original transaction ids a status answer listed (or that were asked for).
        var statusOriginals: Set<String> = []
    }

    /// Which subscriptions a visit asks the statuses of.
    private enum StatusScope {
        /// Every auto-renewable family (one customer asked for by name).
        case everySubscription
        /// Only the families the ledger believes live (a walk of the whole ledger).
        case liveSubscriptions
    }

    /// Every original transaction id of the ledger, in the order of its first purchase.
    private func allFamilies() async throws -> [String] {
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
        return families
    }

    /// Runs one customer's visit, then reports it and alarms on what it found, even when it failed part way: what
    /// was repaired before a failure stays repaired.
    private func visit(
        into report: inout ReconciliationReport,
        _ body: (inout ReconciliationReport) async throws -> Void
    ) async throws {
        let started = wallClock.now
        do {
            try await body(&report)
        } catch {
            await finish(report, started: started, error: error)
            throw error
        }
        await finish(report, started: started, error: nil)
    }

    /// One family of a walk: counted in the summary whether it succeeded or failed; a cancellation ends the walk.
    private func walkStep(
        _ family: String,
        into report: inout ReconciliationReport,
        summary: inout LedgerReconciliationSummary,
        _ body: (inout ReconciliationReport) async throws -> Void
    ) async throws {
        do {
            try await visit(into: &report, body)
            summary.add(report)
        } catch let error as IAPError where error.code == .cancelled {
            throw error
        } catch is CancellationError {
            throw IAPError(.cancelled, "the reconciliation was cancelled")
        } catch {
            // What the family repaired before it failed stays repaired: count it (it was alarmed on already).
            summary.count(report)
            summary.failedCustomers[family] = IAPError.wrapping(error, as: .internalError, "reconciliation failed")
        }
        if report.discrepancy > configuration.alarmThreshold {
            summary.alarms += 1
        }
    }

    /// Reports a finished visit as an event, and raises the alarm when its discrepancies exceed the threshold.
    private func finish(_ report: ReconciliationReport, started: Date, error: (any Error)?) async {
        let failure = error.map { IAPError.wrapping($0, as: .internalError, "reconciliation failed") }
        events.record(
            IAPEvent(
                time: wallClock.now,
                event: "reconciliation.customer",
                originalTransactionId: report.customerKey,
                outcome: failure == nil ? (report.isClean ? "clean" : "partial") : "failed",
                errorCode: failure?.code.rawValue,
                message: failure?.message ?? report.description,
                durationMs: max(0, wallClock.now.millisecondsSince1970 - started.millisecondsSince1970)
            )
        )
        await raiseAlarmIfNeeded(report)
    }

    /// Whether a family needs no history request of its own: Apple answered for it, or for its Apple account,
    /// already.
    private func isCovered(_ family: String, by coverage: Coverage) async throws -> Bool {
        if coverage.originals.contains(family) {
            return true
        }
        guard !coverage.accounts.isEmpty,
            let account = try await store.entries(originalTransactionId: family).first.flatMap({
                Self.account(of: $0.transaction)
            })
        else {
            return false
        }
        return coverage.accounts.contains(account)
    }

    /// The Apple account of a transaction, within its environment (a sandbox tester is not a production customer).
    private static func account(of transaction: TransactionPayload) -> String? {
        transaction.appTransactionId.map { "\(transaction.environment?.rawValue ?? "")/\($0)" }
    }

    /// Whether a family is a subscription whose statuses no status answer of this run listed yet, and that the
    /// scope asks for.
    private func needsStatuses(_ family: String, covered: Coverage, scope: StatusScope) async throws -> Bool {
        guard configuration.resyncsSubscriptions, !covered.statusOriginals.contains(family) else { return false }
        switch scope {
        case .everySubscription:
            if covered.subscriptionOriginals.contains(family) {
                return true
            }
            return try await store.entries(originalTransactionId: family).contains {
                $0.transaction.type == .autoRenewableSubscription
            }
        case .liveSubscriptions:
            return try await isBelievedLive(family)
        }
    }

    /// The clients to ask about a family: the one of its environment when the ledger knows the family, else every
    /// client in turn.
    private func candidateClients(for family: String) async throws -> [AppStoreServerAPIClient] {
        guard let entry = try await store.entries(originalTransactionId: family).first else {
            return clients.all
        }
        return [try clients.client(for: entry.environment)]
    }

    /// Calls `body` with each candidate client until one knows the transaction: only a transaction the ledger does
    /// not know has more than one candidate.
    private func withClient<T>(
        for family: String,
        _ body: (AppStoreServerAPIClient) async throws -> T
    ) async throws -> T {
        let candidates = try await candidateClients(for: family)
        for (index, client) in candidates.enumerated() {
            do {
                return try await body(client)
            } catch let error as IAPError where index < candidates.count - 1 && Self.isUnknownTransaction(error) {
                continue
            }
        }
        throw IAPError(.internalError, "no App Store Server API client to ask about \(family)")
    }

    /// Whether Apple answered that it does not know the transaction (in the environment asked).
    private static func isUnknownTransaction(_ error: IAPError) -> Bool {
        guard error.code == .apiError, let code = error.apiErrorCode else { return false }
        return [
            APIErrorCode.transactionIdNotFound, .originalTransactionIdNotFound,
        ].map(\.rawValue).contains(code)
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
                    if transaction.type == .autoRenewableSubscription {
                        coverage.subscriptionOriginals.insert(original)
                    }
                }
                if let account = Self.account(of: transaction) {
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

    /// Reads a family's transaction and refund histories from its checkpoint, settles each transaction, saves the
    /// new revisions when everything Apple answered is recorded, then resyncs the subscription statuses the scope
    /// asks for.
    ///
    /// `covered` grows only once both histories were read to their end: a family that failed covers nothing.
    private func reconcileFamily(
        anyTransactionId: String,
        key: String,
        into report: inout ReconciliationReport,
        covered: inout Coverage,
        statuses scope: StatusScope
    ) async throws {
        var coverage = covered
        coverage.originals.insert(key)
        if let account = try await store.entries(originalTransactionId: key).first.flatMap({
            Self.account(of: $0.transaction)
        }) {
            coverage.accounts.insert(account)
        }
        let checkpoint = try await checkpoints.checkpoint(customerKey: key)
        if report.startRevision == nil {
            report.startRevision = checkpoint?.historyRevision
        }
        var seen = Set<String>()
        var unrecorded = false
        let rejectedBefore = report.rejectedSignatures.count
        var history: TransactionHistorySequence
        var refunds: RefundHistorySequence
        var client: AppStoreServerAPIClient
        let candidates = try await candidateClients(for: key)
        let settledBefore = report.appleTransactions.count
        var index = 0
        while true {
            client = candidates[index]
            do {
                (history, refunds) = try await readHistories(
                    client: client,
                    anyTransactionId: anyTransactionId,
                    checkpoint: checkpoint,
                    into: &report,
                    coverage: &coverage,
                    seen: &seen,
                    unrecorded: &unrecorded
                )
                break
            } catch let error as IAPError
                where index < candidates.count - 1 && report.appleTransactions.count == settledBefore
                && Self.isUnknownTransaction(error)
            {
                // This environment does not know the transaction: ask the next one.
                index += 1
            }
        }
        covered = coverage

        // Go on from here next time only if nothing Apple answered is missing from the ledger: a transaction that
        // was not recorded, or data that did not verify, must be read again.
        if !unrecorded, report.rejectedSignatures.count == rejectedBefore {
            try await checkpoints.saveCheckpoint(
                ReconciliationCheckpoint(
                    customerKey: key,
                    historyRevision: history.lastRevision,
                    refundRevision: refunds.lastRevision,
                    reconciledAt: wallClock.now
                )
            )
            report.checkpointSaved = true
        } else {
            report.checkpointSaved = false
        }

        // One status request answers for every subscription of the Apple account: ask it for the first subscription
        // of this visit that needs it.
        for family in [key] + coverage.subscriptionOriginals.sorted() {
            if try await needsStatuses(family, covered: covered, scope: scope) {
                try await resyncStatuses(of: family, client: client, into: &report, covered: &covered)
            }
        }
    }

    /// Reads a family's transaction and refund histories, from the checkpoint's revisions, and settles every
    /// transaction; answers the two sequences, whose last revisions a checkpoint keeps.
    private func readHistories(
        client: AppStoreServerAPIClient,
        anyTransactionId: String,
        checkpoint: ReconciliationCheckpoint?,
        into report: inout ReconciliationReport,
        coverage: inout Coverage,
        seen: inout Set<String>,
        unrecorded: inout Bool
    ) async throws -> (TransactionHistorySequence, RefundHistorySequence) {
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
        return (history, refunds)
    }

    /// Asks Get All Subscription Statuses with a family's id, of its environment's API, and records what it answers.
    private func resyncStatuses(
        of family: String,
        into report: inout ReconciliationReport,
        covered: inout Coverage
    ) async throws {
        let response = try await withClient(for: family) { client in
            try await pacer.waitForTurn()
            return try await client.allSubscriptionStatuses(anyTransactionId: family)
        }
        await record(response, asked: family, into: &report, covered: &covered)
    }

    /// Asks Get All Subscription Statuses with a family's id, of the given API, and records what it answers.
    private func resyncStatuses(
        of family: String,
        client: AppStoreServerAPIClient,
        into report: inout ReconciliationReport,
        covered: inout Coverage
    ) async throws {
        try await pacer.waitForTurn()
        let response = try await client.allSubscriptionStatuses(anyTransactionId: family)
        await record(response, asked: family, into: &report, covered: &covered)
    }

    /// Records a status answer: each subscription's newest transaction through the pipeline, and its newest renewal
    /// info in the ledger (a newer `signedDate` wins; an older one changes nothing).
    private func record(
        _ response: StatusResponse,
        asked family: String,
        into report: inout ReconciliationReport,
        covered: inout Coverage
    ) async {
        report.requests += 1
        report.subscriptionStatusRequests += 1
        covered.statusOriginals.insert(family)
        var seen = Set(report.appleTransactions)
        var unrecorded = false
        var index = 0
        for item in (response.data ?? []).flatMap({ $0.lastTransactions ?? [] }) {
            defer { index += 1 }
            if let original = item.originalTransactionId {
                covered.statusOriginals.insert(original)
            }
            // The transaction first: a subscription the ledger never recorded is recorded before its renewal state.
            if let signed = item.signedTransactionInfo,
                let transaction = await verified(signed, index: index, into: &report)
            {
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
            if let signed = item.signedRenewalInfo {
                await recordRenewal(signed, index: index, into: &report)
            }
        }
    }

    /// Verifies a renewal info and stores it when it is newer than the ledger's; a changed renewal state is a
    /// discrepancy (a renewal notification was lost).
    private func recordRenewal(_ signed: String, index: Int, into report: inout ReconciliationReport) async {
        let renewal: RenewalInfoPayload
        do {
            renewal = try await verifier.verifyRenewalInfo(signed)
        } catch {
            let failure = IAPError.wrapping(error, as: .internalError, "verification did not finish")
            reject(into: &report, .init(index: index, error: failure))
            return
        }
        guard let original = renewal.originalTransactionId, !original.isEmpty else {
            reject(
                into: &report,
                .init(
                    index: index,
                    error: IAPError(.malformedSignedData, "a renewal info has no originalTransactionId")
                )
            )
            return
        }
        do {
            try await pipeline.checkEnvironment(of: renewal)
            let before = try await store.renewalInfo(originalTransactionId: original)
            guard try await store.storeRenewalInfo(renewal), RenewalState(before) != RenewalState(renewal) else {
                return
            }
            report.renewalInfosUpdated.append(original)
            let latest = try await store.entries(originalTransactionId: original).max(by: Self.isOlder)
            report.discrepancies.append(
                .init(
                    kind: .renewalStateChanged,
                    transactionId: latest?.transactionId,
                    originalTransactionId: original,
                    productId: latest?.productId ?? renewal.productId,
                    userId: latest?.owner,
                    repair: "stored"
                )
            )
            record(report.discrepancies[report.discrepancies.count - 1], environment: renewal.environment)
        } catch {
            report.stillFailing.append(
                .init(
                    transactionId: original,
                    error: IAPError.wrapping(error, as: .storageFailure, "the renewal info could not be stored")
                )
            )
        }
    }

    /// What of a renewal info decides access: a change in it is what a lost renewal notification would have told.
    private struct RenewalState: Equatable {
        var autoRenewStatus: AutoRenewStatus?
        var autoRenewProductId: String?
        var isInBillingRetryPeriod: Bool?
        var gracePeriodExpiresDate: Date?

        init?(_ renewal: RenewalInfoPayload?) {
            guard let renewal else { return nil }
            autoRenewStatus = renewal.autoRenewStatus
            autoRenewProductId = renewal.autoRenewProductId
            isInBillingRetryPeriod = renewal.isInBillingRetryPeriod
            gracePeriodExpiresDate = renewal.gracePeriodExpiresDate
        }
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
            reject(into: &report, .init(index: index, error: error))
            return nil
        } catch {
            // Not a verdict on the data (a custom verifier's network failure): as the pipeline says of it.
            reject(
                into: &report,
                .init(
                    index: index,
                    error: IAPError(.internalError, "verification did not finish: \(error)", isRetryable: true)
                )
            )
            return nil
        }
    }

    /// Compares one verified transaction with the ledger and repairs what differs; what the ledger had missed goes
    /// into the report's discrepancies.
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
            reject(
                into: &report,
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
            fail(transaction, IAPError.wrapping(error, as: .storageFailure, "the store failed"), into: &report)
            return
        }
        if let existing, Self.isSettled(existing, as: transaction), userId == nil || existing.userId == userId {
            report.alreadyDelivered.append(transactionId)
            return
        }
        let outcome = await pipeline.deliver(transaction, signedTransaction: signed, userId: userId)
        switch outcome {
        case .delivered:
            report.deliveredNow.append(transactionId)
        case .revoked:
            report.revokedNow.append(transactionId)
        case .alreadyDelivered:
            report.alreadyDelivered.append(transactionId)
        case .awaitingOwner:
            report.awaitingOwner.append(transactionId)
        case .pending:
            fail(
                transaction,
                IAPError(
                    .fulfillmentFailed,
                    "transaction \(transactionId) is being delivered by another deliverer",
                    isRetryable: true
                ),
                into: &report
            )
        case .deferred(_, let error):
            fail(transaction, error, into: &report)
        case .rejected(let error):
            // Not recorded, or Apple's newer data (a refund, a reversal) not applied to what the ledger has: the
            // next run must see it again.
            unrecorded = true
            fail(transaction, error, into: &report)
        }
        // What the ledger had missed: a transaction it never recorded, or a refund it never applied. A transaction it
        // knew and had not finished (a retry, an owner to wait for) is no discrepancy.
        let kind: ReconciliationReport.Discrepancy.Kind
        if existing == nil {
            kind = .notRecorded
        } else if transaction.revocationDate != nil, existing?.revokedAt == nil {
            kind = .refundNotApplied
        } else {
            return
        }
        let owner = outcome.entry?.owner
        let discrepancy = ReconciliationReport.Discrepancy(
            kind: kind,
            transactionId: transactionId,
            originalTransactionId: transaction.originalTransactionId,
            productId: transaction.productId,
            userId: owner,
            repair: outcome.name
        )
        report.discrepancies.append(discrepancy)
        record(discrepancy, environment: transaction.environment)
    }

    /// Records signed data from Apple that did not verify, and reports it as an event (`reconciliation.rejected`,
    /// with the code of the failed check).
    private func reject(into report: inout ReconciliationReport, _ rejection: ReconciliationReport.Rejection) {
        report.rejectedSignatures.append(rejection)
        events.record(
            IAPEvent(
                time: wallClock.now,
                event: "reconciliation.rejected",
                originalTransactionId: report.customerKey,
                outcome: "rejected",
                errorCode: rejection.error.code.rawValue,
                message: rejection.error.message
            )
        )
    }

    /// Records a transaction that could not be settled, and reports it as an event.
    private func fail(_ transaction: TransactionPayload, _ error: IAPError, into report: inout ReconciliationReport) {
        let transactionId = transaction.transactionId ?? ""
        report.stillFailing.append(.init(transactionId: transactionId, error: error))
        events.record(
            IAPEvent(
                time: wallClock.now,
                event: "reconciliation.failed",
                productId: transaction.productId,
                transactionId: transactionId,
                originalTransactionId: transaction.originalTransactionId,
                environment: transaction.environment?.rawValue,
                outcome: "failed",
                errorCode: error.code.rawValue,
                message: error.message
            )
        )
    }

    /// Reports a discrepancy as an event.
    private func record(_ discrepancy: ReconciliationReport.Discrepancy, environment: AppStoreEnvironment?) {
        events.record(
            IAPEvent(
                time: wallClock.now,
                event: "reconciliation.discrepancy",
                userId: discrepancy.userId,
                productId: discrepancy.productId,
                transactionId: discrepancy.transactionId,
                originalTransactionId: discrepancy.originalTransactionId,
                environment: environment?.rawValue,
                outcome: discrepancy.repair,
                message: discrepancy.description
            )
        )
    }

    /// Whether the ledger already reflects what Apple says of a transaction: granted and not revoked, or revoked
    /// and taken back, and settled.
    private static func isSettled(_ entry: LedgerEntry, as transaction: TransactionPayload) -> Bool {
        guard entry.deliveryState == .delivered else { return false }
        return (transaction.revocationDate != nil) == (entry.revokedAt != nil)
    }

    /// Orders a family's entries by purchase date, then by the ledger's order.
    private static func isOlder(_ lhs: LedgerEntry, _ rhs: LedgerEntry) -> Bool {
        let left = lhs.transaction.purchaseDate ?? .distantPast
        let right = rhs.transaction.purchaseDate ?? .distantPast
        return left != right ? left < right : lhs.sequence < rhs.sequence
    }

    /// Calls the alarm when the report's discrepancies exceed the threshold.
    private func raiseAlarmIfNeeded(_ report: ReconciliationReport) async {
        guard report.discrepancy > configuration.alarmThreshold else { return }
        let alarm = ReconciliationAlarm(
            customer: report.customer,
            appleCount: report.appleTransactions.count,
            discrepancies: report.discrepancies,
            threshold: configuration.alarmThreshold,
            report: report
        )
        events.record(
            IAPEvent(
                time: wallClock.now,
                event: "reconciliation.alarm",
                originalTransactionId: report.customerKey,
                outcome: "alarm",
                message: alarm.description
            )
        )
        await self.alarm?(alarm)
    }
}
