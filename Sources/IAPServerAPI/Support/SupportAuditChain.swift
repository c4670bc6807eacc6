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

/// The hash chain of the support audit: how an entry is sealed into a log, and how a log is checked.
///
/// Every entry carries, in ``SupportAuditEntry/previousHash``, the SHA-256 of the entry before it exactly as the log
/// stores it (the bytes of its JSON line or column); the first carries the ledger's anchor, the SHA-256 of the
/// ledger's identity, so a log cannot be passed off as another ledger's. Entries are numbered from 1
/// (``SupportAuditEntry/sequence``). Changing one byte of an entry breaks the link to the next; removing, adding or
/// moving an entry breaks the numbering and a link; cutting the log short or emptying it leaves it short of its
/// head (``SupportAuditHead``), which the log keeps apart from the entries, and short of the head the ledger keeps
/// (``SupportAuditHeadKeeper``), which deleting the log and its head together does not take along.
///
/// The chain holds no secret: someone who can rewrite the entries, the head and the ledger together can forge a
/// consistent log. It makes every edit by other means evident, and a copy of the head kept elsewhere (the hash that
/// `iap support audit verify` prints) makes even such a rewrite evident.
public enum SupportAuditChain {
    /// An entry sealed into a chain.
    public struct Sealed: Sendable, Hashable {
        /// The entry with its number, the previous hash and the OS user set.
        public var entry: SupportAuditEntry
        /// The bytes to store: one JSON object with sorted keys, without a line break.
        public var record: [UInt8]
        /// The head once it is stored.
        public var head: SupportAuditHead
    }

    /// The `previousHash` of a ledger's first entry: the SHA-256 of `swift-iap support audit v1`, a line break, and
    /// the ledger's identity.
    ///
    /// - Parameter ledgerId: The ledger's identity (`IdentifiedEntitlementStore/ledgerIdentity()`).
    /// - Returns: The anchor, in lowercase hexadecimal.
    public static func anchor(ledgerId: String) -> String {
        SHA256.hexDigest(Array("swift-iap support audit v1\n\(ledgerId)".utf8))
    }

    /// The hash a stored entry's successor carries.
    ///
    /// - Parameter record: The entry's stored bytes.
    /// - Returns: Their SHA-256, in lowercase hexadecimal.
    public static func hash(of record: some Sequence<UInt8>) -> String {
        SHA256.hexDigest(record)
    }

    /// Seals an entry as the one after `head`: numbers it, links it to the previous entry, records the process's OS
    /// user, and encodes it.
    ///
    /// - Parameters:
    ///   - entry: The entry as the caller made it.
    ///   - head: The head of the log it goes into.
    /// - Returns: The sealed entry, its bytes and the new head.
    /// - Throws: ``IAPError`` with code `invalidArgument` for an entry without an actor or an action.
    public static func seal(_ entry: SupportAuditEntry, after head: SupportAuditHead) throws -> Sealed {
        guard !entry.actor.isEmpty, !entry.action.isEmpty else {
            throw IAPError(.invalidArgument, "an audit entry needs an actor and an action")
        }
        var sealed = entry
        sealed.sequence = head.entries + 1
        sealed.previousHash = head.lastHash
        sealed.osUser = osUser
        let record: [UInt8]
        do {
            record = Array(try AppStoreJSON.makeEncoder().encode(sealed))
        } catch {
            throw IAPError.wrapping(error, as: .invalidArgument, "the audit entry cannot be encoded")
        }
        return Sealed(
            entry: sealed,
            record: record,
            head: SupportAuditHead(entries: sealed.sequence, lastHash: hash(of: record))
        )
    }

    /// Decodes a stored entry.
    ///
    /// - Parameter record: The stored bytes.
    /// - Returns: The entry.
    /// - Throws: ``IAPError`` with code `storageCorrupted` when the bytes are not an audit entry.
    public static func decode(_ record: SupportAuditRecord) throws -> SupportAuditEntry {
        do {
            return try AppStoreJSON.makeDecoder().decode(SupportAuditEntry.self, from: Data(record.bytes))
        } catch {
            throw IAPError.wrapping(error, as: .storageCorrupted, "\(record.location) is not an audit entry")
        }
    }

