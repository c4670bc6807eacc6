#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore
public import IAPServerAPI

/// A PostgreSQL ledger and what is kept beside it, all in the ledger's schema (a ``LedgerSite``), so that a fleet
/// shares nothing on local disk.
///
/// Beside the ledger's tables, the schema holds the catalog saved with the ledger (`iap_catalog`,
/// ``PostgresEntitlementStore/savedCatalog()``), the reconciliation checkpoints
/// (``PostgresReconciliationCheckpointStore``) and the support audit (``PostgresSupportAuditLog``, guarded by the head
/// the ledger keeps in `iap_ledger_identity`); the run locks are advisory locks keyed by the schema and the lock's
/// name (``PostgresAdvisoryLock``). The side stores share the ledger's connections.
///
/// Every instance of a fleet may deliver from the ledger at once (``isShared`` is `true`), so a command's claims
/// keep the default duration and another instance's delivery in progress is not taken over.
///
/// ```swift
/// let site = try await PostgresLedgerSite(
///     configuration: .init(url: "postgres://iap@db.internal/iap", schema: "public")
/// )
/// let lock = try site.reconciliationLock()
/// // ... reconcile when the lock is free
/// await site.close()
/// ```
public actor PostgresLedgerSite: LedgerSite {
    /// The ledger.
    public nonisolated let postgresStore: PostgresEntitlementStore

    private var checkpoints: PostgresReconciliationCheckpointStore?
    private var audit: Task<LedgerGuardedSupportAuditLog, any Error>?
    private var closed = false

    /// Opens the ledger (creating its schema when the configuration's
    /// ``PostgresEntitlementStore/Configuration/createIfMissing`` says so).
    ///
    /// - Parameter configuration: The server, schema and password.
    /// - Throws: ``IAPError`` as ``PostgresEntitlementStore/init(configuration:)`` throws: `invalidConfiguration`,
    ///   `notFound` for a ledger that does not exist and is not to be created, `storageUnavailable`.
    public init(configuration: PostgresEntitlementStore.Configuration) async throws {
        self.init(store: try await PostgresEntitlementStore(configuration: configuration))
    }

    /// A site around a store already opened; the site closes it.
    ///
    /// - Parameter store: The ledger.
    public init(store: PostgresEntitlementStore) {
        postgresStore = store
    }

    /// The ledger.
    public nonisolated var store: any ListableEntitlementStore { postgresStore }

    /// The ledger's schema, such as `PostgreSQL schema public` (never the URL, which may hold a password).
    public nonisolated var description: String { "PostgreSQL schema \(postgresStore.configuration.schema)" }

    /// `true`: every instance of a fleet may deliver from the ledger at once.
    public nonisolated var isShared: Bool { true }

    /// A server's claims hold ``LedgerUse/serverClaimDuration``; a command's keep ``RetryPolicy``'s default, since a
    /// claim found may be another instance's delivery in progress.
    public nonisolated func retryPolicy(for use: LedgerUse) -> RetryPolicy {
        switch use {
        case .server: RetryPolicy(claimDuration: LedgerUse.serverClaimDuration)
        case .command: RetryPolicy()
        }
    }

    /// A ``PostgresReconciliationCheckpointStore`` in the ledger's schema, made once.
    public func reconciliationCheckpoints() async throws -> any ReconciliationCheckpointStore {
        try checkOpen()
        if let checkpoints {
            return checkpoints
        }
        let made = PostgresReconciliationCheckpointStore(ledger: postgresStore)
        checkpoints = made
        return made
    }

    /// The ``PostgresSupportAuditLog`` of the ledger's schema, guarded by the head the ledger keeps, opened once.
    public func supportAudit(
        observer: @escaping @Sendable (LedgerGuardedSupportAuditLog.Standing) -> Void
    ) async throws -> LedgerGuardedSupportAuditLog {
        try checkOpen()
        if let audit {
            return try await audit.value
        }
        let store = postgresStore
        let opening = Task {
            try await LedgerGuardedSupportAuditLog(
                log: try await PostgresSupportAuditLog(store: store),
                keeper: store,
                observer: observer
            )
        }
        audit = opening
        do {
            return try await opening.value
        } catch {
            audit = nil
            throw error
        }
    }

    /// Checks the schema's support audit against the head the ledger keeps.
    public func verifySupportAudit() async throws -> SupportAuditVerification {
        let ledgerHead = try await postgresStore.supportAuditHead()
        return try await PostgresSupportAuditLog(store: postgresStore).verify().checked(againstLedgerHead: ledgerHead)
    }

    /// Appends the entry to the schema's support audit after what it holds
    /// (``PostgresSupportAuditLog/reseal(_:)``), then records its head in the ledger.
    public func resealSupportAudit(with entry: SupportAuditEntry) async throws -> SupportAuditHead {
        try checkOpen()
        let stored = try await PostgresSupportAuditLog(store: postgresStore).reseal(entry)
        let head = try SupportAuditChain.head(after: stored)
        try await postgresStore.recordSupportAuditHead(head, resealing: true)
        return head
    }

    /// A ``PostgresAdvisoryLock`` on the ledger's database and schema.
    public nonisolated func exclusiveRunLock(named name: String) throws -> any ExclusiveRunLock {
        try postgresStore.exclusiveRunLock(named: name)
    }

    /// The catalog of `iap_catalog`, or `nil`.
    public func savedCatalog() async throws -> Data? {
        try await postgresStore.savedCatalog()
    }

    /// Replaces the catalog of `iap_catalog`.
    public func saveCatalog(_ data: Data) async throws {
        try await postgresStore.saveCatalog(data)
    }

    /// Closes the ledger, whose connections the checkpoints and the audit share.
    public func close() async {
        closed = true
        if let audit {
            _ = try? await audit.value
        }
        audit = nil
        checkpoints = nil
        await postgresStore.close()
    }

    private func checkOpen() throws {
        guard !closed else {
            throw IAPError(.storageFailure, "the ledger site (\(description)) is closed")
        }
    }
}
