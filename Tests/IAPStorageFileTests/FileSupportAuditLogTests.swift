import Foundation
import IAPCore
import IAPServerAPI
import IAPStorageFile
import Testing

/// The support audit in a file ledger's directory, attacked as someone with the files in hand would: every edit,
/// removal, reordering, cut and emptying is found, named by entry and line, and refused by the next append.
@Suite("File support audit: a tamper-evident chain")
struct FileSupportAuditLogTests {
    /// A ledger directory with a store's identity and an audit of five entries.
    struct Ledger {
        let directory: URL
        let ledgerId: String
        let entries: [SupportAuditEntry]

        var log: String { directory.appending(path: "support-audit.jsonl").path }
        var head: String { FileSupportAuditLog.headPath(for: log) }

        init(entries count: Int = 5) async throws {
            directory = FileManager.default.temporaryDirectory.appending(path: "audit-ledger-\(UUID().uuidString)")
            let store = try FileEntitlementStore(directory: directory)
            ledgerId = try store.ledgerIdentity()
            await store.close()
            let log = try FileSupportAuditLog(
                path: directory.appending(path: "support-audit.jsonl").path,
                ledgerId: ledgerId
            )
            var entries: [SupportAuditEntry] = []
            for index in 1...count {
                entries.append(
                    try await log.append(
                        SupportAuditEntry(
                            at: Date(millisecondsSince1970: 1_767_225_600_000 + Int64(index) * 1_000),
                            actor: "agent-\(index)",
                            action: index.isMultiple(of: 2) ? "redeliver.requested" : "lookup",
                            orderId: "ORDER\(index)",
                            userId: nil,
                            outcomes: [.init(transactionId: "\(2_000_000_000_000_000 + index)", outcome: "shown")]
                        )
                    )
                )
            }
            await log.close()
            self.entries = entries
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }

        var lines: [String] {
            get throws {
                try String(contentsOfFile: log, encoding: .utf8).split(
                    separator: "\n",
                    omittingEmptySubsequences: false
                )
                .dropLast().map(String.init)
            }
        }

        func write(lines: [String]) throws {
            try Data(lines.map { $0 + "\n" }.joined().utf8).write(to: URL(filePath: log))
        }

        func verify() throws -> SupportAuditVerification {
            try FileSupportAuditLog.verify(path: log, ledgerId: ledgerId)
        }

        /// The next append, after the damage.
        func append() async throws {
            let log = try FileSupportAuditLog(path: log, ledgerId: ledgerId)
            let entry = SupportAuditEntry(
                at: Date(millisecondsSince1970: 0),
                actor: "x",
                action: "lookup",
                orderId: "O",
                userId: nil,
                outcomes: []
            )
            do {
                try await log.append(entry)
                await log.close()
            } catch {
                await log.close()
                throw error
            }
        }
    }

    @Test func anIntactLogVerifiesAndEachEntryCarriesTheHashOfTheOneBefore() async throws {
        let ledger = try await Ledger()
        defer { ledger.remove() }
        let result = try ledger.verify()
        #expect(result.isIntact, "\(result.problems)")
        #expect(result.entryCount == 5)
        #expect(result.recordedHead == result.head)
        let lines = try ledger.lines
        #expect(ledger.entries.map(\.sequence) == [1, 2, 3, 4, 5])
        #expect(ledger.entries[0].previousHash == SupportAuditChain.anchor(ledgerId: ledger.ledgerId))
        for index in 1..<5 {
            #expect(ledger.entries[index].previousHash == SupportAuditChain.hash(of: Array(lines[index - 1].utf8)))
        }
        #expect(result.head.lastHash == SupportAuditChain.hash(of: Array(lines[4].utf8)))
        // Who asked, and as which OS user the tool ran.
        #expect(ledger.entries.map(\.actor) == ["agent-1", "agent-2", "agent-3", "agent-4", "agent-5"])
        #expect(ledger.entries.allSatisfy { $0.osUser == SupportAuditChain.osUser })
        #expect(try ledger.lines.allSatisfy { $0.contains(#""osUser":"\#(SupportAuditChain.osUser)""#) })
    }