    /// Checks stored entries against the ledger's anchor and the recorded head.
    ///
    /// - Parameters:
    ///   - records: The stored entries, in the log's order.
    ///   - ledgerId: The identity of the ledger the log belongs to.
    ///   - recordedHead: The head the log keeps, or `nil` when it has none (a problem once there are entries).
    ///   - notes: Notes of the reader to pass on (a torn last line).
    /// - Returns: The entry count, the head read, and every break with its place.
    public static func verify(
        _ records: [SupportAuditRecord],
        ledgerId: String,
        recordedHead: SupportAuditHead?,
        notes: [String] = []
    ) -> SupportAuditVerification {
        var problems: [SupportAuditVerification.Problem] = []
        var notes = notes
        var expected = anchor(ledgerId: ledgerId)
        var hashes: [String] = []
        hashes.reserveCapacity(records.count)
        for (index, record) in records.enumerated() {
            let number = index + 1
            func problem(_ message: String) {
                problems.append(.init(entry: number, location: record.location, message: message))
            }
            defer {
                expected = hash(of: record.bytes)
                hashes.append(expected)
            }
            guard !record.bytes.isEmpty else {
                problem("is empty where an entry belongs")
                continue
            }
            let entry: SupportAuditEntry
            do {
                entry = try decode(record)
            } catch {
                problem("is not an audit entry (edited, or cut in the middle)")
                continue
            }
            if entry.previousHash.isEmpty {
                problem("carries no chain: written before the audit was chained, or its fields were removed")
                continue
            }
            if entry.sequence != number {
                problem(
                    "is numbered \(entry.sequence) where entry \(number) belongs: entries before it were removed, "
                        + "added or moved"
                )
            }
            if entry.previousHash != expected {
                problem(
                    number == 1
                        ? "does not start from this ledger's identity: the log belongs to another ledger, or its "
                            + "first entries were removed"
                        : "does not follow the entry before it: that entry was edited, or entries between were "
                            + "removed or moved"
                )
            }
        }
        let head = SupportAuditHead(entries: records.count, lastHash: hashes.last ?? anchor(ledgerId: ledgerId))
        if let recordedHead {
            if records.count < recordedHead.entries {
                problems.append(
                    .init(
                        entry: nil,
                        location: "",
                        message: "the log holds \(records.count) entries but its head records \(recordedHead.entries): "
                            + (records.isEmpty ? "the log was emptied or deleted" : "entries were removed")
                    )
                )
            } else if recordedHead.entries > 0, hashes[recordedHead.entries - 1] != recordedHead.lastHash {
                problems.append(
                    .init(
                        entry: recordedHead.entries,
                        location: records[recordedHead.entries - 1].location,
                        message: "is not the entry the head recorded: it was edited or replaced"
                    )
                )
            } else if records.count > recordedHead.entries {
                notes.append(
                    "the head records \(recordedHead.entries) entries and the log holds \(records.count): an append "
                        + "stopped before it moved the head (it moves on the next append)"
                )
            }
        } else if !records.isEmpty {
            problems.append(
                .init(
                    entry: nil,
                    location: "",
                    message: "the log holds \(records.count) entries but has no head: the head was deleted"
                )
            )
        }
        var result = SupportAuditVerification(
            entryCount: records.count,
            head: head,
            recordedHead: recordedHead,
            problems: problems,
            notes: notes
        )
        result.anchor = anchor(ledgerId: ledgerId)
        result.entryHashes = hashes
        return result
    }

    /// The head of a log whose last entry is `entry`, as a log sealed and stored it (``seal(_:after:)``): its number
    /// and the hash of its stored bytes, which encoding the sealed entry again gives.
    ///
    /// - Parameter entry: An entry as ``SupportAuditLog/append(_:)`` returned it.
    /// - Returns: The head after it.
    /// - Throws: ``IAPError`` `invalidArgument` when the entry cannot be encoded.
    public static func head(after entry: SupportAuditEntry) throws -> SupportAuditHead {
        let record: Data
        do {
            record = try AppStoreJSON.makeEncoder().encode(entry)
        } catch {
            throw IAPError.wrapping(error, as: .invalidArgument, "the audit entry cannot be encoded")
        }
        return SupportAuditHead(entries: entry.sequence, lastHash: hash(of: record))
    }

    /// The operating-system user this process runs as (`getpwuid_r(geteuid())`), or `uid N` when it has no name.
    public static var osUser: String {
        let uid = geteuid()
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let status = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil, let name = entry.pw_name else {
            return "uid \(uid)"
        }
        return String(cString: name)
    }
}
