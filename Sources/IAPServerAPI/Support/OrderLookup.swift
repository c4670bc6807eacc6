public import IAPCore
/// The support desk's order tool: from the order id on a customer's App Store receipt email to what was bought,
/// whose it is, and whether it was delivered — and, when asked, delivery of what is missing.
///
/// ``lookUp(orderId:)`` calls Look Up Order ID, verifies every signed transaction, and answers per transaction
/// the product, the dates, Apple's state (active, expired, refunded, revoked), the owner (from the ledger, else
/// the appAccountToken binding) and the ledger's delivery state. ``redeliver(orderId:actor:userId:)`` does the
/// same and then delivers what the ledger lacks through the ``DeliveryPipeline`` — idempotently: a second run
/// delivers nothing again — writing an audit entry before (the request) and after (the outcomes).
///
/// An order id Apple does not know (status 1, invalid) answers a report with ``OrderLookupReport/found`` `false`,
/// not an error.
public struct OrderLookup: Sendable {
    private let client: AppStoreServerAPIClient
    private let verifier: any Verifier
    private let store: any EntitlementStore
    private let pipeline: DeliveryPipeline
    private let auditLog: any SupportAuditLog
    private let clock: any WallClock

    /// Creates the tool.
    ///
    /// - Parameters:
    ///   - client: The App Store Server API client.
    ///   - verifier: Verifies Apple's signed transactions.
    ///   - store: The ledger.
    ///   - pipeline: Delivers over `store`.
    ///   - auditLog: Where redeliveries are recorded.
    ///   - clock: The clock of expiry decisions and audit entries.
    public init(
        client: AppStoreServerAPIClient,
        verifier: some Verifier,
        store: some EntitlementStore,
        pipeline: DeliveryPipeline,
        auditLog: some SupportAuditLog,
        clock: some WallClock = SystemClock()
    ) {
        self.client = client
        self.verifier = verifier
        self.store = store
        self.pipeline = pipeline
        self.auditLog = auditLog
        self.clock = clock
    }

    /// Looks an order up, changing nothing.
    ///
    /// - Parameter orderId: The order id from the receipt email, such as `MK5TTTVWJH`.
    /// - Returns: The order's transactions with owner and delivery state.
    /// - Throws: ``IAPError`` `invalidArgument` for an empty order id; `apiError`, `transportFailure`, ... when the
    ///   App Store Server API fails; `storageFailure` when the ledger does.
    public func lookUp(orderId: String) async throws -> OrderLookupReport {
        let (report, _) = try await fetch(orderId)
        return report
    }

    /// Looks an order up and delivers what the ledger lacks, with an audit entry before and after.
    ///
    /// Each transaction goes through ``DeliveryPipeline/deliver(_:signedTransaction:userId:orderId:)``: one the ledger never recorded is
    /// delivered to its owner (the user bound to its appAccountToken, the owner of the purchase it continues, or
    /// `userId`); one waiting for its owner is given to `userId`; one recorded but not delivered yet is settled.
    /// A `userId` that another user's binding or ledger entry contradicts is refused (`ownershipConflict`) and changes
    /// nothing. Delivered and refunded transactions are left as they are, so running it twice delivers once.
    ///
    /// - Parameters:
    ///   - orderId: The order id from the receipt email.
    ///   - actor: Who asks (the support agent), for the audit log.
    ///   - userId: The customer the agent identified, who must not contradict the ledger or the token; `nil` to rely
    ///     on them.
    /// - Returns: The report, with each transaction's ``OrderLookupItem/redelivery`` outcome; a transaction the ledger
    ///   failed for is `rejected` with its ``OrderLookupItem/redeliveryError``, and the others are still delivered.
    /// - Throws: ``IAPError`` as ``lookUp(orderId:)``; `invalidArgument` for an empty actor or a user id that is empty
    ///   or in the pipeline's own namespace (``DeliveryPipeline/unownedPrefix``); `storageFailure` when an
    ///   audit entry cannot be written (before any delivery for the first entry).
    public func redeliver(orderId: String, actor: String, userId: String? = nil) async throws -> OrderLookupReport {
        guard !actor.isEmpty else {
            throw IAPError(.invalidArgument, "a redelivery needs the name of who asks, for the audit log")
        }
        if let userId {
            try DeliveryPipeline.validate(userId: userId)
        }
        var (report, payloads) = try await fetch(orderId)
        guard report.found else { return report }
        let requested = report.transactions.map {
            SupportAuditEntry.Outcome(transactionId: $0.transactionId, outcome: "requested")
        }
        try await appendAudit(action: "redeliver.requested", orderId: orderId, actor: actor, userId: userId, requested)

        var outcomes: [SupportAuditEntry.Outcome] = []
        for index in report.transactions.indices {
            let (transaction, signed) = payloads[index]
            // A failure here must not end the run: what was delivered before it still goes into the audit entry.
            let outcome = await pipeline.deliver(transaction, signedTransaction: signed, userId: userId)
            var error: String?
            switch outcome {
            case .deferred(_, let failure), .rejected(let failure):
                error = "\(failure.code): \(failure.message)"
            default:
                break
            }
            report.transactions[index].redelivery = outcome.name
            report.transactions[index].redeliveryError = error
            outcomes.append(
                .init(transactionId: report.transactions[index].transactionId, outcome: outcome.name, error: error)
            )
            // Only the report's description: a ledger that cannot be read now leaves the state found before.
            if let entry = try? await store.entry(transactionId: report.transactions[index].transactionId) {
                describe(entry, in: &report.transactions[index])
            }
        }
        try await appendAudit(action: "redeliver.completed", orderId: orderId, actor: actor, userId: userId, outcomes)
        report.redelivered = true
        return report
    }

