#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension Reconciler {
    // MARK: - Settling what Apple answered
    /// Records a status answer: each subscription's newest transaction through the pipeline, and its newest renewal
    /// info in the ledger (a newer `signedDate` wins; an older one changes nothing).
    func record(
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
    func recordRenewal(_ signed: String, index: Int, into report: inout ReconciliationReport) async {
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
    struct RenewalState: Equatable {
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
    static func refusesRevision(_ error: IAPError, from startRevision: String?) -> Bool {
        startRevision != nil && error.code == .apiError
            && error.apiErrorCode == APIErrorCode.invalidRequestRevision.rawValue
    }

    /// The verified transaction, or `nil` after recording the rejection.
    func verified(_ signed: String, index: Int, into report: inout ReconciliationReport) async
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
    func settle(
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
        if let existing, Self.isSettled(existing, as: transaction),
            userId.map({ existing.userId.isSameUser(as: $0) }) ?? true
        {
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
    func reject(into report: inout ReconciliationReport, _ rejection: ReconciliationReport.Rejection) {
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
    func fail(_ transaction: TransactionPayload, _ error: IAPError, into report: inout ReconciliationReport) {
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
    func record(_ discrepancy: ReconciliationReport.Discrepancy, environment: AppStoreEnvironment?) {
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
    static func isSettled(_ entry: LedgerEntry, as transaction: TransactionPayload) -> Bool {
        guard entry.deliveryState == .delivered else { return false }
        return (transaction.revocationDate != nil) == (entry.revokedAt != nil)
    }

    /// Orders a family's entries by purchase date, then by the ledger's order.
    static func isOlder(_ lhs: LedgerEntry, _ rhs: LedgerEntry) -> Bool {
        let left = lhs.transaction.purchaseDate ?? .distantPast
        let right = rhs.transaction.purchaseDate ?? .distantPast
        return left != right ? left < right : lhs.sequence < rhs.sequence
    }

    /// Calls the alarm when the report's discrepancies exceed the threshold.
    func raiseAlarmIfNeeded(_ report: ReconciliationReport) async {
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
