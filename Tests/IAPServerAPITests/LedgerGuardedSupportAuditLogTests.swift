import Foundation
import IAPCore
import IAPInMemory
import IAPServerAPI
import Testing

/// The support audit against the head its ledger keeps: a log that reaches the ledger's head is written to and moves
/// it; a log short of it (cut or deleted along with its own head) is refused until a reseal; a ledger a crash left
/// behind an intact log catches up.
@Suite("Support audit guarded by the ledger's head")
struct LedgerGuardedSupportAuditLogTests {
    static let ledgerId = "0123456789abcdef0123456789abcdef"

    static func entry(_ number: Int) -> SupportAuditEntry {
        SupportAuditEntry(
            at: Date(millisecondsSince1970: 1_767_225_600_000 + Int64(number) * 1_000),
            actor: "agent-\(number)",
            action: "lookup",
            orderId: "ORDER\(number)",
            userId: nil,
            outcomes: []
        )
    }

    /// Records every standing the guard reports.
    final class Standings: Sendable {
        private let seen = LockedValue<[LedgerGuardedSupportAuditLog.Standing]>([])
        var all: [LedgerGuardedSupportAuditLog.Standing] { seen.withLock { $0 } }
        var observer: @Sendable (LedgerGuardedSupportAuditLog.Standing) -> Void {
            { standing in self.seen.withLock { $0.append(standing) } }
        }
    }

    @Test func eachAppendMovesTheLedgersHeadToTheLogsLastEntry() async throws {
        let ledger = InMemoryEntitlementStore()
        let log = InMemorySupportAuditLog(ledgerId: Self.ledgerId)
        let guarded = try await LedgerGuardedSupportAuditLog(log: log, keeper: ledger)
        #expect(await guarded.standing == .writable)
        #expect(await ledger.supportAuditHead() == nil)
        for number in 1...3 {
            let stored = try await guarded.append(Self.entry(number))
            #expect(await ledger.supportAuditHead() == (try SupportAuditChain.head(after: stored)))
        }
        let verified = try await guarded.verify()
        #expect(verified.isIntact && verified.ledgerHead == verified.head && verified.entryCount == 3)
    }

    @Test func aLogShortOfTheLedgersHeadIsRefusedAndNothingIsWritten() async throws {
        let ledger = InMemoryEntitlementStore()
        let first = try await LedgerGuardedSupportAuditLog(
            log: InMemorySupportAuditLog(ledgerId: Self.ledgerId),
            keeper: ledger
        )
        for number in 1...2 {
            try await first.append(Self.entry(number))
        }
        let kept = try #require(await ledger.supportAuditHead())
        // The log and its head deleted together: an empty log of the same ledger.
        let emptied = InMemorySupportAuditLog(ledgerId: Self.ledgerId)
        let standings = Standings()
        let guarded = try await LedgerGuardedSupportAuditLog(
            log: emptied,
            keeper: ledger,
            observer: standings.observer
        )
        guard case .refused(let reason) = await guarded.standing else {
            Issue.record("an emptied log was not refused")
            return
        }
        #expect(
            reason == "the ledger records 2 entries with head \(kept.lastHash), the log holds 0: the log (and its "
                + "head) was deleted or emptied"
        )
        #expect(standings.all == [.refused(reason)])
        await #expect(throws: IAPError.self) { try await guarded.checkWritable() }
        do {
            try await guarded.append(Self.entry(3))
            Issue.record("an append onto a refused audit was taken")
        } catch let error as IAPError {
            #expect(error.code == .storageCorrupted)
            #expect(error.message.contains("iap support audit reseal"))
        }
        #expect(await emptied.entries().isEmpty)
        #expect(await ledger.supportAuditHead() == kept)

        // A reseal: an entry in the log, and the ledger's head set to it whatever it was.
        let resealed = try await emptied.append(Self.entry(9))
        await ledger.recordSupportAuditHead(try SupportAuditChain.head(after: resealed), resealing: true)
        try await guarded.append(Self.entry(10))
        #expect(await guarded.standing == .writable)
        #expect(standings.all == [.refused(reason), .writable])
        #expect(await ledger.supportAuditHead()?.entries == 2)
    }

    @Test func aLedgerBehindAnIntactLogCatchesUpAndAnEditedEntryIsRefused() async throws {
        let ledger = InMemoryEntitlementStore()
        let log = InMemorySupportAuditLog(ledgerId: Self.ledgerId)
        let first = try await log.append(Self.entry(1))
        await ledger.recordSupportAuditHead(try SupportAuditChain.head(after: first), resealing: false)
        // An append that stopped before the ledger recorded its head.
        try await log.append(Self.entry(2))
        let guarded = try await LedgerGuardedSupportAuditLog(log: log, keeper: ledger)
        #expect(await guarded.standing == .writable)
        #expect(await ledger.supportAuditHead() == (await log.verify().head))
        #expect(await guarded.notes.contains { $0.contains("an append stopped before the ledger recorded its head") })

        // The ledger's head names another entry at its place: refused.
        await ledger.recordSupportAuditHead(SupportAuditHead(entries: 2, lastHash: "00"), resealing: true)
        let other = try await LedgerGuardedSupportAuditLog(log: log, keeper: ledger)
        #expect(
            await other.standing
                == .refused("entry 2: is not the entry the ledger recorded (head 00): it was edited or replaced")
        )
    }

    @Test func theLedgersHeadOnlyMovesForwardUnlessResealed() async throws {
        let ledger = InMemoryEntitlementStore()
        await ledger.recordSupportAuditHead(SupportAuditHead(entries: 3, lastHash: "c"), resealing: false)
        await ledger.recordSupportAuditHead(SupportAuditHead(entries: 2, lastHash: "b"), resealing: false)
        #expect(await ledger.supportAuditHead() == SupportAuditHead(entries: 3, lastHash: "c"))
        await ledger.recordSupportAuditHead(SupportAuditHead(entries: 1, lastHash: "a"), resealing: true)
        #expect(await ledger.supportAuditHead() == SupportAuditHead(entries: 1, lastHash: "a"))
    }
}
