/// What checking a support audit log found: how many entries it holds, where its chain ends, and every break.
public struct SupportAuditVerification: Sendable, Hashable {
    /// One break in the chain, with its place.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// The entry number the problem is about (1 for the first), or `nil` for the log as a whole.
        public var entry: Int?
        /// Where it is stored: `line 7` of a file, `row 7` of a table, `entry 7` in memory; empty for the log as a
        /// whole.
        public var location: String
        /// What is wrong.
        public var message: String

        /// Creates a problem.
        public init(entry: Int?, location: String, message: String) {
            self.entry = entry
            self.location = location
            self.message = message
        }

        /// `entry 3 (line 3): message`, or the message alone for the log as a whole.
        public var description: String {
            switch (entry, location.isEmpty) {
            case (let entry?, false): "entry \(entry) (\(location)): \(message)"
            case (let entry?, true): "entry \(entry): \(message)"
            case (nil, false): "\(location): \(message)"
            case (nil, true): message
            }
        }
    }

    /// The number of entries read.
    public var entryCount: Int
    /// The head of what was read: its entry count and the hash of its last entry (the anchor when empty).
    public var head: SupportAuditHead
    /// The head the log recorded, if it has one.
    public var recordedHead: SupportAuditHead?
    /// Every break found, in the order of the log; empty when the log is intact.
    public var problems: [Problem]
    /// What is worth knowing but breaks nothing (an append that never finished, a head a step behind).
    public var notes: [String]

    /// Creates a result.
    public init(
        entryCount: Int,
        head: SupportAuditHead,
        recordedHead: SupportAuditHead?,
        problems: [Problem],
        notes: [String] = []
    ) {
        self.entryCount = entryCount
        self.head = head
        self.recordedHead = recordedHead
        self.problems = problems
        self.notes = notes
    }

    /// Whether the chain holds from the ledger's anchor to the recorded head, with nothing edited, removed, added or
    /// moved.
    public var isIntact: Bool { problems.isEmpty }
}
