#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPConformance
import IAPCore
import IAPInMemory
import Testing

/// An `EntitlementStore` with one deliberate flaw, built on the in-memory store, to prove that the
/// conformance suite is not vacuous. Never a model for a real backend.
actor FlawedEntitlementStore: EntitlementStore {
    /// The kinds of broken store the suite must catch, each with the checks it must fail.
    enum Flaw: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// `insert` reads, then writes, and reports `.inserted` whatever the write found.
        case nonAtomicInsert
        /// `bind` overwrites an existing binding.
        case lastBinderWins
        /// `bind` compares tokens exactly.
        case caseSensitiveTokens
        /// `replace` writes whatever revision the caller read.
        case replaceIgnoresRevision
        /// `history` pages by offset, so inserts between pages shift the walk.
        case offsetCursor
        /// `dueDeliveries` returns claimed pending entries.
        case dueIgnoresClaims
        /// `storeRenewalInfo` keeps the last one written.
        case renewalLastWriterWins
        /// `markNotificationProcessed` reads, then writes.
        case nonAtomicNotificationMark
        /// `insert` writes an entry without a user id before it rejects it.
        case partialInvalidInsert
        /// `originalTransactionIds` is not implemented: it throws `unsupportedOperation`.
        case noFamilyListing
        /// `replace(_:ifRevision:)` drops the entry's signed transaction instead of keeping it.
        case replaceDropsSignedTransaction
        /// `insert` stores a new entry claimed by its deliverer as unclaimed: the claim's fields are dropped.
        case insertDropsClaim
        /// `history` compares user ids as Swift strings (canonical equivalence): an NFC and an NFD spelling of one
        /// name share a history.
        case canonicalUserIds
        /// `entries(appTransactionId:)` matches ids that begin with the one asked for.
        case appTransactionPrefixMatch

        var testDescription: String { rawValue }

        /// The checks that must fail, and only those.
        var expectedFailures: Set<String> {
            switch self {
            case .nonAtomicInsert:
                ["concurrentInsertsOfOneTransactionId"]
            case .lastBinderWins:
                ["bindingFirstWins", "bindingIgnoresTokenCase", "concurrentBindsOfOneToken", "userIdsAreTheirBytes"]
            case .caseSensitiveTokens:
                // Its bindings compare users with ==, so it also merges look-alike users.
                ["bindingIgnoresTokenCase", "concurrentBindsOfOneToken", "userIdsAreTheirBytes"]
            case .replaceIgnoresRevision:
                [
                    "replaceWithStaleRevision", "concurrentReplacesOfOneRevision", "signedTransactionsAreKept",
                    "concurrentSignedReplacesOfOneRevision", "insertedClaimIsHeld",
                ]
            case .offsetCursor:
                ["historyPagingIsStableUnderInserts"]
            case .dueIgnoresClaims:
                ["dueDeliveriesFollowClaims", "insertedClaimIsHeld"]
            case .renewalLastWriterWins:
                ["renewalInfoNewerWins"]
            case .nonAtomicNotificationMark:
                ["concurrentNotificationMarks"]
            case .partialInvalidInsert:
                ["failedWritesChangeNothing"]
            case .noFamilyListing:
                ["originalTransactionIdsWalkEveryFamilyOnce"]
            case .replaceDropsSignedTransaction:
                ["signedTransactionsAreKept"]
            case .insertDropsClaim:
                ["insertedClaimIsHeld"]
            case .canonicalUserIds:
                ["userIdsAreTheirBytes"]
            case .appTransactionPrefixMatch:
                ["entriesByAppTransactionId"]
            }
        }
    }

    private let flaw: Flaw
    private let base = InMemoryEntitlementStore()
    private var bindings: [String: String] = [:]
    private var renewalInfos: [String: RenewalInfoPayload] = [:]
    /// Every user id inserted, for `canonicalUserIds`.
    private var users: [String] = []

    init(_ flaw: Flaw) {
        self.flaw = flaw
    }

    func insert(_ entry: LedgerEntry, signedTransaction: String?) async throws -> InsertOutcome {
        users.append(entry.userId)
        switch flaw {
        case .nonAtomicInsert:
            if let existing = await base.entry(transactionId: entry.transactionId) {
                return .existing(existing)
            }
            await Task.yield()
            switch try await base.insert(entry, signedTransaction: signedTransaction) {
            case .inserted(let stored), .existing(let stored):
                return .inserted(stored)
            }
        case .partialInvalidInsert where entry.userId.isEmpty:
            var orphan = entry
            orphan.userId = "unknown"
            _ = try await base.insert(orphan)
            throw IAPError(.invalidArgument, "no user id")
        case .insertDropsClaim where entry.deliveryState == .pending && entry.nextAttemptAt != nil:
            var unclaimed = entry
            unclaimed.nextAttemptAt = nil
            unclaimed.deliveryAttempts = 0
            unclaimed.grantAttempted = false
            return try await base.insert(unclaimed)
        default:
            return try await base.insert(entry, signedTransaction: signedTransaction)
        }
    }

    func entry(transactionId: String) async throws -> LedgerEntry? {
        await base.entry(transactionId: transactionId)
    }

    func replace(_ entry: LedgerEntry, ifRevision revision: Int64) async throws -> Bool {
        if flaw == .replaceDropsSignedTransaction {
            return try await base.replace(entry, ifRevision: revision, signedTransaction: nil)
        }
        guard flaw == .replaceIgnoresRevision else {
            return try await base.replace(entry, ifRevision: revision)
        }
        guard let current = await base.entry(transactionId: entry.transactionId) else {
            return false
        }
        return try await base.replace(entry, ifRevision: current.revision)
    }

    func replace(_ entry: LedgerEntry, ifRevision revision: Int64, signedTransaction: String?) async throws -> Bool {
        guard flaw == .replaceIgnoresRevision else {
            return try await base.replace(entry, ifRevision: revision, signedTransaction: signedTransaction)
        }
        guard let current = await base.entry(transactionId: entry.transactionId) else {
            return false
        }
        return try await base.replace(entry, ifRevision: current.revision, signedTransaction: signedTransaction)
    }

    func signedTransaction(transactionId: String) async throws -> String? {
        await base.signedTransaction(transactionId: transactionId)
    }

    func entries(originalTransactionId: String) async throws -> [LedgerEntry] {
        await base.entries(originalTransactionId: originalTransactionId)
    }

    func entries(appTransactionId: String) async throws -> [LedgerEntry] {
        guard flaw == .appTransactionPrefixMatch else {
            return try await base.entries(appTransactionId: appTransactionId)
        }
        return await base.allEntries().filter {
            $0.transaction.appTransactionId?.hasPrefix(appTransactionId) == true
        }
    }

    func history(userId: String, cursor: String?, limit: Int) async throws -> LedgerPage {
        var spellings: [[UInt8]] = []
        for user in users where user == userId && !spellings.contains(Array(user.utf8)) {
            spellings.append(Array(user.utf8))
        }
        if flaw == .canonicalUserIds, cursor == nil, spellings.count > 1 {
            // Every user whose id is == to this one, merged: what a dictionary keyed by String does.
            var merged: [LedgerEntry] = []
            for spelling in spellings {
                let user = String(decoding: spelling, as: UTF8.self)
                merged += try await base.history(userId: user, cursor: nil, limit: limit).entries
            }
            let page = merged.sorted { $0.sequence > $1.sequence }.prefix(limit)
            return LedgerPage(entries: Array(page), nextCursor: nil)
        }
        guard flaw == .offsetCursor else {
            return try await base.history(userId: userId, cursor: cursor, limit: limit)
        }
        guard limit >= 1 else {
            throw IAPError(.invalidArgument)
        }
        var offset = 0
        if let cursor {
            guard let parsed = Int(cursor), parsed >= 0 else {
                throw IAPError(.invalidArgument)
            }
            offset = parsed
        }
        let all = try await base.history(userId: userId, cursor: nil, limit: Int.max).entries
        let page = Array(all.dropFirst(offset).prefix(limit))
        let next = offset + page.count
        return LedgerPage(entries: page, nextCursor: next < all.count ? String(next) : nil)
    }

    func parkedEntries(limit: Int) async throws -> [LedgerEntry] {
        try await base.parkedEntries(limit: limit)
    }

    func dueDeliveries(at instant: Date, limit: Int) async throws -> [LedgerEntry] {
        guard flaw == .dueIgnoresClaims else {
            return try await base.dueDeliveries(at: instant, limit: limit)
        }
        guard limit >= 1 else {
            throw IAPError(.invalidArgument)
        }
        let candidates = try await base.dueDeliveries(at: .distantFuture, limit: Int.max)
        let due = candidates.filter { $0.deliveryState == .pending || ($0.nextAttemptAt ?? instant) <= instant }
        return Array(due.prefix(limit))
    }

    func bind(appAccountToken: String, to userId: String) async throws -> BindingOutcome {
        switch flaw {
        case .lastBinderWins:
            guard !appAccountToken.isEmpty, !userId.isEmpty else {
                throw IAPError(.invalidArgument)
            }
            bindings[appAccountToken.lowercased()] = userId
            return .bound
        case .caseSensitiveTokens:
            guard !appAccountToken.isEmpty, !userId.isEmpty else {
                throw IAPError(.invalidArgument)
            }
            if let existing = bindings[appAccountToken] {
                return existing == userId ? .alreadyBound : .conflict(existingUserId: existing)
            }
            bindings[appAccountToken] = userId
            return .bound
        default:
            return try await base.bind(appAccountToken: appAccountToken, to: userId)
        }
    }

    func user(forAppAccountToken appAccountToken: String) async throws -> String? {
        switch flaw {
        case .lastBinderWins:
            bindings[appAccountToken.lowercased()]
        case .caseSensitiveTokens:
            bindings[appAccountToken]
        default:
            await base.user(forAppAccountToken: appAccountToken)
        }
    }

    func storeRenewalInfo(_ renewalInfo: RenewalInfoPayload) async throws -> Bool {
        guard flaw == .renewalLastWriterWins else {
            return try await base.storeRenewalInfo(renewalInfo)
        }
        guard let original = renewalInfo.originalTransactionId, !original.isEmpty else {
            throw IAPError(.invalidArgument)
        }
        renewalInfos[original] = renewalInfo
        return true
    }

    func renewalInfo(originalTransactionId: String) async throws -> RenewalInfoPayload? {
        guard flaw == .renewalLastWriterWins else {
            return await base.renewalInfo(originalTransactionId: originalTransactionId)
        }
        return renewalInfos[originalTransactionId]
    }

    func markNotificationProcessed(_ notificationUUID: String, at instant: Date) async throws -> Bool {
        guard flaw == .nonAtomicNotificationMark else {
            return try await base.markNotificationProcessed(notificationUUID, at: instant)
        }
        if await base.isNotificationProcessed(notificationUUID) {
            return false
        }
        await Task.yield()
        _ = try await base.markNotificationProcessed(notificationUUID, at: instant)
        return true
    }

    func isNotificationProcessed(_ notificationUUID: String) async throws -> Bool {
        await base.isNotificationProcessed(notificationUUID)
    }

    func statistics() async throws -> LedgerStatistics {
        await base.statistics()
    }

    func originalTransactionIds(cursor: String?, limit: Int) async throws -> OriginalTransactionIdPage {
        guard flaw == .noFamilyListing else {
            return try await base.originalTransactionIds(cursor: cursor, limit: limit)
        }
        throw IAPError(.unsupportedOperation, "this store cannot list its purchase families")
    }
}

