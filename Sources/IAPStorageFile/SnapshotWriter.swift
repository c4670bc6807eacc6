#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import IAPCore

/// Writes a snapshot file: a header record, every entry by sequence, the bindings, renewal infos and
/// processed notifications (each sorted by key, so equal ledgers give equal files), the support audit's head when
/// the ledger recorded one, and an end record that counts the records before it.
enum SnapshotWriter {
    /// Writes `state` as snapshot `generation` to `path` and flushes it to the device.
    ///
    /// - Parameters:
    ///   - state: The ledger.
    ///   - references: Where each entry's signed transaction is in the signed-transaction file, by position
    ///     (`nil`: it has none).
    ///   - lsn: The last journal record the snapshot includes.
    ///   - generation: The snapshot's generation.
    ///   - signedGeneration: The signed-transaction file its references point into.
    ///   - path: The file to write.
    ///   - fsync: Whether to flush it to the device.
    /// - Throws: ``IAPError`` with code `storageFailure` if the file cannot be written.
    static func write(
        _ state: LedgerState,
        references: (Int) -> JournalOperation.SignedReference?,
        lsn: UInt64,
        generation: UInt64,
        signedGeneration: UInt64?,
        to path: String,
        fsync: Bool
    ) throws {
        let file = try SystemFile.open(path, flags: O_WRONLY | O_CREAT | O_TRUNC)
        let encoder = RecordEncoder()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        var seq: UInt64 = 0
        func append(_ operation: JournalOperation) throws {
            seq += 1
            buffer += try JournalRecord.line(operation, seq: seq, encoder: encoder)
            if buffer.count >= 1 << 20 {
                try file.write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        try append(
            .snapshot(
                .init(
                    generation: generation,
                    lsn: lsn,
                    lastSequence: state.lastSequence,
                    signedGeneration: signedGeneration
                )
            )
        )
        for (position, entry) in state.entries.enumerated() {
            try append(.entry(entry, signed: references(position).map { .reference($0) } ?? .unchanged))
        }
        for (token, userId) in state.bindings.sorted(by: { $0.key < $1.key }) {
            try append(.bind(token: token, userId: userId))
        }
        for (_, info) in state.renewalInfos.sorted(by: { $0.key < $1.key }) {
            try append(.renewal(info))
        }
        for (uuid, at) in state.notifications.sorted(by: { $0.key < $1.key }) {
            try append(.notification(uuid: uuid, at: at))
        }
        if let head = state.auditHead {
            try append(.auditHead(head))
        }
        try append(.end(records: Int(seq)))
        try file.write(buffer)
        if fsync {
            try file.sync()
        }
        file.close()
    }
}
