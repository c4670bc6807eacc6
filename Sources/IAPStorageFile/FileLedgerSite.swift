#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore
public import IAPServerAPI

/// A file ledger and what is kept beside it, all in the ledger's directory (a ``LedgerSite``).
///
/// Beside the files of the ``FileEntitlementStore``, the directory holds:
/// - ``catalogFileName`` (`catalog.json`): the catalog saved with the ledger, a private file replaced atomically;
/// - ``reconciliationCheckpointsFileName`` (`reconciliation-checkpoints.jsonl`): the reconciliation checkpoints
///   (``FileReconciliationCheckpointStore``);
/// - ``supportAuditFileName`` (`support-audit.jsonl`, and its head `support-audit.jsonl.head`): the support audit
///   (``FileSupportAuditLog``), anchored to the ledger's identity and guarded by the head the ledger keeps in its
///   journal;
/// - `NAME.lock`, such as `reconcile.lock`: the run locks (``FileExclusiveRunLock``).
///
/// One process at a time opens a file ledger to write (the directory's lock), so the ledger is not shared
/// (``isShared`` is `false`) and a command's delivery claims need not outlive its calls.
///
/// ```swift
/// let site = try FileLedgerSite(directory: URL(fileURLWithPath: "ledger"), access: .create)
/// let checkpoints = try await site.reconciliationCheckpoints()
/// // ... reconcile with site.store and checkpoints
/// await site.close()
/// ```
public actor FileLedgerSite: LedgerSite {
    /// The name of the saved catalog in the ledger's directory.
    public static let catalogFileName = "catalog.json"
    /// The name of the reconciliation checkpoints in the ledger's directory.
    public static let reconciliationCheckpointsFileName = "reconciliation-checkpoints.jsonl"
    /// The name of the support audit in the ledger's directory (its head is beside it, with `.head` appended).
    public static let supportAuditFileName = "support-audit.jsonl"
    /// The largest saved catalog read: 64 MiB.
    static let maximumCatalogSize = 64 << 20

    /// The ledger's directory.
    public nonisolated let directory: URL
    /// The ledger.
    public nonisolated let fileStore: FileEntitlementStore
    /// Whether the site only reads.
    public nonisolated let isReadOnly: Bool

    private var checkpoints: FileReconciliationCheckpointStore?
    private var audit: Task<LedgerGuardedSupportAuditLog, any Error>?
    private var auditLog: FileSupportAuditLog?
    private var closed = false

    /// Opens the ledger in a directory.
    ///
    /// - Parameters:
    ///   - directory: The ledger's directory.
    ///   - access: How to open it; it sets ``FileEntitlementStore/Options-swift.struct/access`` and
    ///     ``FileEntitlementStore/Options-swift.struct/createIfMissing`` of `options`.
    ///   - options: How the store writes and compacts.
    /// - Throws: ``IAPError`` as ``FileEntitlementStore/init(directory:options:)`` throws: `notFound` for a ledger that
    ///   does not exist (unless ``LedgerAccess/create``), `storageLocked` while another process holds it to write.
    public init(
        directory: URL,
        access: LedgerAccess = .readWrite,
        options: FileEntitlementStore.Options = .init()
    ) throws {
        var options = options
        options.access = access == .readOnly ? .readOnly : .readWrite
        options.createIfMissing = access == .create
        self.init(store: try FileEntitlementStore(directory: directory, options: options))
    }

    /// A site around a store already opened (read-only when the store is); the site closes it.
    ///
    /// - Parameter store: The ledger.
    public init(store: FileEntitlementStore) {
        fileStore = store
        directory = store.directory
        isReadOnly = store.options.access == .readOnly
    }

    /// The ledger.
    public nonisolated var store: any ListableEntitlementStore { fileStore }

    /// The ledger's directory.
    public nonisolated var description: String { directory.path }

    /// `false`: one process at a time opens a file ledger to write.
    public nonisolated var isShared: Bool { false }

    /// A server's claims hold ``LedgerUse/serverClaimDuration``; a command's need not outlive its calls
    /// (`claimDuration` zero), since only the process that holds the directory delivers from it and a claim found at
    /// start is a dead process's.
    public nonisolated func retryPolicy(for use: LedgerUse) -> RetryPolicy {
        switch use {
        case .server: RetryPolicy(claimDuration: LedgerUse.serverClaimDuration)
        case .command: RetryPolicy(claimDuration: .zero)
        }
    }

    /// The path of a file in the ledger's directory.
    ///
    /// - Parameter name: The file's name, such as ``supportAuditFileName``.
    /// - Returns: The path.
    public nonisolated func path(of name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    /// ``reconciliationCheckpointsFileName`` in the ledger's directory, opened (and created) once.
    public func reconciliationCheckpoints() async throws -> any ReconciliationCheckpointStore {
        try checkWritable("keep reconciliation checkpoints")
        if let checkpoints {
            return checkpoints
        }
        let opened = try FileReconciliationCheckpointStore(path: path(of: Self.reconciliationCheckpointsFileName))
        checkpoints = opened
        return opened
    }

    /// ``supportAuditFileName`` in the ledger's directory, opened (and created) once, guarded by the head the ledger
    /// keeps; a log that does not match its own head opens refusing.
    public func supportAudit(
        observer: @escaping @Sendable (LedgerGuardedSupportAuditLog.Standing) -> Void
    ) async throws -> LedgerGuardedSupportAuditLog {
        try checkWritable("append to the support audit")
        if let audit {
            return try await audit.value
        }
        let opening = Task { try await openSupportAudit(observer: observer) }
        audit = opening
        do {
            return try await opening.value
        } catch {
            audit = nil
            throw error
        }
    }

    private func openSupportAudit(
        observer: @escaping @Sendable (LedgerGuardedSupportAuditLog.Standing) -> Void
    ) async throws -> LedgerGuardedSupportAuditLog {
        let ledgerId = try fileStore.ledgerIdentity()
        let log: FileSupportAuditLog
        do {
            log = try FileSupportAuditLog(path: path(of: Self.supportAuditFileName), ledgerId: ledgerId)
        } catch let error as IAPError where error.code == .storageCorrupted {
            // A log that does not match its own head: open refusing, so that the rest goes on.
            return LedgerGuardedSupportAuditLog(unopened: error, keeper: fileStore, observer: observer)
        }
        do {
            let guarded = try await LedgerGuardedSupportAuditLog(log: log, keeper: fileStore, observer: observer)
            auditLog = log
            return guarded
        } catch {
            await log.close()
            throw error
        }
    }

    /// Checks ``supportAuditFileName`` against the head the ledger keeps, without opening the log for writing; a
    /// read-only site reads the ledger's identity without making one.
    public func verifySupportAudit() async throws -> SupportAuditVerification {
        let identity =
            isReadOnly ? try FileEntitlementStore.ledgerIdentity(in: directory) : try fileStore.ledgerIdentity()
        let ledgerHead = try await fileStore.supportAuditHead()
        let result = try FileSupportAuditLog.verify(path: path(of: Self.supportAuditFileName), ledgerId: identity ?? "")
            .checked(againstLedgerHead: ledgerHead)
        return Self.anchored(result, identity: identity, directory: directory)
    }

    /// Checks a support audit file anchored to the identity of the file ledger in a directory, without opening the
    /// ledger and without writing: its chain and the head beside it, not the head the ledger keeps (the ledger keeps
    /// the head of its own audit only). For an audit written elsewhere than the ledger's own.
    ///
    /// - Parameters:
    ///   - path: The audit file.
    ///   - directory: The ledger's directory.
    /// - Returns: What was found; a log with entries in a ledger without an identity is a problem.
    /// - Throws: ``IAPError`` when a file cannot be read.
    public static func verifySupportAudit(at path: String, ledgerIn directory: URL) throws -> SupportAuditVerification {
        let identity = try FileEntitlementStore.ledgerIdentity(in: directory)
        let result = try FileSupportAuditLog.verify(path: path, ledgerId: identity ?? "")
        return anchored(result, identity: identity, directory: directory)
    }

    /// The result with a problem first when the ledger has no identity for the log's chain to start from.
    private static func anchored(
        _ result: SupportAuditVerification,
        identity: String?,
        directory: URL
    ) -> SupportAuditVerification {
        guard identity == nil, result.entryCount > 0 || result.recordedHead != nil else {
            return result
        }
        var result = result
        result.problems.insert(
            .init(
                entry: nil,
                location: "",
                message: "the ledger has no identity (\(directory.appendingPathComponent("ledger-id").path) is "
                    + "missing), so the chain's anchor cannot hold"
            ),
            at: 0
        )
        return result
    }

    /// Appends the entry to ``supportAuditFileName`` after what it holds (``FileSupportAuditLog/reseal(path:ledgerId:entry:)``),
    /// then records its head in the ledger's journal.
    public func resealSupportAudit(with entry: SupportAuditEntry) async throws -> SupportAuditHead {
        try checkWritable("reseal the support audit")
        let stored = try FileSupportAuditLog.reseal(
            path: path(of: Self.supportAuditFileName),
            ledgerId: try fileStore.ledgerIdentity(),
            entry: entry
        )
        let head = try SupportAuditChain.head(after: stored)
        try await fileStore.recordSupportAuditHead(head, resealing: true)
        return head
    }

    /// A ``FileExclusiveRunLock``: `NAME.lock` in the ledger's directory.
    public nonisolated func exclusiveRunLock(named name: String) throws -> any ExclusiveRunLock {
        guard !isReadOnly else {
            throw Self.readOnlyRefusal("take a run lock")
        }
        return try FileExclusiveRunLock(name: name, directory: directory.path)
    }

    /// ``catalogFileName`` in the ledger's directory, or `nil` when there is none.
    public func savedCatalog() async throws -> Data? {
        try SystemFile.readContents(of: path(of: Self.catalogFileName), maximumSize: Self.maximumCatalogSize)
            .map { Data($0) }
    }

    /// Replaces ``catalogFileName`` in the ledger's directory atomically (a private file).
    public func saveCatalog(_ data: Data) async throws {
        try checkWritable("save a catalog")
        try SystemFile.replaceContents(of: path(of: Self.catalogFileName), with: [UInt8](data))
    }

    /// Closes the support audit and the checkpoints, then the ledger.
    public func close() async {
        closed = true
        if let audit {
            _ = try? await audit.value
        }
        audit = nil
        await auditLog?.close()
        auditLog = nil
        await checkpoints?.close()
        checkpoints = nil
        await fileStore.close()
    }

    private func checkWritable(_ action: String) throws {
        guard !closed else {
            throw IAPError(.storageFailure, "the ledger site \(directory.path) is closed")
        }
        guard !isReadOnly else {
            throw Self.readOnlyRefusal(action)
        }
    }

    private static func readOnlyRefusal(_ action: String) -> IAPError {
        IAPError(.unsupportedOperation, "the ledger is open read-only: cannot \(action)")
    }
}
