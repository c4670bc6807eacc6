#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
public import IAPServerAPI

/// A ``SupportAuditLog`` in a file, chained (``SupportAuditChain``): one JSON object a line, each appended with
/// `fsync` before ``append(_:)`` returns, never rewritten, and its head in a file beside it (`<log>.head`).
///
/// Its place is the ledger's directory (`support-audit.jsonl`, anchored to the ledger's `ledger-id`). One process at a
/// time holds the file (`flock`); another gets `storageLocked`. A line torn by a crash (its append never returned) is
/// cut off when the file is opened. The log and its head are created 0600 and never opened through a symbolic
/// link.
///
/// Opening refuses (`storageCorrupted`) a log that holds fewer entries than its head records, whose entry at the
/// head is not the recorded one, or that holds entries without a head: entries were removed or edited, or the head
/// deleted, and appending would hide it. Check such a log with ``verify(path:ledgerId:)`` (`iap support audit
/// verify`), keep it as evidence, and reseal it (``reseal(path:ledgerId:entry:)``, `iap support audit reseal`).
/// The ledger keeps a copy of the head too (``SupportAuditHeadKeeper``), which ``LedgerGuardedSupportAuditLog``
/// compares the log with, so that deleting the log and its head together is noticed as well.
public actor FileSupportAuditLog: SupportAuditLog {
    /// The file that holds the log's head, beside the log.
    public static func headPath(for path: String) -> String {
        path + ".head"
    }

    /// The log's file.
    public nonisolated let path: String
    /// The identity of the ledger it anchors to.
    public nonisolated let ledgerId: String
    private let file: JSONLinesFile
    private var log: [SupportAuditEntry] = []
    private var head: SupportAuditHead
    /// The file's size after the last line this log wrote (or found when it opened): anything else means another
    /// hand cut or wrote the file.
    private var size: Int

    /// Opens (creating) the log.
    ///
    /// - Parameters:
    ///   - path: The file, such as `DIR/support-audit.jsonl` in the ledger's directory.
    ///   - ledgerId: The identity of the ledger (`FileEntitlementStore.ledgerIdentity()`).
    /// - Throws: ``IAPError`` `storageLocked`, `storageCorrupted` (a log short of its head, or an entry that does not
    ///   decode) or `storageFailure`.
    public init(path: String, ledgerId: String) throws {
        self.path = path
        self.ledgerId = ledgerId
        file = try JSONLinesFile(path: path, isPrivate: true)
        do {
            let lines = try file.readLines()
            let recorded = try Self.readHead(path)
            var head = SupportAuditHead.empty(ledgerId: ledgerId)
            for (index, line) in lines.enumerated() {
                let record = SupportAuditRecord(location: "line \(index + 1)", bytes: Array(line))
                // A line that is not an entry (edited, or of an older format) is kept and chained to; `verify` names it.
                if let entry = try? SupportAuditChain.decode(record) {
                    log.append(entry)
                }
                head = SupportAuditHead(entries: index + 1, lastHash: SupportAuditChain.hash(of: line))
                if let recorded, recorded.entries == index + 1, recorded.lastHash != head.lastHash {
                    throw IAPError(
                        .storageCorrupted,
                        "line \(index + 1) of \(path) is not the entry its head recorded: the log was edited; "
                            + "check it with 'iap support audit verify', keep it, and move it and its head aside"
                    )
                }
            }
            if let recorded, lines.count < recorded.entries {
                throw IAPError(
                    .storageCorrupted,
                    "\(path) holds \(lines.count) entries but its head records \(recorded.entries): entries were "
                        + "removed; check it with 'iap support audit verify', keep it, and move it and its head aside"
                )
            }
            if recorded == nil, !lines.isEmpty {
                throw IAPError(
                    .storageCorrupted,
                    "\(path) holds \(lines.count) entries but has no head (\(Self.headPath(for: path)) was deleted); "
                        + "check it with 'iap support audit verify'"
                )
            }
            self.head = head
            self.size = try file.size()
            if recorded != head {
                // The head an interrupted append left behind (the entry is durable, the head had not moved).
                try Self.writeHead(head, for: path)
            }
        } catch {
            file.close()
            throw error
        }
    }

    /// Seals an entry, appends it durably, then moves the head.
    ///
    /// - Throws: ``IAPError`` `storageFailure` (the entry is then not in the log) or `invalidArgument` for an entry
    ///   without actor or action.
    @discardableResult
    public func append(_ entry: SupportAuditEntry) throws -> SupportAuditEntry {
        // Never onto a file that is not the log any more (deleted, replaced, cut, written by another hand).
        try checkUntouched()
        let sealed = try SupportAuditChain.seal(entry, after: head)
        try file.append(line: sealed.record)
        size = try file.size()
        log.append(sealed.entry)
        head = sealed.head
        // The entry is durable: a head that fails to move now lags one entry behind, which the next append or
        // open repairs and `verify` notes without complaint.
        try? Self.writeHead(head, for: path)
        return sealed.entry
    }

    /// Throws when the log was tampered with since it was opened: its file deleted or replaced (the path no longer
    /// names the open file, so an entry would go where nobody reads it), cut or written by another hand (its size is
    /// not what this log left), or its head deleted or moved backwards. Cheap (two `stat`s and the small head
    /// file): checked before every append, and by the guard before every support action.
    ///
    /// - Throws: ``IAPError`` `storageCorrupted` naming what changed; `storageFailure` when the files cannot be read.
    public func checkWritable() async throws {
        try checkUntouched()
    }

    /// ``checkWritable()``, from within the log.
    private func checkUntouched() throws {
        guard try file.isStillAtItsPath() else {
            throw IAPError(
                .storageCorrupted,
                "\(path) was deleted or replaced while the log was open: entries would go where nobody reads them"
            )
        }
        let now = try file.size()
        guard now == size else {
            throw IAPError(
                .storageCorrupted,
                "\(path) holds \(now) bytes where this log left \(size): it was "
                    + (now < size ? "cut" : "written by another hand") + " while it was open"
            )
        }
        let recorded = try Self.readHead(path)
        // The head beside the log may lag one entry (a head write that failed after a durable entry), never more.
        guard let recorded, recorded.entries >= head.entries - 1, recorded.entries <= head.entries,
            recorded.entries != head.entries || recorded.lastHash == head.lastHash
        else {
            throw IAPError(
                .storageCorrupted,
                "the head of \(path) (\(Self.headPath(for: path))) was deleted or changed while the log was open"
            )
        }
    }

    /// Every entry, oldest first (lines that are not entries left out; ``verify()`` names them).
    public func entries() -> [SupportAuditEntry] {
        log
    }

    /// Checks the chain and the head, reading the file again.
    public func verify() throws -> SupportAuditVerification {
        try Self.verify(path: path, ledgerId: ledgerId)
    }

    /// Checks a log file and its head without opening them for writing or locking them (another process may hold
    /// the log).
    ///
    /// - Parameters:
    ///   - path: The log's file; a missing file is an empty log.
    ///   - ledgerId: The identity of the ledger it belongs to.
    /// - Returns: What was found.
    /// - Throws: ``IAPError`` `storageFailure` when a file cannot be read, `storageCorrupted` when the head is not a
    ///   head.
    public static func verify(path: String, ledgerId: String) throws -> SupportAuditVerification {
        let recorded = try readHead(path)
        var records: [SupportAuditRecord] = []
        var notes: [String] = []
        if try FileLedgerIdentity.exists(path) {
            let (lines, torn) = try JSONLinesFile.lines(of: path)
            records = lines.enumerated().map {
                SupportAuditRecord(location: "line \($0.offset + 1)", bytes: Array($0.element))
            }
            if torn {
                notes.append(
                    "line \(lines.count + 1) is incomplete: an append that never returned (cut off when the log is "
                        + "next opened)"
                )
            }
        }
        return SupportAuditChain.verify(records, ledgerId: ledgerId, recordedHead: recorded, notes: notes)
    }

    /// Appends an operator's reseal entry after whatever the log holds now, and sets the head beside it to the new
    /// entry: what lets support write to a log again that does not match its head (`iap support audit reseal`).
    ///
    /// The entry is sealed after the log's last line as it is (a torn last line is cut off first), so the chain goes
    /// on from what is left; breaks before it stay for ``verify(path:ledgerId:)`` to name. Move a log with broken
    /// entries aside first to start a new one from the reseal entry.
    ///
    /// - Parameters:
    ///   - path: The log's file (created when missing).
    ///   - ledgerId: The identity of the ledger it belongs to.
    ///   - entry: The reseal entry.
    /// - Returns: The entry as sealed and stored.
    /// - Throws: ``IAPError`` `storageLocked` while another process holds the log, `storageFailure` when it cannot be
    ///   written.
    public static func reseal(path: String, ledgerId: String, entry: SupportAuditEntry) throws -> SupportAuditEntry {
        let file = try JSONLinesFile(path: path, isPrivate: true)
        defer { file.close() }
        let lines = try file.readLines()
        let after =
            lines.last.map { SupportAuditHead(entries: lines.count, lastHash: SupportAuditChain.hash(of: $0)) }
            ?? .empty(ledgerId: ledgerId)
        let sealed = try SupportAuditChain.seal(entry, after: after)
        try file.append(line: sealed.record)
        try writeHead(sealed.head, for: path)
        return sealed.entry
    }

    /// Closes the file and releases its lock; later appends fail.
    public func close() {
        file.close()
    }

    // MARK: - The head

    private static func readHead(_ path: String) throws -> SupportAuditHead? {
        let headPath = headPath(for: path)
        guard try FileLedgerIdentity.exists(headPath) else { return nil }
        let file = try SystemFile.open(headPath, flags: O_RDONLY | O_NOFOLLOW)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while bytes.count < 4096 {
            let count = try buffer.withUnsafeMutableBytes { try file.read(into: $0) }
            guard count > 0 else { break }
            bytes += buffer.prefix(count)
        }
        do {
            return try JSONDecoder().decode(SupportAuditHead.self, from: Data(bytes))
        } catch {
            throw IAPError.wrapping(error, as: .storageCorrupted, "\(headPath) is not the head of an audit log")
        }
    }

    /// Replaces the head: written to a private temporary file, flushed, renamed over the old one.
    private static func writeHead(_ head: SupportAuditHead, for path: String) throws {
        let headPath = headPath(for: path)
        let temporary = headPath + ".tmp"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes = Array(try encoder.encode(head)) + [UInt8(ascii: "\n")]
        try SystemFile.remove(temporary)
        let file = try SystemFile.open(temporary, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)
        guard fchmod(file.descriptor, 0o600) == 0 else {
            throw SystemFile.failure("chmod", temporary)
        }
        try file.write(bytes)
        try file.sync()
        file.close()
        try SystemFile.rename(temporary, to: headPath)
        let slash = headPath.lastIndex(of: "/")
        try SystemFile.syncDirectory(slash.map { String(headPath[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? ".")
    }
}
