import Foundation
import IAPCore
import IAPServerAPI
import IAPStorageFile
import Testing

/// A file ledger's site: the store and what is kept beside it in its directory, under the names existing ledgers use.
struct FileLedgerSiteTests {
    static let entry = SupportAuditEntry(
        at: Date(millisecondsSince1970: 1_767_225_600_000),
        actor: "agent-7",
        action: "lookup",
        orderId: "ORDER1",
        userId: nil,
        outcomes: []
    )

    @Test func createsALedgerAndKeepsEachSideStoreUnderItsNameInTheDirectory() async throws {
        try await withTemporaryDirectory { directory in
            let site = try FileLedgerSite(directory: directory.url, access: .create)
            let checkpoints = try await site.reconciliationCheckpoints()
            try await checkpoints.saveCheckpoint(
                .init(customerKey: "alice", historyRevision: "r1", refundRevision: nil, reconciledAt: Fixture.date(0))
            )
            // Asked twice, the same store.
            let again = try await site.reconciliationCheckpoints()
            #expect(try await again.checkpoint(customerKey: "alice")?.historyRevision == "r1")
            let standing = LockedStandings()
            let audit = try await site.supportAudit(observer: standing.record)
            try await audit.append(Self.entry)
            #expect(await audit.standing == .writable)
            #expect(standing.all == [.writable])
            let lease = try #require(try await site.reconciliationLock().tryLock())
            await lease.release()
            let catalog = Data(#"{"products":[]}"#.utf8)
            #expect(try await site.savedCatalog() == nil)
            try await site.saveCatalog(catalog)
            #expect(try await site.savedCatalog() == catalog)

            let names = try directory.names()
            for name in [
                FileLedgerSite.catalogFileName, FileLedgerSite.reconciliationCheckpointsFileName,
                FileLedgerSite.supportAuditFileName, "reconcile.lock",
            ] {
                #expect(names.contains(name), "\(names)")
            }
            #expect(FileLedgerSite.catalogFileName == "catalog.json")
            #expect(FileLedgerSite.reconciliationCheckpointsFileName == "reconciliation-checkpoints.jsonl")
            #expect(FileLedgerSite.supportAuditFileName == "support-audit.jsonl")
            let verification = try await site.verifySupportAudit()
            #expect(verification.isIntact && verification.entryCount == 1, "\(verification.problems)")
            #expect(verification.ledgerHead == verification.head)
            await site.close()
        }
    }

    @Test func closeClosesEverySideStoreAndTheLedger() async throws {
        try await withTemporaryDirectory { directory in
            let site = try FileLedgerSite(directory: directory.url, access: .create)
            _ = try await site.reconciliationCheckpoints()
            _ = try await site.supportAudit(observer: { _ in })
            await site.close()
            await #expect(throws: IAPError(.storageFailure)) { try await site.reconciliationCheckpoints() }
            await #expect(throws: IAPError(.storageFailure)) { try await site.store.statistics() }
            // Every file lock is free: another process could open each of them now.
            let checkpoints = try FileReconciliationCheckpointStore(
                path: site.path(of: FileLedgerSite.reconciliationCheckpointsFileName)
            )
            await checkpoints.close()
            let log = try FileSupportAuditLog(
                path: site.path(of: FileLedgerSite.supportAuditFileName),
                ledgerId: try FileEntitlementStore.ledgerIdentity(in: directory.url) ?? ""
            )
            await log.close()
            let reopened = try FileLedgerSite(directory: directory.url)
            await reopened.close()
        }
    }

    @Test func readWriteAndReadOnlyOpenOnlyALedgerThatExists() async throws {
        try await withTemporaryDirectory { directory in
            let missing = directory.url.appending(path: "ledger", directoryHint: .isDirectory)
            #expect(throws: IAPError(.notFound)) { try FileLedgerSite(directory: missing, access: .readWrite) }
            #expect(throws: IAPError(.notFound)) { try FileLedgerSite(directory: missing, access: .readOnly) }
            #expect(!FileManager.default.fileExists(atPath: missing.path))
        }
    }

    @Test func aReadOnlySiteReadsBesideAWriterAndWritesNothing() async throws {
        try await withTemporaryDirectory { directory in
            let writer = try FileLedgerSite(directory: directory.url, access: .create)
            try await writer.saveCatalog(Data("{}".utf8))
            _ = try await writer.supportAudit(observer: { _ in }).append(Self.entry)
            let before = try directory.names()

            let reader = try FileLedgerSite(directory: directory.url, access: .readOnly)
            #expect(reader.isReadOnly)
            #expect(try await reader.savedCatalog() == Data("{}".utf8))
            #expect(try await reader.verifySupportAudit().entryCount == 1)
            await #expect(throws: IAPError(.unsupportedOperation)) { try await reader.reconciliationCheckpoints() }
            await #expect(throws: IAPError(.unsupportedOperation)) {
                try await reader.supportAudit(observer: { _ in })
            }
            await #expect(throws: IAPError(.unsupportedOperation)) { try await reader.saveCatalog(Data()) }
            await #expect(throws: IAPError(.unsupportedOperation)) {
                try await reader.resealSupportAudit(with: Self.entry)
            }
            #expect(throws: IAPError(.unsupportedOperation)) { try reader.reconciliationLock() }
            await reader.close()
            #expect(try directory.names() == before)
            await writer.close()
        }
    }

    @Test func aCommandsClaimsEndWithItsCallsAndAServersHoldThirtySeconds() async throws {
        try await withTemporaryDirectory { directory in
            let site = try FileLedgerSite(directory: directory.url, access: .create)
            #expect(!site.isShared)
            #expect(site.retryPolicy(for: .command).claimDuration == .zero)
            #expect(site.retryPolicy(for: .server).claimDuration == .seconds(30))
            #expect(site.description == directory.url.path)
            await site.close()
        }
    }

    @Test func anAuditDeletedWithItsHeadOpensRefusingUntilResealed() async throws {
        try await withTemporaryDirectory { directory in
            let site = try FileLedgerSite(directory: directory.url, access: .create)
            let audit = try await site.supportAudit(observer: { _ in })
            try await audit.append(Self.entry)
            try await audit.append(Self.entry)
            await site.close()
            let log = site.path(of: FileLedgerSite.supportAuditFileName)
            try FileManager.default.removeItem(atPath: log)
            try FileManager.default.removeItem(atPath: FileSupportAuditLog.headPath(for: log))

            let refused = try FileLedgerSite(directory: directory.url)
            let standings = LockedStandings()
            let guarded = try await refused.supportAudit(observer: standings.record)
            guard case .refused = await guarded.standing else {
                Issue.record("a deleted audit was accepted")
                return
            }
            #expect(standings.all.count == 1)
            await #expect(throws: IAPError(.storageCorrupted)) { try await guarded.append(Self.entry) }
            await refused.close()

            // Resealed as `iap support audit reseal` does: by a site that has not opened the log (which holds it).
            let resealing = try FileLedgerSite(directory: directory.url)
            let found = try await resealing.verifySupportAudit()
            #expect(!found.isIntact && found.ledgerHead?.entries == 2)
            var reseal = Self.entry
            reseal.action = "audit.reseal"
            let head = try await resealing.resealSupportAudit(with: reseal)
            #expect(head.entries == 1)
            await resealing.close()

            let resealed = try FileLedgerSite(directory: directory.url)
            #expect(try await resealed.supportAudit(observer: { _ in }).standing == .writable)
            await resealed.close()
        }
    }
}

/// The standings an audit reported, in order.
final class LockedStandings: Sendable {
    private let standings = LockedValue<[LedgerGuardedSupportAuditLog.Standing]>([])

    var all: [LedgerGuardedSupportAuditLog.Standing] { standings.withLock { $0 } }

    var record: @Sendable (LedgerGuardedSupportAuditLog.Standing) -> Void {
        { standing in self.standings.withLock { $0.append(standing) } }
    }
}
