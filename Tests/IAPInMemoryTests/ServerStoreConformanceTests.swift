#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPConformance
import IAPCore
import IAPInMemory
import IAPServerAPI
import Testing

/// A checkpoint store with one deliberate flaw, to prove that its conformance suite is not vacuous.
actor FlawedCheckpointStore: ReconciliationCheckpointStore {
    enum Flaw: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Every save replaces the stored checkpoint, older or not.
        case lastWriteWins
        /// An empty key is stored like any other.
        case acceptsEmptyKey
        /// Keys are lowercased.
        case caseInsensitiveKeys
        /// A nil revision keeps the stored one (`coalesce` in an upsert).
        case nilKeepsTheStoredRevision
        /// Reopening finds an empty store.
        case forgetsOnReopen

        var testDescription: String { rawValue }

        var expectedFailures: Set<String> {
            switch self {
            case .lastWriteWins: ["earlierIsIgnored", "concurrentSavesKeepTheLatest", "checkpointsSurviveReopen"]
            case .acceptsEmptyKey: ["emptyKeyIsRefused"]
            case .caseInsensitiveKeys: ["keysCompareExactly"]
            case .nilKeepsTheStoredRevision: ["sameOrLaterReplaces"]
            case .forgetsOnReopen: ["checkpointsSurviveReopen"]
            }
        }
    }

    private let flaw: Flaw
    private var checkpoints: [String: ReconciliationCheckpoint] = [:]

    init(_ flaw: Flaw) {
        self.flaw = flaw
    }

    private func key(_ key: String) -> String {
        flaw == .caseInsensitiveKeys ? key.lowercased() : key
    }

    func checkpoint(customerKey: String) -> ReconciliationCheckpoint? {
        checkpoints[key(customerKey)].map {
            ReconciliationCheckpoint(
                customerKey: customerKey,
                historyRevision: $0.historyRevision,
                refundRevision: $0.refundRevision,
                reconciledAt: $0.reconciledAt
            )
        }
    }

    func saveCheckpoint(_ checkpoint: ReconciliationCheckpoint) throws {
        if checkpoint.customerKey.isEmpty, flaw != .acceptsEmptyKey {
            throw IAPError(.invalidArgument, "empty key")
        }
        let stored = checkpoints[key(checkpoint.customerKey)]
        if flaw != .lastWriteWins, let stored, stored.reconciledAt > checkpoint.reconciledAt {
            return
        }
        var saved = checkpoint
        if flaw == .nilKeepsTheStoredRevision {
            saved.historyRevision = checkpoint.historyRevision ?? stored?.historyRevision
            saved.refundRevision = checkpoint.refundRevision ?? stored?.refundRevision
        }
        checkpoints[key(checkpoint.customerKey)] = saved
    }
}

/// A renewal-extension store with one deliberate flaw, to prove that its conformance suite is not vacuous.
actor FlawedExtensionStore: RenewalExtensionStore {
    enum Flaw: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// `begin` decides, yields, then inserts.
        case nonAtomicBegin
        /// Refused requests count toward the limit.
        case failedCountsTowardTheLimit
        /// Identifiers are unique per subscription only.
        case identifierPerSubscription
        /// `complete` of an unknown identifier stores it.
        case completeInsertsUnknown
        /// `records` are sorted by request date.
        case recordsByDate
        /// Reopening finds an empty store.
        case forgetsOnReopen

        var testDescription: String { rawValue }

        var expectedFailures: Set<String> {
            switch self {
            case .nonAtomicBegin:
                [
                    "concurrentBeginsOfOneIdentifier", "concurrentBeginsOfOneIdentifierOnManySubscriptions",
                    "concurrentBeginsKeepTheLimit",
                ]
            case .failedCountsTowardTheLimit: ["limitCountsLiveRequestsInTheWindow"]
            case .identifierPerSubscription:
                ["existingIdentifierWins", "concurrentBeginsOfOneIdentifierOnManySubscriptions"]
            case .completeInsertsUnknown: ["completeReplacesTheRecord"]
            case .recordsByDate: ["recordsListInBeginOrder"]
            case .forgetsOnReopen: ["recordsSurviveReopen"]
            }
        }
    }

    private let flaw: Flaw
    private var records: [RenewalExtensionRecord] = []

    init(_ flaw: Flaw) {
        self.flaw = flaw
    }

    private func index(of record: RenewalExtensionRecord) -> Int? {
        records.firstIndex {
            $0.requestIdentifier == record.requestIdentifier
                && (flaw != .identifierPerSubscription || $0.originalTransactionId == record.originalTransactionId)
        }
    }

    func record(requestIdentifier: String) -> RenewalExtensionRecord? {
        records.first { $0.requestIdentifier == requestIdentifier }
    }

    func begin(_ record: RenewalExtensionRecord, limit: Int, since: Date) async -> RenewalExtensionBeginOutcome {
        if let existing = index(of: record) {
            return .existing(records[existing])
        }
        let live = records(originalTransactionId: record.originalTransactionId).filter {
            ($0.state != .failed || flaw == .failedCountsTowardTheLimit) && $0.requestedAt > since
        }
        if live.count >= limit {
            return .limitReached(live)
        }
        if flaw == .nonAtomicBegin {
            await Task.yield()
        }
        records.append(record)
        return .started(record)
    }

    func complete(_ record: RenewalExtensionRecord) throws {
        guard let index = index(of: record) else {
            guard flaw == .completeInsertsUnknown else {
                throw IAPError(.notFound, "unknown")
            }
            records.append(record)
            return
        }
        records[index] = record
    }

    func records(originalTransactionId: String) -> [RenewalExtensionRecord] {
        let found = records.filter { $0.originalTransactionId == originalTransactionId }
        return flaw == .recordsByDate ? found.sorted { $0.requestedAt < $1.requestedAt } : found
    }
}

