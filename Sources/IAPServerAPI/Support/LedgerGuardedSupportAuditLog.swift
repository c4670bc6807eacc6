public import IAPCore

/// A ``SupportAuditLog`` checked against the head its ledger keeps (``SupportAuditHeadKeeper``): what every writer
/// of a ledger's own audit (`iap serve`, `iap support lookup-order`) appends through.
///
/// A log and the head beside it can be deleted or cut together, and then agree with each other; the ledger's copy
/// of the head does not go with them. When it opens, the guard compares the log with the ledger's head
/// (``SupportAuditVerification/checked(againstLedgerHead:)``):
/// - the log's last entry is the ledger's head: writable;
/// - the log is longer, and its entry at the ledger's head is the recorded one (an append stopped between writing
///   the entry and recording its head, or the ledger was written before it kept one): writable, and the ledger's
///   head catches up at once, since the log's chain verifies;
/// - anything else — the log shorter than the ledger's head (its last entries, or all of it, deleted with its
///   head), another entry at the head, a log without its own head, a broken chain — is tampering: the log is
///   ``Standing/refused(_:)``, and every append throws `storageCorrupted` and writes nothing, until an operator
///   reseals the audit (`iap support audit reseal`, which appends an `audit.reseal` entry recording what was found
///   and sets the ledger's head).
///
/// Each append reads the ledger's head first, appends to the log, then records the new head in the ledger, in that
/// order: a crash in between leaves the log one entry ahead, which the next open accepts as above. An append whose
/// entry lands at or below the ledger's head (the log was cut while it was open) is refused after the fact. While
/// refused, each append checks again first, so a reseal by another process (a shared PostgreSQL ledger) lifts the
/// refusal without a restart.
///
/// Every change of standing is passed to the observer given, once at opening too: `iap serve` reports it on
/// `GET /readyz`, in `iap_support_audit_refused` and as a `support.audit` event.
public actor LedgerGuardedSupportAuditLog: SupportAuditLog {
    /// Whether support may write to the audit.
    public enum Standing: Sendable, Hashable {
        /// The log reaches the ledger's head.
        case writable
        /// The log does not match the ledger's head: why, for the operator.
        case refused(String)
    }

    /// Whether support may write to the audit now.
    public private(set) var standing: Standing
    /// What opening found that breaks nothing (a ledger's head that caught up), for the operator.
    public private(set) var notes: [String] = []
    private let log: (any SupportAuditLog)?
    private let keeper: any SupportAuditHeadKeeper
    private let observer: @Sendable (Standing) -> Void

    /// Opens the guard over an opened log: compares it with the ledger's head, and moves the ledger's head forward
    /// when the log is ahead of it and intact.
    ///
    /// - Parameters:
    ///   - log: The ledger's own audit log.
    ///   - keeper: The ledger.
    ///   - observer: Told the standing now and at every change.
    /// - Throws: ``IAPError`` when the log or the ledger cannot be read, or the ledger's head cannot be written;
    ///   never for a log that does not match (that is ``Standing/refused(_:)``).
    public init(
        log: some SupportAuditLog,
        keeper: some SupportAuditHeadKeeper,
        observer: @escaping @Sendable (Standing) -> Void = { _ in }
    ) async throws {
        self.log = log
        self.keeper = keeper
        self.observer = observer
        let (standing, notes) = try await Self.check(log, keeper)
        self.standing = standing
        self.notes = notes
        observer(standing)
    }

    /// A guard over a log that could not be opened because it does not match its own head: refused from the start.
    ///
    /// - Parameters:
    ///   - failure: Why the log could not be opened.
    ///   - keeper: The ledger.
    ///   - observer: Told the standing now.
    public init(
        unopened failure: IAPError,
        keeper: some SupportAuditHeadKeeper,
        observer: @escaping @Sendable (Standing) -> Void = { _ in }
    ) {
        self.log = nil
        self.keeper = keeper
        self.observer = observer
        let standing = Standing.refused(failure.message)
        self.standing = standing
        observer(standing)
    }

    /// Appends through the log, then records the new head in the ledger.
    ///
    /// - Throws: ``IAPError`` `storageCorrupted` while refused (nothing is written), or when the entry landed at or
    ///   below the ledger's head (the log was cut while open; it is refused from then on); as the log or the ledger
    ///   fails otherwise.
    @discardableResult
    public func append(_ entry: SupportAuditEntry) async throws -> SupportAuditEntry {
        try await checkWritable()
        guard let log else { throw refusal() }
        let before = try await keeper.supportAuditHead()
        let stored: SupportAuditEntry
        do {
            stored = try await log.append(entry)
        } catch let error as IAPError where error.code == .storageCorrupted {
            // Tampered with since the check above: refused from now on, nothing written.
            change(to: .refused(error.message))
            throw refusal()
        }
        if let before, stored.sequence <= before.entries {
            change(
                to: .refused(
                    "entry \(stored.sequence) was appended to a log that holds fewer entries than the ledger's head "
                        + "(\(before.entries) entries, head \(before.lastHash)): the log was cut while it was open"
                )
            )
            throw refusal()
        }
        try await keeper.recordSupportAuditHead(try SupportAuditChain.head(after: stored), resealing: false)
        return stored
    }

    /// The log's entries.
    ///
    /// - Throws: ``IAPError`` `storageCorrupted` when the log could not be opened.
    public func entries() async throws -> [SupportAuditEntry] {
        guard let log else { throw refusal() }
        return try await log.entries()
    }

    /// The log's chain and head, checked against the ledger's head.
    ///
    /// - Throws: ``IAPError`` `storageCorrupted` when the log could not be opened.
    public func verify() async throws -> SupportAuditVerification {
        guard let log else { throw refusal() }
        return try await log.verify().checked(againstLedgerHead: try await keeper.supportAuditHead())
    }

    /// Checks, before a support action, that the log may still be written: while writable, that the log was not
    /// tampered with since it was opened (``SupportAuditLog/checkWritable()``: a file log deleted, replaced or cut
    /// under a running server), which refuses it from then on; while refused, checks again (a reseal elsewhere may
    /// have lifted it).
    ///
    /// - Throws: ``IAPError`` `storageCorrupted` naming what does not match and how to reseal.
    public func checkWritable() async throws {
        if case .writable = standing, let log {
            do {
                try await log.checkWritable()
                return
            } catch let error as IAPError where error.code == .storageCorrupted {
                change(to: .refused(error.message))
                throw refusal()
            }
        }
        if let log {
            var (standing, notes) = try await Self.check(log, keeper)
            if case .writable = standing {
                do {
                    try await log.checkWritable()
                } catch let error as IAPError where error.code == .storageCorrupted {
                    standing = .refused(error.message)
                }
            }
            self.notes += notes
            change(to: standing)
        }
        guard case .refused = standing else { return }
        throw refusal()
    }

    /// The error of an append while refused.
    private func refusal() -> IAPError {
        let reason =
            if case .refused(let reason) = standing { reason } else { "the audit log could not be opened" }
        return IAPError(
            .storageCorrupted,
            "support actions are refused: the support audit does not match the ledger's head (\(reason)); check it "
                + "with 'iap support audit verify', keep the log as evidence, and run 'iap support audit reseal "
                + "--reason TEXT' to let support write to it again"
        )
    }

    private func change(to standing: Standing) {
        guard standing != self.standing else { return }
        self.standing = standing
        observer(standing)
    }

    /// Compares a log with the ledger's head; moves the ledger's head forward to an intact log that is ahead.
    private static func check(
        _ log: any SupportAuditLog,
        _ keeper: any SupportAuditHeadKeeper
    ) async throws -> (Standing, [String]) {
        let ledgerHead = try await keeper.supportAuditHead()
        let result = try await log.verify().checked(againstLedgerHead: ledgerHead)
        guard result.isIntact else {
            let more = result.problems.count > 1 ? " (and \(result.problems.count - 1) more)" : ""
            return (.refused((result.problems.first.map { "\($0)" } ?? "") + more), result.notes)
        }
        if result.entryCount > (ledgerHead?.entries ?? 0) {
            try await keeper.recordSupportAuditHead(result.head, resealing: false)
        }
        return (.writable, result.notes)
    }
}
