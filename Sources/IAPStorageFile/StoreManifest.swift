#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// What a store directory must hold: `DIR/MANIFEST`, so that a journal that was emptied, cut short or deleted
/// is noticed instead of taken for a ledger that never had those records.
///
/// ```
/// {"v":1,"snapshot":{"generation":3,"lsn":1200},"journals":[{"generation":3,"bytes":81920,"lsn":1260}],
///  "signed":{"generation":1,"bytes":2048000,"records":1201},"signedFrom":1}
/// ```
///
/// - `snapshot`: the snapshot to load and the log sequence number it holds (absent before the first compaction);
/// - `journals`: every journal that must exist, oldest first, each with a watermark: it is at least `bytes` long
///   and its records reach at least `lsn`. Every byte below a watermark was durable when the manifest was written,
///   so no crash can take it back: a journal shorter than its watermark lost recorded writes;
/// - `signed`: the signed-transaction file and how much of it is committed (the snapshots refer only to that
///   part; bytes after it are what an interrupted compaction left, and opening cuts them);
/// - `signedFrom`: the first entry sequence recorded with signed transactions kept (1, or for a ledger an earlier
///   version wrote, the sequence after its last entry then): `iap ledger check --reverify` expects every entry from
///   there on to have its signed transaction.
///
/// The manifest is replaced atomically (`MANIFEST.tmp`, `fsync`, `rename`, `fsync` of the directory) when the
/// store is created or opened, when a compaction starts a journal and when it publishes a snapshot, when the
/// store closes, and after each further 1 MiB of journal: never on the path of a write, which pays for one `fsync`
/// as before. Records written after the last watermark can be lost without notice, as they can in a crash.
struct StoreManifest: Codable, Sendable, Equatable {
    /// The format version this build writes and reads.
    static let formatVersion = 1
    /// The most bytes a manifest may have; anything larger is not one.
    static let maximumSize = 1 << 20

    struct Snapshot: Codable, Sendable, Equatable {
        var generation: UInt64
        var lsn: UInt64
    }

    struct Journal: Codable, Sendable, Equatable {
        var generation: UInt64
        /// The journal holds at least this many bytes.
        var bytes: Int
        /// Its records reach at least this log sequence number.
        var lsn: UInt64
    }

    struct Signed: Codable, Sendable, Equatable {
        var generation: UInt64
        /// The committed length of the file.
        var bytes: Int
        /// How many records the committed part holds (the next record's `seq` is one more).
        var records: UInt64
    }

    var version: Int = formatVersion
    var snapshot: Snapshot?
    var journals: [Journal]
    var signed: Signed?
    /// The first entry sequence recorded by a version that keeps signed transactions: entries before it (of a
    /// ledger an earlier version wrote) have none, and are not expected to.
    var signedFrom: Int64 = 1

    private enum CodingKeys: String, CodingKey {
        case version = "v"
        case snapshot, journals, signed, signedFrom
    }

    /// The journal being appended to (the newest).
    var current: Journal? { journals.last }

    /// Reads `DIR/MANIFEST`, or `nil` when there is none (a new store, or one of an earlier version).
    ///
    /// - Throws: ``IAPError`` with code `storageCorrupted` when it does not decode or is of another version,
    ///   `unsafeFile` for a link, `storageFailure` when it cannot be read.
    static func read(_ files: StoreFiles) throws -> StoreManifest? {
        guard let bytes = try SystemFile.readContents(of: files.manifest, maximumSize: maximumSize) else {
            return nil
        }
        let manifest: StoreManifest
        do {
            manifest = try JSONDecoder().decode(StoreManifest.self, from: Data(bytes))
        } catch {
            throw IAPError(
                .storageCorrupted,
                "\(manifestName) does not decode (\(error)) in \(files.directory); it records which files the ledger "
                    + "must hold, so the ledger cannot be checked without it"
            )
        }
        guard manifest.version == formatVersion else {
            throw IAPError(
                .storageCorrupted,
                "\(manifestName) is of format version \(manifest.version), this build reads \(formatVersion), in "
                    + "\(files.directory); open it with the swift-iap version that wrote it"
            )
        }
        guard !manifest.journals.isEmpty,
            zip(manifest.journals, manifest.journals.dropFirst()).allSatisfy({ $0.generation < $1.generation })
        else {
            throw IAPError(
                .storageCorrupted,
                "\(manifestName) lists no journal, or its journals out of order, in \(files.directory)"
            )
        }
        return manifest
    }

    /// Replaces `DIR/MANIFEST` atomically and, with `sync`, durably.
    ///
    /// - Throws: ``IAPError`` with code `storageFailure` (the old manifest is then untouched).
    func write(to files: StoreFiles, sync: Bool) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes: [UInt8]
        do {
            bytes = Array(try encoder.encode(self)) + [UInt8(ascii: "\n")]
        } catch {
            throw IAPError(.storageFailure, "cannot encode the manifest", underlying: error)
        }
        try SystemFile.replaceContents(of: files.manifest, with: bytes, sync: sync)
    }

    private static var manifestName: String { StoreFiles.manifestName }
}
