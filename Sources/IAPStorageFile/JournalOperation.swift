#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// One record of a journal, snapshot or signed-transaction file: a mutation with the full new value, so replay
/// is exact.
///
/// Encoded as a JSON object with one key that names the kind; an entry record may carry a second key with the
/// entry's signed transaction (``SignedField``). In a journal, `signedTransaction` is the compact JWS, or (format
/// version 3) `{"header": offset, "rest": "<payload>.<signature>"}` when the JWS's protected header, the certificate
/// chain that nearly every signed transaction shares, is the `header` record at that byte offset of the same
/// journal:
///
/// | kind | value | in |
/// |---|---|---|
/// | `insert` | the entry as stored (sequence and revision assigned), and `signedTransaction` | journals |
/// | `replace` | the entry as stored (revision bumped), and `signedTransaction` when it changes | journals |
/// | `entry` | an entry as stored, and `signed`: where its signed transaction is | snapshots |
/// | `bind` | `{"token": lowercased token, "userId": …}` | journals, snapshots |
/// | `renewal` | the renewal info | journals, snapshots |
/// | `notification` | `{"uuid": …, "at": milliseconds}` | journals, snapshots |
/// | `snapshot` | `{"generation": G, "lsn": N, "lastSequence": S, "signedGeneration": s}`, the first record | snapshots |
/// | `end` | `{"records": N}`, the last record of a snapshot, counting the ones before it | snapshots |
/// | `journal` | `{"generation": G}`, the first line of a journal (record number 0) | journals |
/// | `header` | a JWS protected header (base64url), that `signed` records, or a journal's entry records, refer to by its byte offset | signed files, journals (record number 0) |
/// | `signed` | `{"transactionId", "header": offset, "rest": "<payload>.<signature>"}` | signed files |
/// | `auditHead` | `{"entries": N, "lastHash": H}`: the support audit's head after an append (format version 4) | journals, snapshots |
enum JournalOperation: Sendable, Equatable {
    case insert(LedgerEntry, signed: SignedField)
    case replace(LedgerEntry, signed: SignedField)
    case entry(LedgerEntry, signed: SignedField)
    case bind(token: String, userId: String)
    case renewal(RenewalInfoPayload)
    case notification(uuid: String, at: Date)
    case snapshot(SnapshotHeader)
    case end(records: Int)
    case journal(JournalHeader)
    case header(String)
    case signed(SignedRecord)
    case auditHead(LedgerState.AuditHead)

    /// What an entry record says of the entry's signed transaction.
    enum SignedField: Sendable, Equatable {
        /// No key: an insert without one, a replace that keeps the stored one, a snapshot entry without one.
        case unchanged
        /// `"signedTransaction":null`: a replace that removes the stored one.
        case removed
        /// `"signedTransaction":"<compact JWS>"`, in a journal.
        case jws(String)
        /// `"signedTransaction":{"header":offset,"rest":"<payload>.<signature>"}`, in a journal: the protected header
        /// is the `header` record at byte `header` of the same journal.
        case split(header: UInt64, rest: String)
        /// `"signed":[offset,length]`, in a snapshot: the line of the signed-transaction file that holds it.
        case reference(SignedReference)
    }

    /// Where a signed transaction is in the signed-transaction file: its line, without the newline.
    struct SignedReference: Sendable, Equatable, Hashable {
        var offset: UInt64
        var length: UInt32
    }

    /// The header of a snapshot file.
    struct SnapshotHeader: Codable, Sendable, Equatable {
        /// The generation of the snapshot (the same as in its file name).
        var generation: UInt64
        /// The last journal record (log sequence number) the snapshot includes.
        var lsn: UInt64
        /// The sequence of the last inserted entry.
        var lastSequence: Int64
        /// The signed-transaction file its `signed` references point into; absent in snapshots written before
        /// signed transactions were kept.
        var signedGeneration: UInt64?
    }

    /// The first line of a journal: which generation it is. Journals of earlier versions have none.
    struct JournalHeader: Codable, Sendable, Equatable {
        var generation: UInt64
    }

    /// One signed transaction in a signed-transaction file.
    struct SignedRecord: Codable, Sendable, Equatable {
        /// The transaction it is the signed data of.
        var transactionId: String
        /// The byte offset of the `header` record that holds its protected header.
        var header: UInt64
        /// The rest of the compact JWS: `<payload>.<signature>`.
        var rest: String
    }

    /// The format version a reader needs for this record: 4 for the support audit's head, 3 for what only
    /// journals of version 3 hold (a `header` record in a journal, a signed transaction split from its header), 2
    /// for the rest.
    var formatVersion: Int {
        switch self {
        case .auditHead: 4
        case .insert(_, .split), .replace(_, .split): 3
        case .header: 3
        default: 2
        }
    }

    /// The name of the kind, for messages.
    var kind: String {
        switch self {
        case .insert: "insert"
        case .replace: "replace"
        case .entry: "entry"
        case .bind: "bind"
        case .renewal: "renewal"
        case .notification: "notification"
        case .snapshot: "snapshot"
        case .end: "end"
        case .journal: "journal"
        case .header: "header"
        case .signed: "signed"
        case .auditHead: "auditHead"
        }
    }
}