@Test(arguments: FlawedEntitlementStore.Flaw.allCases)
func suiteCatchesFlawedStore(flaw: FlawedEntitlementStore.Flaw) async {
    let report = await EntitlementStoreConformance { FlawedEntitlementStore(flaw) }.run()
    #expect(Set(report.failedChecks) == flaw.expectedFailures, "\(report)")
    #expect(report.passed.count + report.failures.count == EntitlementStoreConformance.checkNames.count)
    #expect(!report.succeeded)
}

@Test func failureMessagesSayWhatToFix() async {
    let report = await EntitlementStoreConformance { FlawedEntitlementStore(.nonAtomicInsert) }
        .check(named: "concurrentInsertsOfOneTransactionId")
    let failure = report.failures.first
    #expect(failure?.check == "concurrentInsertsOfOneTransactionId")
    #expect(failure?.message.contains("returned .inserted") == true, "\(report)")
    #expect(failure?.message.contains("exactly one may") == true, "\(report)")
    #expect(report.description.contains("FAIL concurrentInsertsOfOneTransactionId"))
    #expect(report.description.contains("requires: of 1,000 concurrent inserts"))
}

@Test func invalidInputThatIsPartlyAppliedIsNamed() async {
    let report = await EntitlementStoreConformance { FlawedEntitlementStore(.partialInvalidInsert) }
        .check(named: "failedWritesChangeNothing")
    let message = report.failures.first?.message ?? ""
    #expect(message.contains("insert of an entry with an empty userId changed the store"), "\(report)")
    #expect(message.contains("statistics were"), "\(report)")
}

