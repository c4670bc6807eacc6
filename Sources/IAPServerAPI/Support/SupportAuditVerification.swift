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
    /// The head the ledger keeps (``SupportAuditHeadKeeper``), once checked against it
    /// (``checked(againstLedgerHead:)``); `nil` when the ledger keeps none or it was not asked.
    public var ledgerHead: SupportAuditHead?
    /// The anchor and the hash of each entry read, in order: what the ledger's head is compared with.
    var anchor = ""
    var entryHashes: [String] = []

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

    /// This result checked against the head the ledger keeps, too.
    ///
    /// The log must reach the ledger's head: hold at least as many entries, and at that entry the very hash the
    /// ledger recorded. A log short of it (its last entries, or the whole log, deleted along with the head beside
    /// it) or with another entry there is a problem. A log longer than the ledger's head, whose entry at the head
    /// is the recorded one, is an append that stopped between writing the entry and recording its head in the
    /// ledger (a crash): a note, and the next writer moves the ledger's head. A ledger that keeps no head (written
    /// before it kept one) is a note too.
    ///
    /// - Parameter ledgerHead: The head the ledger keeps, or `nil`.
    /// - Returns: The result with ``ledgerHead`` set and what the comparison found added.
    public func checked(againstLedgerHead ledgerHead: SupportAuditHead?) -> SupportAuditVerification {
        var result = self
        result.ledgerHead = ledgerHead
        guard let ledgerHead else {
            if entryCount > 0 {
                result.notes.append(
                    "the ledger keeps no head of this audit yet (it was written before the ledger kept one): the "
                        + "next writer records it"
                )
            }
            return result
        }
        if entryCount < ledgerHead.entries {
            result.problems.append(
                .init(
                    entry: nil,
                    location: "",
                    message: "the ledger records \(ledgerHead.entries) entries with head \(ledgerHead.lastHash), the "
                        + "log holds \(entryCount): "
                        + (entryCount == 0
                            ? "the log (and its head) was deleted or emptied" : "its last entries were removed")
                )
            )
            return result
        }
        guard ledgerHead.entries >= 0, ledgerHead.entries <= entryHashes.count else {
            // A count the log cannot hold (negative, or a verification made without the entries' hashes).
            result.problems.append(
                .init(
                    entry: nil,
                    location: "",
                    message: "the ledger records \(ledgerHead.entries) entries with head \(ledgerHead.lastHash), which "
                        + "this log's \(entryHashes.count) known entries cannot be compared with"
                )
            )
            return result
        }
        let hash = ledgerHead.entries == 0 ? anchor : entryHashes[ledgerHead.entries - 1]
        if hash != ledgerHead.lastHash {
            result.problems.append(
                .init(
                    entry: ledgerHead.entries == 0 ? nil : ledgerHead.entries,
                    location: "",
                    message: "is not the entry the ledger recorded (head \(ledgerHead.lastHash)): it was edited or "
                        + "replaced"
                )
            )
        } else if entryCount > ledgerHead.entries {
            result.notes.append(
                "the ledger records \(ledgerHead.entries) entries and the log holds \(entryCount): an append stopped "
                    + "before the ledger recorded its head (the next writer records it)"
            )
        }
        return result
    }
}
