public import IAPCore
/// The support desk's order tool: from the order id on a customer's App Store receipt email to what was bought,
/// whose it is, and whether it was delivered — and, when asked, delivery of what is missing.
///
/// ``lookUp(orderId:actor:)`` calls Look Up Order ID, verifies every signed transaction, and answers per
/// transaction the product, the dates, Apple's state (active, expired, refunded, revoked), the owner (from the
/// ledger, else the appAccountToken binding) and the ledger's delivery state — and writes an audit entry (`lookup`)
/// naming who asked and what was shown, because a lookup discloses a customer's owner, token and purchases.
/// ``redeliver(orderId:actor:userId:)`` does the same and then delivers what the ledger lacks through the
/// ``DeliveryPipeline`` — idempotently: a second run delivers nothing again — writing an audit entry before (the
/// request) and after (the outcomes). ``lookUpWithoutAudit(orderId:)`` is the named opt-out for lookups only.
///
/// An order id Apple does not know (status 1, invalid) answers a report with ``OrderLookupReport/found`` `false`,
/// not an error.
///
/// Look Up Order ID exists in Production only: order ids come from the App Store's receipt emails, and sandbox
/// purchases have none. The tool asks the Production client of its ``AppStoreServerAPIClients``; without one it
/// refuses with `unsupportedOperation` rather than ask a sandbox that cannot answer. The transactions it finds are
/// verified with the tool's verifier, so a production server that also accepts App Review's sandbox data uses one
/// verifier for both.
public struct OrderLookup: Sendable {
    private let clients: AppStoreServerAPIClients
    private let pipeline: DeliveryPipeline
    private let auditLog: any SupportAuditLog
    private let fulfillment: String?
    private var verifier: any Verifier { pipeline.verifier }
    private var store: any EntitlementStore { pipeline.store }
    private var clock: any WallClock { pipeline.clock }
    private var events: any EventSink { pipeline.events }

    /// Creates the tool.
    ///
    /// - Parameters:
    ///   - clients: The App Store Server API clients; Look Up Order ID asks the Production one.
    ///   - pipeline: Delivers what the ledger lacks; its verifier checks Apple's signed transactions, its store is
    ///     the ledger read, its clock decides expiry and dates the audit entries, and its event sink hears of each
    ///     lookup (`support.lookup`) and each redelivered transaction (`support.redeliver`), with the operator and
    ///     the order id in `message`.
    ///   - auditLog: Where lookups and redeliveries are recorded (``SupportAuditLog``).
    ///   - fulfillment: How the pipeline's grants reach the customer, as the audit log should say it (such as
    ///     `webhook wallet.example.com` or `ledger-only`); see ``SupportAuditEntry/fulfillment``.
    public init(
        clients: AppStoreServerAPIClients,
        pipeline: DeliveryPipeline,
        auditLog: some SupportAuditLog,
        fulfillment: String? = nil
    ) {
        self.clients = clients
        self.pipeline = pipeline
        self.auditLog = auditLog
        self.fulfillment = fulfillment
    }

    /// Creates the tool with one App Store Server API client, which must be a Production one for Look Up Order ID.
    ///
    /// - Parameters:
    ///   - client: The App Store Server API client.
    ///   - pipeline: Delivers what the ledger lacks, verifies, and hears of what happens (see
    ///     ``init(clients:pipeline:auditLog:fulfillment:)``).
    ///   - auditLog: Where lookups and redeliveries are recorded (``SupportAuditLog``).
    ///   - fulfillment: How the pipeline's grants reach the customer, for the audit log.
    public init(
        client: AppStoreServerAPIClient,
        pipeline: DeliveryPipeline,
        auditLog: some SupportAuditLog,
        fulfillment: String? = nil
    ) {
        self.init(
            clients: AppStoreServerAPIClients(client),
            pipeline: pipeline,
            auditLog: auditLog,
            fulfillment: fulfillment
        )
    }

    /// Looks an order up and records who looked and what was shown in the audit log; the ledger is not changed.
    ///
    /// The audit entry (action `lookup`, one `shown` outcome per transaction of the report) is written after the
    /// lookup and before the report is returned: a report whose entry could not be written is not returned.
    ///
    /// - Parameters:
    ///   - orderId: The order id from the receipt email, such as `MK5TTTVWJH`.
    ///   - actor: Who asks (the support agent), for the audit log.
    /// - Returns: The order's transactions with owner and delivery state.
    /// - Throws: ``IAPError`` `invalidArgument` for an empty order id or actor; `unsupportedOperation` without a
    ///   Production client; `apiError`, `transportFailure`, ... when the App Store Server API fails; `storageFailure`
    ///   when the ledger or the audit log does.
    public func lookUp(orderId: String, actor: String) async throws -> OrderLookupReport {
        guard !actor.isEmpty else {
            throw IAPError(.invalidArgument, "a lookup needs the name of who asks, for the audit log")
        }
        try await checkAudit()
        let (report, _) = try await fetch(orderId)
        let shown = report.transactions.map {
            SupportAuditEntry.Outcome(transactionId: $0.transactionId, outcome: "shown")
        }
        let head = try await appendAudit(action: "lookup", orderId: orderId, actor: actor, userId: nil, shown)
        reportLookup(report, actor: actor, auditHead: head)
        return report
    }