@Suite("Conformance of the reconciliation checkpoint and renewal-extension stores")
struct ServerStoreConformanceTests {
    @Test func theInMemoryStoresConform() async {
        let checkpoints = await ReconciliationCheckpointStoreConformance {
            InMemoryReconciliationCheckpointStore()
        }.run()
        #expect(checkpoints.succeeded, "\(checkpoints)")
        #expect(checkpoints.passed == ReconciliationCheckpointStoreConformance.checkNames)
        let extensions = await RenewalExtensionStoreConformance { InMemoryRenewalExtensionStore() }.run()
        #expect(extensions.succeeded, "\(extensions)")
        #expect(extensions.passed == RenewalExtensionStoreConformance.checkNames)
    }

    @Test(arguments: FlawedCheckpointStore.Flaw.allCases)
    func theCheckpointSuiteCatchesAFlawedStore(flaw: FlawedCheckpointStore.Flaw) async {
        let report = await ReconciliationCheckpointStoreConformance(
            makeStore: { FlawedCheckpointStore(flaw) },
            reopen: { flaw == .forgetsOnReopen ? FlawedCheckpointStore(flaw) : $0 }
        ).run()
        #expect(Set(report.failedChecks) == flaw.expectedFailures, "\(report)")
        #expect(
            report.passed.count + report.failures.count == ReconciliationCheckpointStoreConformance.checkNames.count
        )
    }

    @Test(arguments: FlawedExtensionStore.Flaw.allCases)
    func theExtensionSuiteCatchesAFlawedStore(flaw: FlawedExtensionStore.Flaw) async {
        let report = await RenewalExtensionStoreConformance(
            makeStore: { FlawedExtensionStore(flaw) },
            reopen: { flaw == .forgetsOnReopen ? FlawedExtensionStore(flaw) : $0 }
        ).run()
        #expect(Set(report.failedChecks) == flaw.expectedFailures, "\(report)")
        #expect(report.passed.count + report.failures.count == RenewalExtensionStoreConformance.checkNames.count)
    }

    @Test func failuresSayWhatToFix() async {
        let limit = await RenewalExtensionStoreConformance { FlawedExtensionStore(.nonAtomicBegin) }
            .check(named: "concurrentBeginsKeepTheLimit")
        let message = limit.failures.first?.message ?? ""
        #expect(message.contains("expected 2 and 48"), "\(limit)")
        #expect(message.contains("decide and insert in one step"), "\(limit)")
        #expect(limit.description.contains("FAIL concurrentBeginsKeepTheLimit"))

        let older = await ReconciliationCheckpointStoreConformance { FlawedCheckpointStore(.lastWriteWins) }
            .check(named: "earlierIsIgnored")
        #expect(older.failures.first?.message.contains("a save reconciled 1 s before the stored one") == true)
        #expect(older.failures.first?.message.contains("expected (2000000000000001: history h-new") == true, "\(older)")
    }

    @Test func checksRunOneByOneAndUnknownNamesListTheKnownOnes() async {
        let suite = RenewalExtensionStoreConformance { InMemoryRenewalExtensionStore() }
        for name in RenewalExtensionStoreConformance.checkNames {
            #expect(await suite.check(named: name).passed == [name])
        }
        let unknown = await suite.check(named: "beginWorks")
        #expect(unknown.failedChecks == ["beginWorks"])
        #expect(unknown.failures.first?.message.contains("existingIdentifierWins") == true)
        let failing = await ReconciliationCheckpointStoreConformance {
            throw IAPError(.storageUnavailable, "database down")
        }.run()
        #expect(failing.passed.isEmpty)
        #expect(failing.failures.allSatisfy { $0.message.contains("making the store threw storageUnavailable") })
    }
}