    @Test func theLogItsHeadAndTheLedgerIdentityArePrivateAndNoSymbolicLinkIsFollowed() async throws {
        let ledger = try await Ledger(entries: 1)
        defer { ledger.remove() }
        for path in [ledger.log, ledger.head, ledger.directory.appending(path: "ledger-id").path] {
            let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(permissions == 0o600, "\(path)")
        }
        let elsewhere = ledger.directory.appending(path: "elsewhere.jsonl").path
        try FileManager.default.moveItem(atPath: ledger.log, toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: ledger.log, withDestinationPath: elsewhere)
        await #expect(throws: IAPError(.unsafeFile)) { try await ledger.append() }
    }

    @Test func anEditedEntryIsFoundAtTheEntryThatFollowsIt() async throws {
        let ledger = try await Ledger()
        defer { ledger.remove() }
        var lines = try ledger.lines
        lines[2] = lines[2].replacingOccurrences(of: "ORDER3", with: "ORDER9")
        try ledger.write(lines: lines)
        let result = try ledger.verify()
        #expect(!result.isIntact)
        #expect(result.problems.map(\.entry) == [4])
        #expect(result.problems.first?.location == "line 4")
        #expect(result.problems.first?.message.contains("does not follow the entry before it") == true)
        // An edit before the last entry leaves the head matching: appends go on, and verify keeps naming the edit.
        try await ledger.append()
        #expect(try ledger.verify().problems.map(\.entry) == [4])
    }

    @Test func anEditedLastEntryIsFoundAgainstTheHeadAndTheNextAppendIsRefused() async throws {
        let ledger = try await Ledger()
        defer { ledger.remove() }
        var lines = try ledger.lines
        lines[4] = lines[4].replacingOccurrences(of: "agent-5", with: "agent-0")
        try ledger.write(lines: lines)
        let result = try ledger.verify()
        #expect(result.problems.map(\.entry) == [5])
        #expect(result.problems.first?.message.contains("not the entry the head recorded") == true)
        await #expect(throws: IAPError(.storageCorrupted)) { try await ledger.append() }
    }