    /// Looks an order up without an audit entry: the named opt-out for lookups (`--no-audit-lookups`), for a desk
    /// that does not want its lookups recorded. Redeliveries are always audited.
    ///
    /// - Parameter orderId: The order id from the receipt email.
    /// - Returns: The order's transactions with owner and delivery state.
    /// - Throws: ``IAPError`` as ``lookUp(orderId:actor:)``, never for the audit log.
    public func lookUpWithoutAudit(orderId: String) async throws -> OrderLookupReport {
        let (report, _) = try await fetch(orderId)
        reportLookup(report, actor: nil, auditHead: nil)
        return report
    }

    /// Looks an order up and delivers what the ledger lacks, with an audit entry before and after.
    ///
    /// Each transaction goes through ``DeliveryPipeline/deliver(_:signedTransaction:userId:orderId:)``: one the ledger never recorded is
    /// delivered to its owner (the user bound to its appAccountToken, the owner of the purchase it continues, or
    /// `userId`); one waiting for its owner is given to `userId`; one recorded but not delivered yet is settled, its
    /// fulfillment called in this call even when it waits for its retry or was dead-lettered
    /// (``DeliveryPipeline/redeliver(transactionId:)``).
    /// A `userId` that another user's binding or ledger entry contradicts is refused (`ownershipConflict`) and changes
    /// nothing. Delivered and refunded transactions are left as they are, so running it twice delivers once.
    ///
    /// The audit entry after the deliveries names, per transaction, the outcome, the product and the units granted
    /// now, and the entry names the path the grants took (``SupportAuditEntry/fulfillment``).
    ///
    /// - Parameters:
    ///   - orderId: The order id from the receipt email.
    ///   - actor: Who asks (the support agent), for the audit log.
    ///   - userId: The customer the agent identified, who must not contradict the ledger or the token; `nil` to rely
    ///     on them.
    /// - Returns: The report, with each transaction's ``OrderLookupItem/redelivery`` outcome; a transaction the ledger
    ///   failed for is `rejected` with its ``OrderLookupItem/redeliveryError``, and the others are still delivered.
    /// - Throws: ``IAPError`` as ``lookUp(orderId:actor:)``; `invalidArgument` for an empty actor or a user id that is empty
    ///   or in the pipeline's own namespace (``DeliveryPipeline/unownedPrefix``); `storageFailure` when an
    ///   audit entry cannot be written (before any delivery for the first entry).
    public func redeliver(orderId: String, actor: String, userId: String? = nil) async throws -> OrderLookupReport {
        guard !actor.isEmpty else {
            throw IAPError(.invalidArgument, "a redelivery needs the name of who asks, for the audit log")
        }
        if let userId {
            try DeliveryPipeline.validate(userId: userId)
        }
        try await checkAudit()
        var (report, payloads) = try await fetch(orderId)
        guard report.found else { return report }
        let requested = report.transactions.map {
            SupportAuditEntry.Outcome(transactionId: $0.transactionId, outcome: "requested")
        }
        let requestedHead = try await appendAudit(
            action: "redeliver.requested",
            orderId: orderId,
            actor: actor,
            userId: userId,
            requested
        )

        var outcomes: [SupportAuditEntry.Outcome] = []
        // Reported once the entry after the deliveries is written, with the audit's head after it.
        var redeliveryEvents: [IAPEvent] = []
        for index in report.transactions.indices {
            let (transaction, signed) = payloads[index]
            // A failure here must not end the run: what was delivered before it still goes into the audit entry.
            // Delivered as any road delivers it (the owner, the environment and the product checked, newer data such
            // as a refund applied); a delivery that then still waits for its retry, or was dead-lettered, is called
            // now (the receiver was fixed) instead of waiting for the retry queue.
            var outcome = await pipeline.deliver(transaction, signedTransaction: signed, userId: userId)
            if case .deferred(let waiting, _) = outcome,
                waiting.deliveryState == .retrying || waiting.deliveryState == .deadLettered,
                let retried = try? await pipeline.redeliver(transactionId: waiting.transactionId)
            {
                outcome = retried
            }
            var error: String?
            switch outcome {
            case .deferred(_, let failure), .rejected(let failure):
                error = "\(failure.code): \(failure.message)"
            default:
                break
            }
            report.transactions[index].redelivery = outcome.name
            report.transactions[index].redeliveryError = error
            var granted: LedgerEntry?
            if case .delivered(let entry) = outcome {
                granted = entry
            }
            outcomes.append(
                SupportAuditEntry.Outcome(
                    transactionId: report.transactions[index].transactionId,
                    outcome: outcome.name,
                    error: error,
                    productId: transaction.productId,
                    userId: granted?.userId,
                    units: granted?.grantedUnits
                )
            )
            // Only the report's description: a ledger that cannot be read now leaves the state found before.
            if let entry = try? await store.entry(transactionId: report.transactions[index].transactionId) {
                describe(entry, in: &report.transactions[index])
            }
            redeliveryEvents.append(redeliveryEvent(transaction, outcome: outcome, orderId: orderId, actor: actor))
        }
        let completedHead: String
        do {
            completedHead = try await appendAudit(
                action: "redeliver.completed",
                orderId: orderId,
                actor: actor,
                userId: userId,
                outcomes
            )
        } catch {
            // What was delivered is still reported, with the head of the entry before the deliveries.
            record(redeliveryEvents, auditHead: requestedHead)
            throw error
        }
        record(redeliveryEvents, auditHead: completedHead)
        report.redelivered = true
        return report
    }