extension JournalOperation: Codable {
    private enum Key: String, CodingKey {
        case insert, replace, entry, bind, renewal, notification, snapshot, end, journal, header, signed
        case auditHead
        case signedTransaction
    }

    private struct Binding: Codable {
        var token: String
        var userId: String
    }

    private struct Notification: Codable {
        var uuid: String
        var at: Date
    }

    private struct End: Codable {
        var records: Int
    }

    private struct Split: Codable {
        var header: UInt64
        var rest: String
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let keys = container.allKeys
        func refuse(_ reason: String) -> DecodingError {
            DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: reason + ", found keys " + keys.map(\.stringValue).joined(separator: ", ")
                )
            )
        }
        // One operation, and for entry records the key of their signed transaction.
        let operations = keys.filter { $0 != .signedTransaction && !($0 == .signed && keys.contains(.entry)) }
        guard operations.count == 1, let key = operations.first else {
            throw refuse("a record holds exactly one known operation")
        }
        let signed = keys.count == 2 ? keys.first { $0 != key } : nil
        switch (key, signed) {
        case (_, nil) where keys.count == 1, (.insert, .signedTransaction?), (.replace, .signedTransaction?),
            (.entry, .signed?):
            break
        default:
            throw refuse("only entry records carry a signed transaction, in their own key")
        }
        func signedField() throws -> SignedField {
            switch signed {
            case nil:
                return .unchanged
            case .signedTransaction?:
                if try container.decodeNil(forKey: .signedTransaction) {
                    return .removed
                }
                if let split = try? container.decode(Split.self, forKey: .signedTransaction) {
                    return .split(header: split.header, rest: split.rest)
                }
                return .jws(try container.decode(String.self, forKey: .signedTransaction))
            default:
                let pair = try container.decode([UInt64].self, forKey: .signed)
                guard pair.count == 2, let length = UInt32(exactly: pair[1]) else {
                    throw refuse("a signed reference is [offset, length]")
                }
                return .reference(SignedReference(offset: pair[0], length: length))
            }
        }
        switch key {
        case .insert:
            self = .insert(try container.decode(LedgerEntry.self, forKey: key), signed: try signedField())
        case .replace:
            self = .replace(try container.decode(LedgerEntry.self, forKey: key), signed: try signedField())
        case .entry:
            self = .entry(try container.decode(LedgerEntry.self, forKey: key), signed: try signedField())
        case .bind:
            let binding = try container.decode(Binding.self, forKey: key)
            self = .bind(token: binding.token, userId: binding.userId)
        case .renewal:
            self = .renewal(try container.decode(RenewalInfoPayload.self, forKey: key))
        case .notification:
            let notification = try container.decode(Notification.self, forKey: key)
            self = .notification(uuid: notification.uuid, at: notification.at)
        case .snapshot:
            self = .snapshot(try container.decode(SnapshotHeader.self, forKey: key))
        case .end:
            self = .end(records: try container.decode(End.self, forKey: key).records)
        case .journal:
            self = .journal(try container.decode(JournalHeader.self, forKey: key))
        case .header:
            self = .header(try container.decode(String.self, forKey: key))
        case .signed:
            self = .signed(try container.decode(SignedRecord.self, forKey: key))
        case .auditHead:
            self = .auditHead(try container.decode(LedgerState.AuditHead.self, forKey: key))
        case .signedTransaction:
            throw refuse("a signed transaction belongs to an entry record")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        func encode(_ signed: SignedField) throws {
            switch signed {
            case .unchanged: break
            case .removed: try container.encodeNil(forKey: .signedTransaction)
            case .jws(let jws): try container.encode(jws, forKey: .signedTransaction)
            case .split(let header, let rest):
                try container.encode(Split(header: header, rest: rest), forKey: .signedTransaction)
            case .reference(let reference):
                try container.encode([reference.offset, UInt64(reference.length)], forKey: .signed)
            }
        }
        switch self {
        case .insert(let entry, let signed):
            try container.encode(entry, forKey: .insert)
            try encode(signed)
        case .replace(let entry, let signed):
            try container.encode(entry, forKey: .replace)
            try encode(signed)
        case .entry(let entry, let signed):
            try container.encode(entry, forKey: .entry)
            try encode(signed)
        case .bind(let token, let userId):
            try container.encode(Binding(token: token, userId: userId), forKey: .bind)
        case .renewal(let info):
            try container.encode(info, forKey: .renewal)
        case .notification(let uuid, let at):
            try container.encode(Notification(uuid: uuid, at: at), forKey: .notification)
        case .snapshot(let header):
            try container.encode(header, forKey: .snapshot)
        case .end(let records):
            try container.encode(End(records: records), forKey: .end)
        case .journal(let header):
            try container.encode(header, forKey: .journal)
        case .header(let header):
            try container.encode(header, forKey: .header)
        case .signed(let record):
            try container.encode(record, forKey: .signed)
        case .auditHead(let head):
            try container.encode(head, forKey: .auditHead)
        }
    }
}