@Test func checkNamesAreUniqueAndRunnableOneByOne() async {
    let names = EntitlementStoreConformance.checkNames
    #expect(names.count == 36)
    #expect(Set(names).count == names.count)
    let suite = EntitlementStoreConformance { InMemoryEntitlementStore() }
    for name in ["historyPagingIsStableUnderInserts", "failedWritesChangeNothing"] {
        let report = await suite.check(named: name)
        #expect(report.passed == [name])
        #expect(report.succeeded, "\(report)")
    }
}

@Test func unknownCheckNameListsTheKnownOnes() async {
    let report = await EntitlementStoreConformance { InMemoryEntitlementStore() }.check(named: "insertWorks")
    #expect(report.passed.isEmpty)
    #expect(report.failedChecks == ["insertWorks"])
    #expect(report.failures.first?.message.contains("insertIsIdempotent") == true)
}

@Test func storeThatIsNotFreshFailsEveryLaterCheck() async {
    let shared = InMemoryEntitlementStore()
    let report = await EntitlementStoreConformance { shared }.run()
    #expect(report.passed.count >= 1)
    #expect(report.failures.count >= EntitlementStoreConformance.checkNames.count - 2)
    #expect(report.failures.allSatisfy { $0.message.contains("new, empty store") }, "\(report)")
}

@Test func makeStoreErrorsAreReported() async {
    let report = await EntitlementStoreConformance { throw IAPError(.storageLocked, "database busy") }.run()
    #expect(report.passed.isEmpty)
    #expect(report.failures.count == EntitlementStoreConformance.checkNames.count)
    #expect(report.failures.allSatisfy { $0.message.contains("makeStore threw storageLocked: database busy") })
}
