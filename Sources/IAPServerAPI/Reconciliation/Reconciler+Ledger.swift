#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension Reconciler {
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
        let (families, otherApps) = try await allFamiliesOfTheApps()
        var summary = LedgerReconciliationSummary()
        summary.families = families.count
        summary.otherApps = otherApps
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
        let (families, otherApps) = try await allFamiliesOfTheApps()
        for family in families {
            if try await isBelievedLive(family) {
                live.append(family)
            }
        }
        var summary = LedgerReconciliationSummary()
        summary.families = live.count
        summary.otherApps = otherApps
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
    struct Coverage {
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
    enum StatusScope {
        /// Every auto-renewable family (one customer asked for by name).
        case everySubscription
        /// Only the families the ledger believes live (a walk of the whole ledger).
        case liveSubscriptions
    }

    /// Every original transaction id of the ledger, in the order of its first purchase.
    func allFamilies() async throws -> [String] {
        try await allFamiliesOfTheApps().families
    }

    /// Every purchase family of the ledger that belongs to the apps reconciled (``Configuration/apps``), and how many
    /// belong to other apps.
    func allFamiliesOfTheApps() async throws -> (families: [String], otherApps: Int) {
        var families: [String] = []
        var otherApps = 0
        var cursor: String?
        repeat {
            let page = try await store.originalTransactionIds(
                cursor: cursor,
                limit: max(1, configuration.ledgerPageSize)
            )
            for family in page.originalTransactionIds {
                if try await isOfTheApps(family) {
                    families.append(family)
                } else {
                    otherApps += 1
                }
            }
            cursor = page.nextCursor
        } while cursor != nil
        return (families, otherApps)
    }

    /// The apps reconciled: ``Configuration/apps``, else those of clients made per app, else `nil` (every app).
    var reconciledApps: Set<String>? {
        configuration.apps ?? (clients.bundleIds.isEmpty ? nil : Set(clients.bundleIds))
    }

    /// Whether a family belongs to an app reconciled: its first entry names one of them, or names none.
    func isOfTheApps(_ family: String) async throws -> Bool {
        guard let apps = reconciledApps else { return true }
        guard let bundleId = try await store.entries(originalTransactionId: family).first?.transaction.bundleId else {
            return true
        }
        return apps.contains(bundleId)
    }

    /// Runs one customer's visit, then reports it and alarms on what it found, even when it failed part way: what
    /// was repaired before a failure stays repaired.
    func visit(
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
    func walkStep(
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
    func finish(_ report: ReconciliationReport, started: Date, error: (any Error)?) async {
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
    func isCovered(_ family: String, by coverage: Coverage) async throws -> Bool {
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

    /// The Apple account of a transaction, within its app and environment (a sandbox tester is not a production
    /// customer, and one app's history says nothing of another app's purchases, whatever their app transaction ids).
    static func account(of transaction: TransactionPayload) -> String? {
        transaction.appTransactionId.map {
            "\(transaction.bundleId ?? "")/\(transaction.environment?.rawValue ?? "")/\($0)"
        }
    }

    /// Whether a family is a subscription whose statuses no status answer of this run listed yet, and that the
    /// scope asks for.
    func needsStatuses(_ family: String, covered: Coverage, scope: StatusScope) async throws -> Bool {
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

    /// The clients to ask about a family: the one of its app and environment when the ledger knows the family, else
    /// every client in turn.
    func candidateClients(for family: String) async throws -> [AppStoreServerAPIClient] {
        guard let entry = try await store.entries(originalTransactionId: family).first else {
            return clients.all
        }
        return [try clients.client(for: entry.environment, bundleId: entry.transaction.bundleId)]
    }

    /// Calls `body` with each candidate client until one knows the transaction: only a transaction the ledger does
    /// not know has more than one candidate.
    func withClient<T>(
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
    static func isUnknownTransaction(_ error: IAPError) -> Bool {
        guard error.code == .apiError, let code = error.apiErrorCode else { return false }
        return [
            APIErrorCode.transactionIdNotFound, .originalTransactionIdNotFound,
        ].map(\.rawValue).contains(code)
    }
}
