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
    /// ``EntitlementStore/originalTransactionIds(cursor:limit:)``, a page at a time (the walk never holds the
    /// ledger's list of families: its memory does not grow with the ledger); a family that an earlier customer's
    /// history already covered is skipped (but a live subscription among them still has its statuses asked, once
    /// per Apple account; see ``Configuration/coverageLimit``). A family whose reconciliation fails as a whole (Apple
    /// refused it) is recorded in ``LedgerReconciliationSummary/failedCustomers`` and the walk goes on. Families the
    /// ledger records after the walk began are left to the next walk.
    ///
    /// - Parameter progress: Called after each family with done/total, over the families of the ledger when the
    ///   walk began (another app's included: see ``Configuration/apps``).
    /// - Returns: The totals.
    /// - Throws: ``IAPError`` when the ledger cannot be listed, or `cancelled`.
    public func reconcileLedger(
        progress: (@Sendable (ReconciliationProgress) async -> Void)? = nil
    ) async throws -> LedgerReconciliationSummary {
        var summary = LedgerReconciliationSummary()
        var covered = Coverage(limit: configuration.coverageLimit)
        let otherApps = try await walkFamilies(progress: progress) { family, entries in
            summary.families += 1
            var report = ReconciliationReport(customer: family, customerKey: family, source: .appStoreHistory)
            let historyCovered = isCovered(family, entries: entries, by: covered)
            var statusesOnly = false
            if historyCovered {
                statusesOnly =
                    (try? await needsStatuses(family, entries: entries, covered: covered, scope: .liveSubscriptions))
                    == true
            }
            if historyCovered && !statusesOnly {
                summary.coveredByOthers += 1
                return
            }
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
        summary.otherApps = otherApps
        return summary
    }

    /// Asks Get All Subscription Statuses for every subscription the ledger believes live, and records the newest
    /// renewal info and transaction of each: the repair for lost renewal notifications, cheap enough to run often
    /// (one request per Apple account with a live subscription, no history read).
    ///
    /// A subscription is believed live when its latest transaction is not revoked and it has not expired, or its
    /// renewal info says it is in billing retry (with or without a grace period), or its renewal was expected
    /// (auto-renew not off) and its expiry is less than ``Configuration/renewalOverdueWindow`` ago: a ledger that
    /// missed `DID_RENEW` or `DID_FAIL_TO_RENEW` still believes the subscription due to renew, and asks. The ledger
    /// is walked a page at a time, as by ``reconcileLedger(progress:)``, each live subscription asked as the walk
    /// meets it.
    ///
    /// - Parameter progress: Called after each family of the ledger with done/total, over the families of the ledger
    ///   when the walk began.
    /// - Returns: The totals; ``LedgerReconciliationSummary/families`` counts the live subscriptions.
    /// - Throws: ``IAPError`` when the ledger cannot be listed (`unsupportedOperation` for a store without
    ///   ``EntitlementStore/originalTransactionIds(cursor:limit:)``), or `cancelled`.
    public func reconcileSubscriptions(
        progress: (@Sendable (ReconciliationProgress) async -> Void)? = nil
    ) async throws -> LedgerReconciliationSummary {
        var summary = LedgerReconciliationSummary()
        var covered = Coverage(limit: configuration.coverageLimit)
        let otherApps = try await walkFamilies(progress: progress) { family, entries in
            guard try await isBelievedLive(family, entries: entries) else { return }
            summary.families += 1
            if covered.statusOriginals.contains(family) {
                summary.coveredByOthers += 1
                return
            }
            var report = ReconciliationReport(customer: family, customerKey: family, source: .appStoreHistory)
            try await walkStep(family, into: &report, summary: &summary) { report in
                try await resyncStatuses(of: family, into: &report, covered: &covered)
            }
        }
        summary.otherApps = otherApps
        return summary
    }

    /// Whether the ledger believes a subscription live: see ``reconcileSubscriptions(progress:)``.
    ///
    /// - Parameter originalTransactionId: The subscription's original transaction id.
    /// - Returns: `false` for a family that is not an auto-renewable subscription.
    /// - Throws: ``IAPError`` when the ledger fails.
    public func isBelievedLive(_ originalTransactionId: String) async throws -> Bool {
        try await isBelievedLive(
            originalTransactionId,
            entries: try await store.entries(originalTransactionId: originalTransactionId)
        )
    }

    /// Whether the ledger believes a subscription live, from its entries as the ledger just answered them.
    func isBelievedLive(_ originalTransactionId: String, entries: [LedgerEntry]) async throws -> Bool {
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

    /// Which subscriptions a visit asks the statuses of.
    enum StatusScope {
        /// Every auto-renewable family (one customer asked for by name).
        case everySubscription
        /// Only the families the ledger believes live (a walk of the whole ledger).
        case liveSubscriptions
    }

    /// Walks the purchase families of the ledger when the walk began, in the order of their first purchase, a page
    /// at a time, and calls `body` with each family of the apps reconciled and its entries (read once, for every
    /// check of the family); answers how many families of other apps were left alone.
    ///
    /// A first pass counts the families (the progress's total; only the last id is kept); the second stops after
    /// that last one, so families recorded during the walk, which come after every earlier one, are left to the next
    /// walk (one whose insert began before the count and committed after it, in the middle, is visited).
    func walkFamilies(
        progress: (@Sendable (ReconciliationProgress) async -> Void)?,
        _ body: (String, [LedgerEntry]) async throws -> Void
    ) async throws -> Int {
        let pageSize = max(1, configuration.ledgerPageSize)
        var total = 0
        var last: String?
        var cursor: String?
        repeat {
            let page = try await store.originalTransactionIds(cursor: cursor, limit: pageSize)
            total += page.originalTransactionIds.count
            last = page.originalTransactionIds.last ?? last
            cursor = page.nextCursor
        } while cursor != nil
        guard let last else { return 0 }
        var done = 0
        var otherApps = 0
        cursor = nil
        walk: repeat {
            let page = try await store.originalTransactionIds(cursor: cursor, limit: pageSize)
            for family in page.originalTransactionIds {
                if Task.isCancelled {
                    throw IAPError(.cancelled, "the reconciliation of the ledger was cancelled")
                }
                let entries = try await store.entries(originalTransactionId: family)
                if isOfTheApps(entries) {
                    try await body(family, entries)
                } else {
                    otherApps += 1
                }
                done += 1
                await progress?(ReconciliationProgress(done: done, total: max(total, done), current: family))
                if family == last {
                    break walk
                }
            }
            cursor = page.nextCursor
        } while cursor != nil
        return otherApps
    }

    /// The apps reconciled: ``Configuration/apps``, else those of clients made per app, else `nil` (every app).
    var reconciledApps: Set<String>? {
        configuration.apps ?? (clients.bundleIds.isEmpty ? nil : Set(clients.bundleIds))
    }

    /// Whether a family belongs to an app reconciled: its first entry names one of them, or names none.
    func isOfTheApps(_ entries: [LedgerEntry]) -> Bool {
        guard let apps = reconciledApps, let bundleId = entries.first?.transaction.bundleId else { return true }
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
        guard !coverage.accounts.isEmpty else { return false }
        return isCovered(family, entries: try await store.entries(originalTransactionId: family), by: coverage)
    }

    /// Whether a family needs no history request of its own, from its entries as the ledger just answered them.
    func isCovered(_ family: String, entries: [LedgerEntry], by coverage: Coverage) -> Bool {
        if coverage.originals.contains(family) {
            return true
        }
        guard let account = entries.first.flatMap({ Self.account(of: $0.transaction) }) else { return false }
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
    func needsStatuses(
        _ family: String,
        entries known: [LedgerEntry]? = nil,
        covered: Coverage,
        scope: StatusScope
    ) async throws -> Bool {
        guard configuration.resyncsSubscriptions, !covered.statusOriginals.contains(family) else { return false }
        switch scope {
        case .everySubscription:
            if covered.subscriptionOriginals.contains(family) {
                return true
            }
            let entries: [LedgerEntry]
            if let known {
                entries = known
            } else {
                entries = try await store.entries(originalTransactionId: family)
            }
            return entries.contains { $0.transaction.type == .autoRenewableSubscription }
        case .liveSubscriptions:
            if let known {
                return try await isBelievedLive(family, entries: known)
            }
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
