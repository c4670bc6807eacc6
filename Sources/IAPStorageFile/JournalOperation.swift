#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// One record of a journal or snapshot file: a mutation with the full new value, so replay is exact.
///
/// Encoded as a JSON object with exactly one key that names the kind:
///
/// | kind | value | in |
/// |---|---|---|
/// | `insert` | the entry as stored (sequence and revision assigned) | journals |
/// | `replace` | the entry as stored (revision bumped) | journals |
/// | `entry` | an entry as stored | snapshots |
/// | `bind` | `{"token": lowercased token, "userId": …}` | both |
/// | `renewal` | the renewal info | both |
/// | `notification` | `{"uuid": …, "at": milliseconds}` | both |
/// | `snapshot` | `{"generation": G, "lsn": N, "lastSequence": S}`, the first record of a snapshot | snapshots |
/// | `end` | `{"records": N}`, the last record of a snapshot, counting the ones before it | snapshots |
enum JournalOperation: Sendable, Equatable {
    case insert(LedgerEntry)
    case replace(LedgerEntry)
    case entry(LedgerEntry)
    case bind(token: String, userId: String)
    case renewal(RenewalInfoPayload)
    case notification(uuid: String, at: Date)
    case snapshot(SnapshotHeader)
    case end(records: Int)

    /// The header of a snapshot file.
    struct SnapshotHeader: Codable, Sendable, Equatable {
        /// The generation of the snapshot (the same as in its file name).
        var generation: UInt64
        /// The last journal record (log sequence number) the snapshot includes.
        var lsn: UInt64
        /// The sequence of the last inserted entry.
        var lastSequence: Int64
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
        }
    }
}

extension JournalOperation: Codable {
    private enum Key: String, CodingKey {
        case insert, replace, entry, bind, renewal, notification, snapshot, end
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

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "a record holds exactly one known operation, found keys "
                        + container.allKeys.map(\.stringValue).joined(separator: ", ")
                )
            )
        }
        switch key {
        case .insert:
            self = .insert(try container.decode(LedgerEntry.self, forKey: key))
        case .replace:
            self = .replace(try container.decode(LedgerEntry.self, forKey: key))
        case .entry:
            self = .entry(try container.decode(LedgerEntry.self, forKey: key))
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
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case .insert(let entry):
            try container.encode(entry, forKey: .insert)
        case .replace(let entry):
            try container.encode(entry, forKey: .replace)
        case .entry(let entry):
            try container.encode(entry, forKey: .entry)
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
        }
    }
}
