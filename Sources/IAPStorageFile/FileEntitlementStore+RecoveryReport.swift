extension FileEntitlementStore {
    /// What opening a store found and repaired.
    public struct RecoveryReport: Sendable, Hashable, CustomStringConvertible {
        /// A torn record at the end of the journal, left by a crash in the middle of a write, and cut away.
        public struct DroppedTail: Sendable, Hashable {
            /// The journal's file name.
            public var file: String
            /// The byte offset where the torn record started; the journal now ends there.
            public var offset: Int
            /// How many bytes were cut.
            public var length: Int
            /// Why the record was unreadable (no newline, bad checksum, ...).
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

        /// One line per finding.
        public var description: String {
            var lines = [
                "snapshot: " + (snapshotGeneration.map { "generation \($0), \(snapshotRecords) records" } ?? "none"),
                "journal: \(journalRecords) records replayed",
            ]
            if let droppedTail {
                lines.append(
                    "dropped a torn record at the end of \(droppedTail.file): \(droppedTail.length) bytes at offset "
                        + "\(droppedTail.offset) (\(droppedTail.reason))"
                )
            }
            if !removedFiles.isEmpty {
                lines.append("removed leftovers: " + removedFiles.joined(separator: ", "))
            }
            return lines.joined(separator: "\n")
        }
    }
}