    // MARK: - Steps

    private func appendAudit(
        action: String,
        orderId: String,
        actor: String,
        userId: String?,
        _ outcomes: [SupportAuditEntry.Outcome]
    ) async throws {
        let entry = SupportAuditEntry(
            at: clock.now,
            actor: actor,
            action: action,
            orderId: orderId,
            userId: userId,
            outcomes: outcomes
        )
        do {
            try await auditLog.append(entry)
        } catch {
            throw IAPError.wrapping(error, as: .storageFailure, "the audit entry '\(action)' could not be written")
        }
    }

    /// The report of an order and the verified payloads with their signed data, in the same order as the report's
    /// transactions.
    private func fetch(_ orderId: String) async throws -> (OrderLookupReport, [(TransactionPayload, String)]) {
        guard !orderId.isEmpty else {
            throw IAPError(.invalidArgument, "the order id is empty")
        }
        let response = try await client.lookUpOrderId(orderId)
        var report = OrderLookupReport(
            orderId: orderId,
            found: response.status == .valid,
            transactions: [],
            rejectedSignatures: [],
            redelivered: false
        )
        var payloads: [(TransactionPayload, String)] = []
        guard report.found else { return (report, payloads) }
        for signed in response.signedTransactions ?? [] {
            let transaction: TransactionPayload
            do {
                transaction = try await verifier.verifyTransaction(signed)
            } catch {
                // A failure that is not an IAPError is no verdict on the data (a custom verifier's network failure).
                let failure = IAPError.wrapping(error, as: .internalError, "verification did not finish")
                report.rejectedSignatures.append("\(failure.code): \(failure.message)")
                continue
            }
            guard let transactionId = transaction.transactionId, !transactionId.isEmpty else {
                report.rejectedSignatures.append("malformedSignedData: a signed transaction has no transactionId")
                continue
            }
            var item = OrderLookupItem(
                transactionId: transactionId,
                originalTransactionId: transaction.originalTransactionId,
                productId: transaction.productId,
                type: transaction.type,
                purchaseDate: transaction.purchaseDate,
                expiresDate: transaction.expiresDate,
                revocationDate: transaction.revocationDate,
                revocationReason: transaction.revocationReason,
                state: state(of: transaction),
                appAccountToken: transaction.appAccountToken,
                owner: nil,
                ownerSource: nil,
                ledgerState: nil,
                delivered: false
            )
            if let entry = try await store.entry(transactionId: transactionId) {
                describe(entry, in: &item)
            }
            if item.owner == nil, let token = transaction.appAccountToken, !token.isEmpty,
                let user = try await store.user(forAppAccountToken: token)
            {
                item.owner = user
                item.ownerSource = .appAccountToken
            }
            report.transactions.append(item)
            payloads.append((transaction, signed))
        }
        return (report, payloads)
    }

    private func describe(_ entry: LedgerEntry, in item: inout OrderLookupItem) {
        item.ledgerState = OrderHistoryItem(entry).state
        item.delivered = entry.deliveredAt != nil
        let placeholder =
            entry.deliveryState == .awaitingOwner || entry.userId.hasPrefix(DeliveryPipeline.unownedPrefix)
        if !placeholder {
            item.owner = entry.userId
            item.ownerSource = .ledger
        }
    }

    private func state(of transaction: TransactionPayload) -> OrderLookupItem.PurchaseState {
        if transaction.revocationDate != nil {
            return transaction.revocationType == .familyRevoke ? .revoked : .refunded
        }
        if let expires = transaction.expiresDate, expires <= clock.now {
            return .expired
        }
        return .active
    }
}