    // MARK: - Events

    /// Reports a lookup: `support.lookup`, outcome `found` or `notFound`, with the audit's head after its entry.
    private func reportLookup(_ report: OrderLookupReport, actor: String?, auditHead: String?) {
        events.record(
            IAPEvent(
                time: clock.now,
                event: "support.lookup",
                outcome: report.found ? "found" : "notFound",
                message: "order \(report.orderId)" + (actor.map { " looked up by \($0)" } ?? "")
                    + ": \(report.transactions.count) transaction(s)",
                auditHead: auditHead
            )
        )
    }

    /// Reports the events of a redelivery with the audit's head after its last entry.
    private func record(_ redelivered: [IAPEvent], auditHead: String) {
        for var event in redelivered {
            event.auditHead = auditHead
            events.record(event)
        }
    }

    /// The event of one transaction of a redelivery: `support.redeliver`, outcome the pipeline's.
    private func redeliveryEvent(
        _ transaction: TransactionPayload,
        outcome: DeliveryOutcome,
        orderId: String,
        actor: String
    ) -> IAPEvent {
        let failure: IAPError? =
            switch outcome {
            case .deferred(_, let error), .rejected(let error): error
            default: nil
            }
        let owner = outcome.entry?.owner
        return IAPEvent(
            time: clock.now,
            event: "support.redeliver",
            userId: owner,
            productId: transaction.productId,
            transactionId: transaction.transactionId,
            originalTransactionId: transaction.originalTransactionId,
            environment: transaction.environment?.rawValue,
            outcome: outcome.name,
            errorCode: failure?.code.rawValue,
            message: "order \(orderId) redelivered by \(actor)" + (failure.map { ": \($0.message)" } ?? "")
        )
    }

    // MARK: - Steps

    /// Refuses an audited action before it acts when the audit log would refuse its entry.
    private func checkAudit() async throws {
        do {
            try await auditLog.checkWritable()
        } catch {
            throw IAPError.wrapping(error, as: .storageFailure, "the audit log cannot be written")
        }
    }

    /// Appends an entry; the hash of the audit's last entry after it.
    private func appendAudit(
        action: String,
        orderId: String,
        actor: String,
        userId: String?,
        _ outcomes: [SupportAuditEntry.Outcome]
    ) async throws -> String {
        var entry = SupportAuditEntry(
            at: clock.now,
            actor: actor,
            action: action,
            orderId: orderId,
            userId: userId,
            outcomes: outcomes
        )
        entry.fulfillment = fulfillment
        do {
            return try SupportAuditChain.head(after: try await auditLog.append(entry)).lastHash
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
        // One Production client per app: an order is one app's, and each app's client is asked until one knows it.
        let production = clients.all.filter { $0.environment == .production }
        guard !production.isEmpty else {
            throw IAPError(
                .unsupportedOperation,
                "Look Up Order ID exists in the Production App Store Server API only (sandbox purchases have no order "
                    + "id); the clients given are for "
                    + clients.all.map(\.environment.rawValue).joined(separator: ", ")
            )
        }
        var response = try await production[0].lookUpOrderId(orderId)
        for client in production.dropFirst() where response.status != .valid {
            response = try await client.lookUpOrderId(orderId)
        }
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
        if let owner = entry.owner {
            item.owner = owner
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
