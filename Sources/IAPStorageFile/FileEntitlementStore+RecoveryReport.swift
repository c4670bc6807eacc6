extension FileEntitlementStore {
    /// What opening a store found and repaired — or, for a read-only open, what an open would repair.
    ///
    /// An open repairs only what no acknowledged write is part of: a torn record at the very end of the journal
    /// (its call never returned), the leftovers of an interrupted compaction, and the uncommitted end of the
    /// signed-transaction file. Anything else refuses the open (`storageCorrupted`).
    public struct RecoveryReport: Sendable, Hashable, CustomStringConvertible {
        /// A torn record at the end of the journal, left by a crash in the middle of a write, and cut away.
        public struct DroppedTail: Sendable, Hashable {
            /// The journal's file name.
            public var file: String
            /// The byte offset where the torn record started; the journal now ends there.
            public var offset: Int
            /// How many bytes were cut.
            public var length: Int
            /// Why the record was unreadable (a last line without its newline).
            public var reason: String
        }

        /// The generation of the snapshot that was loaded, or `nil` if there was none.
        public var snapshotGeneration: UInt64?
        /// How many records the snapshot held.
        public var snapshotRecords: Int
        /// How many journal records were replayed on top of it.
        public var journalRecords: Int
        /// The torn record cut from the end of the journal, if there was one. Its write never returned, so
        /// nothing acknowledged was lost.
        public var droppedTail: DroppedTail?
        /// Files left over by an interrupted compaction (older generations, temporary snapshots) and removed.
        public var removedFiles: [String]
        /// Bytes cut from the end of the signed-transaction file: what an interrupted compaction appended and
        /// never committed.
        public var cutSignedBytes: Int = 0
        /// Whether the directory had no manifest (a ledger written by an earlier version) and one was written
        /// from the files found.
        public var createdManifest: Bool = false
        /// Whether this describes what an open would do, by a read-only open that changed nothing.
        public var isPlanOnly: Bool = false

        /// Whether opening had anything to repair.
        public var repairedAnything: Bool {
            droppedTail != nil || !removedFiles.isEmpty || cutSignedBytes > 0 || createdManifest
        }

        /// One line per finding.
        public var description: String {
            let cut = isPlanOnly ? "would cut" : "cut"
            let remove = isPlanOnly ? "would remove leftovers" : "removed leftovers"
            var lines = [
                "snapshot: " + (snapshotGeneration.map { "generation \($0), \(snapshotRecords) records" } ?? "none"),
                "journal: \(journalRecords) records replayed",
            ]
            if let droppedTail {
                lines.append(
                    "\(cut) a torn record at the end of \(droppedTail.file): \(droppedTail.length) bytes at offset "
                        + "\(droppedTail.offset) (\(droppedTail.reason)); its write never returned"
                )
            }
            if !removedFiles.isEmpty {
                lines.append("\(remove): " + removedFiles.joined(separator: ", "))
            }
            if cutSignedBytes > 0 {
                lines.append(
                    "\(cut) \(cutSignedBytes) uncommitted bytes from the end of the signed-transaction file"
                )
            }
            if createdManifest {
                lines.append(
                    (isPlanOnly ? "would write" : "wrote") + " a manifest: the ledger was written by an earlier version"
                )
            }
            return lines.joined(separator: "\n")
        }
    }
}
