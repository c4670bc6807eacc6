extension FileEntitlementStore {
    /// One thing ``FileEntitlementStore/inspect(directory:)`` or ``FileEntitlementStore/repair(directory:options:)``
    /// found in a store directory.
    public struct Finding: Sendable, Hashable, CustomStringConvertible {
        /// How much it matters.
        public enum Severity: String, Sendable, Hashable {
            /// Something recorded is damaged or missing, or does not verify: opening refuses the store (or, for a
            /// broken invariant or signed transaction, the store opens but is wrong).
            case damage
            /// Nothing recorded is lost: what an open cleans up by itself (a torn write whose call never returned,
            /// the leftovers of an interrupted compaction), or a ledger of an earlier version.
            case note
        }

        /// How much it matters.
        public var severity: Severity
        /// The file it is in, if one.
        public var file: String?
        /// The 1-based line, if one.
        public var line: Int?
        /// The byte offset, if one.
        public var offset: Int?
        /// What is wrong, and what an open (or a repair) does about it.
        public var message: String
        /// The transaction it concerns, when known.
        public var transactionId: String?

        /// Creates a finding.
        public init(
            severity: Severity,
            file: String? = nil,
            line: Int? = nil,
            offset: Int? = nil,
            message: String,
            transactionId: String? = nil
        ) {
            self.severity = severity
            self.file = file
            self.line = line
            self.offset = offset
            self.message = message
            self.transactionId = transactionId
        }

        /// `journal-1.jsonl line 12 (byte 3456): bad checksum …`.
        public var description: String {
            var place = file ?? ""
            if let line {
                place += " line \(line)"
            }
            if let offset {
                place += line == nil ? " byte \(offset)" : " (byte \(offset))"
            }
            return place.isEmpty ? message : place + ": " + message
        }
    }
}