    @Test func aDeletedEntryIsFound() async throws {
        let ledger = try await Ledger()
        defer { ledger.remove() }
        var lines = try ledger.lines
        lines.remove(at: 2)
        try ledger.write(lines: lines)
        let result = try ledger.verify()
        let third = try #require(result.problems.first)
        #expect(third.entry == 3 && third.location == "line 3")
        #expect(third.message.contains("numbered 4 where entry 3 belongs"))
        #expect(
            result.problems.contains {
                $0.entry == nil && $0.message.contains("holds 4 entries but its head records 5")
            }
        )
        await #expect(throws: IAPError(.storageCorrupted)) { try await ledger.append() }
    }

    @Test func reorderedEntriesAreFound() async throws {
        let ledger = try await Ledger()
        defer { ledger.remove() }
        var lines = try ledger.lines
        lines.swapAt(1, 2)
        try ledger.write(lines: lines)
        let result = try ledger.verify()
        #expect(Set(result.problems.compactMap(\.entry)) == [2, 3, 4])
        #expect(result.problems.first?.description.hasPrefix("entry 2 (line 2): is numbered 3") == true)
    }

    @Test func aLogCutInTheMiddleIsFound() async throws {
        let ledger = try await Ledger()
        defer { ledger.remove() }
        let bytes = try Data(contentsOf: URL(filePath: ledger.log))
        let lines = try ledger.lines
        // Cut in the middle of line 3: lines 4 and 5 gone, line 3 torn.
        let cut = lines[0].utf8.count + lines[1].utf8.count + 2 + lines[2].utf8.count / 2
        try bytes.prefix(cut).write(to: URL(filePath: ledger.log))
        let result = try ledger.verify()
        #expect(result.entryCount == 2)
        #expect(
            result.problems.map(\.message) == [
                "the log holds 2 entries but its head records 5: entries were removed"
            ]
        )
        #expect(result.notes.first?.hasPrefix("line 3 is incomplete") == true)
        await #expect(throws: IAPError(.storageCorrupted)) { try await ledger.append() }

        // A piece cut out of the middle: from the middle of line 2 to the middle of line 4.
        let other = try await Ledger()
        defer { other.remove() }
        let whole = try Data(contentsOf: URL(filePath: other.log))
        let otherLines = try other.lines
        let from = otherLines[0].utf8.count + 1 + otherLines[1].utf8.count / 2
        let to = otherLines[0...2].map { $0.utf8.count + 1 }.reduce(0, +) + otherLines[3].utf8.count / 2
        try (whole.prefix(from) + whole.dropFirst(to)).write(to: URL(filePath: other.log))
        let spliced = try other.verify()
        #expect(spliced.problems.first?.entry == 2)
        #expect(spliced.problems.first?.location == "line 2")
        #expect(spliced.problems.contains { $0.message.contains("holds 3 entries but its head records 5") })
    }

    @Test func anEmptiedOrDeletedLogIsFound() async throws {
        let ledger = try await Ledger()
        defer { ledger.remove() }
        try Data().write(to: URL(filePath: ledger.log))
        #expect(
            try ledger.verify().problems.map(\.message) == [
                "the log holds 0 entries but its head records 5: the log was emptied or deleted"
            ]
        )
        await #expect(throws: IAPError(.storageCorrupted)) { try await ledger.append() }
        try FileManager.default.removeItem(atPath: ledger.log)
        #expect(try ledger.verify().problems.count == 1)
        // Deleting the head too leaves a log that starts again from the ledger's identity: the log alone cannot
        // tell; the head the ledger keeps can (theLedgerKeepsTheAuditsHeadInItsJournalAndSnapshots).
        try FileManager.default.removeItem(atPath: ledger.head)
        #expect(try ledger.verify().isIntact)
    }

    @Test func aLogWithEntriesButNoHeadIsRefusedAtOpenNotGivenANewHead() async throws {
        let ledger = try await Ledger(entries: 3)
        defer { ledger.remove() }
        let lines = try ledger.lines
        try ledger.write(lines: Array(lines.dropLast()))
        try FileManager.default.removeItem(atPath: ledger.head)
        #expect(throws: IAPError(.storageCorrupted)) {
            try FileSupportAuditLog(path: ledger.log, ledgerId: ledger.ledgerId)
        }
        #expect(!FileManager.default.fileExists(atPath: ledger.head))

        // A reseal goes on from what is left, and sets the head beside the log.
        var entry = SupportAuditEntry(
            at: Date(millisecondsSince1970: 0),
            actor: "ops-1",
            action: "audit.reseal",
            orderId: "",
            userId: nil,
            outcomes: []
        )
        entry.reseal = .init(
            reason: "test",
            ledgerHead: nil,
            logHead: try ledger.verify().head,
            recordedHead: nil,
            problems: []
        )
        let resealed = try FileSupportAuditLog.reseal(path: ledger.log, ledgerId: ledger.ledgerId, entry: entry)
        #expect(resealed.sequence == 3 && resealed.osUser == SupportAuditChain.osUser)
        let verified = try ledger.verify()
        #expect(verified.isIntact && verified.entryCount == 3)
        #expect(verified.recordedHead == (try SupportAuditChain.head(after: resealed)))
        try await ledger.append()
    }

    @Test func theLedgerKeepsTheAuditsHeadInItsJournalAndSnapshots() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "audit-head-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try FileEntitlementStore(directory: directory)
        #expect(try await store.supportAuditHead() == nil)
        try await store.recordSupportAuditHead(SupportAuditHead(entries: 2, lastHash: "bb"), resealing: false)
        // Forward only, unless resealing.
        try await store.recordSupportAuditHead(SupportAuditHead(entries: 1, lastHash: "aa"), resealing: false)
        #expect(try await store.supportAuditHead() == SupportAuditHead(entries: 2, lastHash: "bb"))
        await store.close()
        let journal = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix("journal") }
            .map { try String(contentsOfFile: directory.appending(path: $0).path, encoding: .utf8) }
            .joined()
        #expect(journal.contains(#"{"v":4,"#) && journal.contains(#""auditHead":{"entries":2,"lastHash":"bb"}"#))

        let reopened = try FileEntitlementStore(directory: directory)
        #expect(try await reopened.supportAuditHead() == SupportAuditHead(entries: 2, lastHash: "bb"))
        try await reopened.recordSupportAuditHead(SupportAuditHead(entries: 1, lastHash: "aa"), resealing: true)
        try await reopened.compact()
        await reopened.close()
        let compacted = try FileEntitlementStore(directory: directory)
        #expect(try await compacted.supportAuditHead() == SupportAuditHead(entries: 1, lastHash: "aa"))
        await compacted.close()
        let readOnly = try FileEntitlementStore(directory: directory, options: .init(access: .readOnly))
        #expect(try await readOnly.supportAuditHead() == SupportAuditHead(entries: 1, lastHash: "aa"))
        await readOnly.close()
    }

    @Test func anotherLedgersLogOrAMissingHeadIsFound() async throws {
        let ledger = try await Ledger(entries: 2)
        defer { ledger.remove() }
        let foreign = try FileSupportAuditLog.verify(path: ledger.log, ledgerId: "ffffffffffffffffffffffffffffffff")
        #expect(foreign.problems.map(\.entry) == [1])
        #expect(foreign.problems.first?.message.contains("does not start from this ledger's identity") == true)
        try FileManager.default.removeItem(atPath: ledger.head)
        #expect(
            try ledger.verify().problems.map(\.message) == [
                "the log holds 2 entries but has no head: the head was deleted"
            ]
        )
    }

    @Test func anAppendThatStoppedBeforeItsHeadMovedIsANoteAndTheNextOpenMovesIt() async throws {
        let ledger = try await Ledger(entries: 3)
        defer { ledger.remove() }
        let headBefore = try Data(contentsOf: URL(filePath: ledger.head))
        try await ledger.append()
        // As if the process died between the entry's fsync and the head's rename.
        try headBefore.write(to: URL(filePath: ledger.head))
        let lagging = try ledger.verify()
        #expect(lagging.isIntact)
        #expect(lagging.notes.first?.contains("the head records 3 entries and the log holds 4") == true)
        try await ledger.append()
        let moved = try ledger.verify()
        #expect(moved.isIntact && moved.notes.isEmpty && moved.recordedHead?.entries == 5)
    }

    @Test func theLedgerIdentityIsMadeOnceAndReadWithoutWriting() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "identity-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try FileEntitlementStore(directory: directory)
        #expect(try FileEntitlementStore.ledgerIdentity(in: directory) == nil)
        let identity = try store.ledgerIdentity()
        #expect(identity.count == 32 && identity.allSatisfy(\.isHexDigit))
        #expect(try store.ledgerIdentity() == identity)
        #expect(try FileEntitlementStore.ledgerIdentity(in: directory) == identity)
        await store.close()
        let reopened = try FileEntitlementStore(directory: directory)
        #expect(try reopened.ledgerIdentity() == identity)
        await reopened.close()
        let other = try await Ledger(entries: 1)
        defer { other.remove() }
        #expect(other.ledgerId != identity)
        // Something else in its place is an error, never a new identity.
        try Data("not an id\n".utf8).write(to: directory.appending(path: "ledger-id"))
        #expect(throws: IAPError(.storageCorrupted)) { try FileEntitlementStore.ledgerIdentity(in: directory) }
    }
}
