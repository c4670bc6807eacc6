#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension DeliveryPipeline {
    /// Whether the ``sandboxPolicy`` flags an entry: a purchase of a test environment on a production server under
    /// ``SandboxPolicy/grantAndFlag``.
    ///
    /// - Parameter entry: A ledger entry.
    /// - Returns: `true` when the entry is flagged.
    public func isFlagged(_ entry: LedgerEntry) -> Bool {
        sandboxPolicy == .grantAndFlag && isTestPurchase(entry.transaction)
    }

    /// Whether the sandbox policy covers a transaction: one of a test environment, on a production server.
    func isTestPurchase(_ transaction: TransactionPayload) -> Bool {
        guard isProductionServer, let environment = transaction.environment, environment != .production else {
            return false
        }
        return verifier.acceptedEnvironments(bundleId: transaction.bundleId).map { $0.contains(.production) } ?? true
    }

    /// Refuses signed data of one environment for a ledger entry of another.
    ///
    /// The environment is part of a purchase's identity: the App Store does not promise that transaction ids of the
    /// sandbox and of production never meet, and any two test stores make them meet. So a transaction (or a
    /// notification, a reconciliation, a support lookup) of the Sandbox never changes, revokes or relabels a
    /// Production entry with the same id, nor the other way round: it is refused with `environmentMismatch` and the
    /// event `delivery.environmentConflict`, and the entry is left as it was. Data that names no environment, or an
    /// entry whose data named none, is not compared.
    ///
    /// - Parameters:
    ///   - transaction: The incoming, verified transaction.
    ///   - entry: The ledger's entry with the same transaction id (or original transaction id).
    /// - Throws: ``IAPError`` `environmentMismatch` when the two name different environments.
    ///
    /// The app is part of it too: signed data of one app (bundle id) never changes an entry of another with the same
    /// id, on a server of several apps; it is refused with `bundleIdMismatch` and the event `delivery.appConflict`.
    func checkEnvironment(of transaction: TransactionPayload, against entry: LedgerEntry) throws {
        guard let error = Self.environmentConflict(transaction, entry) else { return }
        let event = error.code == .bundleIdMismatch ? "delivery.appConflict" : "delivery.environmentConflict"
        report(event, transaction, error: error)
        throw error
    }

    /// The error for signed data of another app or another environment than the entry's, or `nil` when they agree.
    static func environmentConflict(_ transaction: TransactionPayload, _ entry: LedgerEntry) -> IAPError? {
        if let error = appConflict(transaction, entry.transaction, entryId: entry.transactionId) {
            return error
        }
        guard let incoming = transaction.environment, let recorded = entry.environment, incoming != recorded else {
            return nil
        }
        return IAPError(
            .environmentMismatch,
            "transaction \(transaction.transactionId ?? entry.transactionId) of the \(incoming.rawValue) environment "
                + "matches a ledger entry of the \(recorded.rawValue) environment (transaction \(entry.transactionId)); "
                + "the entry is left as it was"
        )
    }

    /// The error for signed data of one app (bundle id) meeting a ledger entry of another, or `nil` when they are of
    /// one app or either names none: a transaction id is an app's own, so nothing of one app touches another's entries.
    static func appConflict(
        _ transaction: TransactionPayload,
        _ recorded: TransactionPayload,
        entryId: String
    ) -> IAPError? {
        guard let incoming = transaction.bundleId, let other = recorded.bundleId, incoming != other else { return nil }
        return IAPError(
            .bundleIdMismatch,
            "transaction \(transaction.transactionId ?? entryId) of \(incoming) matches a ledger entry of "
                + "\(other) (transaction \(entryId)); the entry is left as it was"
        )
    }

    /// Refuses a new transaction that continues a purchase family (a renewal, a restore: another transaction id, the
    /// same original transaction id) the ledger holds in another environment: a Sandbox renewal never extends a
    /// Production subscription, nor goes to its owner. A first purchase is its own family, checked by its id.
    ///
    /// - Returns: The family's entries (none for a first purchase), for what else a renewal inherits.
    @discardableResult
    func checkFamilyEnvironment(of transaction: TransactionPayload, transactionId: String) async throws
        -> [LedgerEntry]
    {
        guard let original = transaction.originalTransactionId, !original.isEmpty, original != transactionId else {
            return []
        }
        let family = try await store.entries(originalTransactionId: original)
        if let member = family.first(where: {
            Self.appConflict(transaction, $0.transaction, entryId: $0.transactionId) != nil
        }),
            let other = member.transaction.bundleId
        {
            let error = IAPError(
                .bundleIdMismatch,
                "transaction \(transactionId) of \(transaction.bundleId ?? "?") continues original transaction "
                    + "\(original), which the ledger holds for \(other); nothing was recorded"
            )
            report("delivery.appConflict", transaction, error: error)
            throw error
        }
        guard let incoming = transaction.environment,
            let recorded = family.lazy.compactMap(\.environment).first(where: { $0 != incoming })
        else { return family }
        let error = IAPError(
            .environmentMismatch,
            "transaction \(transactionId) of the \(incoming.rawValue) environment continues original transaction "
                + "\(original), which the ledger holds in the \(recorded.rawValue) environment; nothing was recorded"
        )
        report("delivery.environmentConflict", transaction, error: error)
        throw error
    }

    /// Refuses a renewal info of one environment for a purchase family the ledger holds in another (a Sandbox
    /// notification about a Production subscription's original transaction id): the environment is part of a
    /// purchase's identity, as ``deliver(_:signedTransaction:userId:orderId:)`` says.
    ///
    /// - Parameters:
    ///   - renewalInfo: The incoming, verified renewal info.
    ///   - bundleId: The app that sent it (a notification's bundle id), or `nil` when it is not known.
    /// - Throws: ``IAPError`` `environmentMismatch` when an entry of its original transaction names another
    ///   environment, `bundleIdMismatch` when the family is another app's; a store failure.
    ///
    /// A renewal info names no app; given the app that sent it (a notification's bundle id), it is refused with
    /// `bundleIdMismatch` and the event `delivery.appConflict` when the ledger holds its purchase family for another
    /// app.
    public func checkEnvironment(of renewalInfo: RenewalInfoPayload, bundleId: String? = nil) async throws {
        if let bundleId, let original = renewalInfo.originalTransactionId {
            try await checkApp(of: renewalInfo, original: original, bundleId: bundleId)
        }
        guard let incoming = renewalInfo.environment, let original = renewalInfo.originalTransactionId else { return }
        let stored = try await store.renewalInfo(originalTransactionId: original)?.environment
        let recorded =
            if let stored, stored != incoming { stored } else {
                try await otherEnvironment(ofFamily: original, than: incoming)
            }
        guard let recorded else { return }
        let error = IAPError(
            .environmentMismatch,
            "the renewal info of original transaction \(original) of the \(incoming.rawValue) environment meets a "
                + "purchase family the ledger holds in the \(recorded.rawValue) environment; it is left as it was"
        )
        events.record(
            IAPEvent(
                time: clock.now,
                event: "delivery.environmentConflict",
                originalTransactionId: original,
                environment: incoming.rawValue,
                outcome: "rejected",
                errorCode: error.code.rawValue,
                message: error.message
            )
        )
        throw error
    }

    /// Refuses a renewal info sent by one app for a purchase family the ledger holds for another.
    private func checkApp(of renewalInfo: RenewalInfoPayload, original: String, bundleId: String) async throws {
        let family = try await store.entries(originalTransactionId: original)
        guard let other = family.lazy.compactMap(\.transaction.bundleId).first(where: { $0 != bundleId }) else {
            return
        }
        let error = IAPError(
            .bundleIdMismatch,
            "the renewal info of original transaction \(original) sent for \(bundleId) meets a purchase family the "
                + "ledger holds for \(other); it is left as it was"
        )
        events.record(
            IAPEvent(
                time: clock.now,
                event: "delivery.appConflict",
                originalTransactionId: original,
                environment: renewalInfo.environment?.rawValue,
                outcome: "rejected",
                errorCode: error.code.rawValue,
                message: error.message
            )
        )
        throw error
    }

    /// The environment of an entry of a purchase family other than `incoming`, or `nil` when every entry agrees.
    private func otherEnvironment(
        ofFamily original: String,
        than incoming: AppStoreEnvironment
    ) async throws -> AppStoreEnvironment? {
        try await store.entries(originalTransactionId: original).lazy.compactMap(\.environment)
            .first { $0 != incoming }
    }

    /// Lets a new transaction in, or refuses it by the sandbox policy.
    func admit(_ transaction: TransactionPayload, transactionId: String) throws {
        guard sandboxPolicy == .refuse, isTestPurchase(transaction) else { return }
        let environment = transaction.environment?.rawValue ?? "?"
        let error = IAPError(
            .sandboxPurchaseRefused,
            "transaction \(transactionId) of the \(environment) environment is refused: this production server's "
                + "sandbox policy is refuse"
        )
        report("delivery.sandboxRefused", transaction, error: error)
        throw error
    }
}
