#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension Reconciler {
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
                // Only the apps reconciled: another app's family is known to its own app's API only.
                if let apps = reconciledApps, let bundleId = entry.transaction.bundleId, !apps.contains(bundleId) {
                    continue
                }
                families.append(entry.originalTransactionId)
            }
            cursor = page.nextCursor
        } while cursor != nil
        guard !families.isEmpty else {
            let apps = reconciledApps.map { " of " + $0.sorted().joined(separator: ", ") } ?? ""
            throw IAPError(
                .notFound,
                "the ledger has no transaction of user '\(userId)'\(apps) to ask the App Store about"
            )
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
}
