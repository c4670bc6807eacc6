import Foundation
import IAPCore
import IAPServerAPI
import IAPStorageFile
import Testing

/// The support audit of a running server, tampered with while it is open: deleted, replaced, cut, appended to by
/// another hand, or its head deleted. The next check refuses it, nothing is written where nobody reads, and the guard
/// of the ledger site refuses support from then on and says so to its observer.
@Suite("File support audit: watched while open")
struct FileSupportAuditWatchTests {
    enum Tamper: String, CaseIterable, CustomTestStringConvertible {
        case deleted, replaced, cut, appendedElsewhere, headDeleted

        var testDescription: String { rawValue }

        func apply(log: String) throws {
            let manager = FileManager.default
            switch self {
            case .deleted:
                try manager.removeItem(atPath: log)
            case .replaced:
                // A copy of the same bytes, renamed over the log: same content, another file.
                let copy = log + ".copy"
                try manager.copyItem(atPath: log, toPath: copy)
                _ = rename(copy, log)
            case .cut:
                let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
                let handle = try FileHandle(forWritingTo: URL(filePath: log))
                try handle.truncate(atOffset: UInt64(lines.dropLast().joined(separator: "\n").utf8.count + 1))
                try handle.close()
            case .appendedElsewhere:
                let handle = try FileHandle(forWritingTo: URL(filePath: log))
                try handle.seekToEnd()
                try handle.write(contentsOf: Data(#"{"forged":true}"#.utf8 + [0x0A]))
                try handle.close()
            case .headDeleted:
                try manager.removeItem(atPath: FileSupportAuditLog.headPath(for: log))
            }
        }
    }

    static func entry(_ index: Int) -> SupportAuditEntry {
        SupportAuditEntry(
            at: Date(millisecondsSince1970: 1_767_225_600_000 + Int64(index) * 1_000),
            actor: "agent-\(index)",
            action: "lookup",
            orderId: "ORDER\(index)",
            userId: nil,
            outcomes: []
        )
    }

    @Test(arguments: Tamper.allCases)
    func aLogTamperedWithWhileOpenIsRefusedAndNothingIsWrittenToIt(_ tamper: Tamper) async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "audit-watch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appending(path: "support-audit.jsonl").path
        let log = try FileSupportAuditLog(path: path, ledgerId: "ledger-1")
        for index in 1...3 {
            try await log.append(Self.entry(index))
        }
        try await log.checkWritable()

        try tamper.apply(log: path)
        let before = FileManager.default.contents(atPath: path)
        let refused = await #expect(throws: IAPError.self) { try await log.checkWritable() }
        #expect(refused?.code == .storageCorrupted)
        let appended = await #expect(throws: IAPError.self) { try await log.append(Self.entry(4)) }
        #expect(appended?.code == .storageCorrupted)
        // Nothing went to the file at the path, nor was one created there.
        #expect(FileManager.default.contents(atPath: path) == before)
        await log.close()
    }

    @Test func theGuardOfAFileLedgerRefusesSupportOnceItsAuditIsDeletedUnderIt() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "audit-guard-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let site = try FileLedgerSite(directory: directory, access: .create)
        let standings = LockedValue<[LedgerGuardedSupportAuditLog.Standing]>([])
        let audit = try await site.supportAudit { standing in standings.withLock { $0.append(standing) } }
        try await audit.checkWritable()
        try await audit.append(Self.entry(1))
        #expect(standings.withLock { $0 } == [.writable])

        try FileManager.default.removeItem(at: directory.appending(path: "support-audit.jsonl"))
        let refused = await #expect(throws: IAPError.self) { try await audit.checkWritable() }
        #expect(refused?.code == .storageCorrupted)
        #expect(refused?.message.contains("reseal") == true)
        guard case .refused(let reason) = await audit.standing else {
            Issue.record("the guard is not refused")
            await site.close()
            return
        }
        #expect(reason.contains("deleted or replaced"))
        #expect(standings.withLock { $0.count } == 2)
        // Still refused on the next action, and the log was not written again.
        await #expect(throws: IAPError.self) { try await audit.append(Self.entry(2)) }
        #expect(!FileManager.default.fileExists(atPath: directory.appending(path: "support-audit.jsonl").path))
        await site.close()
    }
}
