#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension Reconciler {
    // MARK: - A purchase family
    /// Reads pages until the last one, one request per turn of the pacer, and settles every transaction that
    /// verifies; the originals and Apple accounts it names go into `coverage`.
    func settlePages(
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
    /// `covered` grows only once both histories were read to their end: a family that failed covers nothing. What
    /// this visit's answers named is gathered apart and added then, so a visit costs what it read, not what the run
    /// remembers.
    func reconcileFamily(
        anyTransactionId: String,
        key: String,
        into report: inout ReconciliationReport,
        covered: inout Coverage,
        statuses scope: StatusScope
    ) async throws {
        var coverage = Coverage()
        coverage.originals.insert(key)
        if let account = try await store.entries(originalTransactionId: key).first.flatMap({
            Self.account(of: $0.transaction)
        }) {
            coverage.accounts.insert(account)
        }
        let checkpoint = try await checkpoints?.checkpoint(customerKey: key)
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
        covered.formUnion(coverage)

        // Go on from here next time only if nothing Apple answered is missing from the ledger: a transaction that
        // was not recorded, or data that did not verify, must be read again.
        if let checkpoints, !unrecorded, report.rejectedSignatures.count == rejectedBefore {
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
        // The subscriptions of earlier visits were asked about by those visits.
        for family in [key] + coverage.subscriptionOriginals.values.sorted() {
            if try await needsStatuses(family, covered: covered, scope: scope) {
                try await resyncStatuses(of: family, client: client, into: &report, covered: &covered)
            }
        }
    }

    /// Reads a family's transaction and refund histories, from the checkpoint's revisions, and settles every
    /// transaction; answers the two sequences, whose last revisions a checkpoint keeps.
    func readHistories(
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
    func resyncStatuses(
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
    func resyncStatuses(
        of family: String,
        client: AppStoreServerAPIClient,
        into report: inout ReconciliationReport,
        covered: inout Coverage
    ) async throws {
        try await pacer.waitForTurn()
        let response = try await client.allSubscriptionStatuses(anyTransactionId: family)
        await record(response, asked: family, into: &report, covered: &covered)
    }
}
