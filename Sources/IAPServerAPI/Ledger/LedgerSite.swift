#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// A ledger and everything kept beside it: the reconciliation checkpoints, the support audit, the lock that lets
/// one instance of a fleet reconcile at a time, and the catalog saved with the ledger; with the claim policy that
/// suits it.
///
/// A site is what a tool or a server is given instead of a store: it knows where each of these lives for its backend,
/// so nobody else does. `FileLedgerSite` (in `IAPStorageFile`) keeps them in the ledger's directory, beside the store's
/// own files; `PostgresLedgerSite` (in `IAPStoragePostgres`) in the ledger's schema, so that a fleet shares nothing on
/// local disk.
///
/// ```swift
/// func pipeline(
///     site: any LedgerSite,
///     verifier: some Verifier,
///     catalog: some ProductCatalog,
///     hook: some FulfillmentHook
/// ) -> DeliveryPipeline {
///     DeliveryPipeline(
///         verifier: verifier,
///         catalog: catalog,
///         store: site.store,
///         hook: hook,
///         retryPolicy: site.retryPolicy(for: .command)
///     )
/// }
/// ```
///
/// ## Implementation requirements
/// - ``store`` is open from the site's creation until ``close()``.
/// - Each side store (``reconciliationCheckpoints()``, ``supportAudit(observer:)``) is opened once, the first time it
///   is asked for, and the same one is returned after; ``close()`` closes every one of them, then the store. After
///   ``close()``, asking for one throws ``IAPError`` `storageFailure`; closing twice is harmless.
/// - A site opened ``LedgerAccess/readOnly`` writes nothing: what would write throws `unsupportedOperation`.
/// - ``supportAudit(observer:)`` is guarded by the head the ledger keeps (``SupportAuditHeadKeeper``): a log that does
///   not match it, or its own head, opens refusing every append (``LedgerGuardedSupportAuditLog/Standing/refused(_:)``)
///   rather than throwing, so that purchases go on.
/// - ``description`` names the ledger for people and never holds a password.
/// - Safe to call from many tasks at once.
public protocol LedgerSite: Sendable, CustomStringConvertible {
    /// The ledger.
    var store: any ListableEntitlementStore { get }

    /// Where the ledger is, for people (a directory, a schema); never a password.
    var description: String { get }

    /// Whether several processes may deliver from the ledger at once, so that a delivery claim must outlive the call
    /// that takes it.
    var isShared: Bool { get }

    /// The claim policy that suits the ledger and its use: a ledger only one process opens at a time (a file
    /// ledger) needs no claim that outlives a command's call, since a claim found there is a dead process's; a shared
    /// one keeps the default, so that another instance's delivery in progress is not taken over; a server's claims
    /// hold ``LedgerUse/serverClaimDuration``.
    ///
    /// - Parameter use: Who delivers.
    /// - Returns: The policy for the `DeliveryPipeline`.
    func retryPolicy(for use: LedgerUse) -> RetryPolicy

    /// Where the ``Reconciler`` keeps each customer's history revisions between runs, beside the ledger.
    ///
    /// - Returns: The store, opened once and closed by ``close()``.
    /// - Throws: ``IAPError`` when it cannot be opened (`unsupportedOperation` for a read-only site).
    func reconciliationCheckpoints() async throws -> any ReconciliationCheckpointStore

    /// The ledger's own support audit, guarded by the head the ledger keeps.
    ///
    /// - Parameter observer: Told whether support may write to the audit, at once and at every change (the first
    ///   call's observer; later calls return the same audit).
    /// - Returns: The audit, opened once and closed by ``close()``.
    /// - Throws: ``IAPError`` when it cannot be opened (another process holds it, permissions; `unsupportedOperation`
    ///   for a read-only site); never for a log that does not match its head.
    func supportAudit(
        observer: @escaping @Sendable (LedgerGuardedSupportAuditLog.Standing) -> Void
    ) async throws -> LedgerGuardedSupportAuditLog

    /// Reads and checks the ledger's own support audit, writing nothing: the chain, the head recorded beside it, and
    /// the head the ledger keeps (read first, so that an append meanwhile leaves the log ahead, which is no
    /// tampering).
    ///
    /// - Returns: What was found, with ``SupportAuditVerification/ledgerHead`` set.
    /// - Throws: ``IAPError`` when the audit or the ledger cannot be read.
    func verifySupportAudit() async throws -> SupportAuditVerification

    /// Appends a reseal entry to the ledger's own support audit, after whatever it holds now, and sets the head the
    /// ledger keeps to it, so that support may write to the audit again (`iap support audit reseal`).
    ///
    /// Reseal from a site that has not opened its audit (``supportAudit(observer:)``): a file log is held by the one
    /// that opened it, and a reseal beside it throws `storageLocked`. A guard open elsewhere on a shared ledger sees
    /// the reseal at its next append.
    ///
    /// - Parameter entry: The `audit.reseal` entry; the log seals it.
    /// - Returns: The head after it.
    /// - Throws: ``IAPError`` when it cannot be written; `unsupportedOperation` for a read-only site.
    func resealSupportAudit(with entry: SupportAuditEntry) async throws -> SupportAuditHead

    /// The lock of a name that every process on this ledger shares.
    ///
    /// - Parameter name: What the lock guards, such as ``LedgerSite/reconciliationLockName``.
    /// - Returns: The lock; nothing is held until its `tryLock()`.
    /// - Throws: ``IAPError`` `invalidArgument` for a bad name, `unsupportedOperation` for a read-only site.
    func exclusiveRunLock(named name: String) throws -> any ExclusiveRunLock

    /// The catalog saved with the ledger (JSON, as `StaticProductCatalog/jsonRepresentation()` writes it).
    ///
    /// - Returns: The catalog's bytes, or `nil` when none is saved.
    /// - Throws: ``IAPError`` when it cannot be read.
    func savedCatalog() async throws -> Data?

    /// Saves a catalog with the ledger, replacing the one saved before, for later commands and other instances.
    ///
    /// - Parameter data: The catalog's JSON.
    /// - Throws: ``IAPError`` when it cannot be written; `unsupportedOperation` for a read-only site.
    func saveCatalog(_ data: Data) async throws

    /// Closes every side store opened, then the ledger.
    func close() async
}

extension LedgerSite {
    /// The name of the lock that lets one instance at a time reconcile, the same for every instance on a ledger.
    public static var reconciliationLockName: String { "reconcile" }

    /// The lock that lets one instance of a fleet at a time reconcile: ``exclusiveRunLock(named:)`` of
    /// ``reconciliationLockName``.
    ///
    /// - Returns: The lock.
    /// - Throws: As ``exclusiveRunLock(named:)``.
    public func reconciliationLock() throws -> any ExclusiveRunLock {
        try exclusiveRunLock(named: Self.reconciliationLockName)
    }
}
