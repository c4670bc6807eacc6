import IAPCore

/// The names of the files in a store directory.
///
/// - `MANIFEST`: what the store must hold (``StoreManifest``), replaced atomically;
/// - `journal-<generation>.jsonl`: the records written since the snapshot of the same generation;
/// - `snapshot-<generation>.json`: the whole ledger as of its header's log sequence number;
/// - `signed-<generation>.jsonl`: the signed transactions the snapshots refer to, appended by each compaction;
/// - `snapshot-<generation>.json.tmp`, `MANIFEST.tmp`: a file being written (never read; removed on open);
/// - `LOCK`: the advisory lock and who holds it;
/// - `damaged-<milliseconds>/`: what `repair` moved aside (never read, never removed by the store).
struct StoreFiles: Sendable {
    /// The directory's path, without a trailing slash.
    let directory: String

    /// The journal of a generation.
    func journal(_ generation: UInt64) -> String {
        directory + "/" + Self.journalName(generation)
    }

    /// The snapshot of a generation.
    func snapshot(_ generation: UInt64) -> String {
        directory + "/" + Self.snapshotName(generation)
    }

    /// The signed-transaction file of a generation.
    func signed(_ generation: UInt64) -> String {
        directory + "/" + Self.signedName(generation)
    }

    /// The temporary file a snapshot is written to before it is renamed.
    func temporarySnapshot(_ generation: UInt64) -> String {
        snapshot(generation) + ".tmp"
    }

    /// The manifest.
    var manifest: String {
        directory + "/" + Self.manifestName
    }

    /// A file of the directory by name.
    func path(_ name: String) -> String {
        directory + "/" + name
    }

    static let manifestName = "MANIFEST"

    static func journalName(_ generation: UInt64) -> String {
        "journal-\(generation).jsonl"
    }

    static func snapshotName(_ generation: UInt64) -> String {
        "snapshot-\(generation).json"
    }

    static func signedName(_ generation: UInt64) -> String {
        "signed-\(generation).jsonl"
    }

    /// What a directory holds, by kind and generation.
    struct Listing: Sendable {
        var journals: [UInt64] = []
        var snapshots: [UInt64] = []
        var signed: [UInt64] = []
        var temporaries: [String] = []
        var hasManifest = false

        /// Whether it holds any file of a ledger (a lock file alone is not one).
        var holdsLedger: Bool {
            hasManifest || !journals.isEmpty || !snapshots.isEmpty || !signed.isEmpty
        }

        /// The highest generation of any file.
        var newestGeneration: UInt64 {
            max(journals.last ?? 0, snapshots.last ?? 0, signed.last ?? 0)
        }
    }

    /// Lists the store files in the directory (other names are left alone).
    func list() throws -> Listing {
        var listing = Listing()
        for name in try SystemFile.names(in: directory) {
            if let generation = Self.generation(of: name, prefix: "journal-", suffix: ".jsonl") {
                listing.journals.append(generation)
            } else if let generation = Self.generation(of: name, prefix: "snapshot-", suffix: ".json") {
                listing.snapshots.append(generation)
            } else if let generation = Self.generation(of: name, prefix: "signed-", suffix: ".jsonl") {
                listing.signed.append(generation)
            } else if name == Self.manifestName {
                listing.hasManifest = true
            } else if (name.hasPrefix("snapshot-") && name.hasSuffix(".json.tmp")) || name == Self.manifestName + ".tmp"
            {
                listing.temporaries.append(name)
            }
        }
        listing.journals.sort()
        listing.snapshots.sort()
        listing.signed.sort()
        listing.temporaries.sort()
        return listing
    }

    private static func generation(of name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count > prefix.count + suffix.count else {
            return nil
        }
        let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits.first != "0" else {
            return nil
        }
        return UInt64(digits)
    }
}
