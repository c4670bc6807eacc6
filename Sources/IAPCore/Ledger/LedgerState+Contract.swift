#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// The ``EntitlementStore`` contract's rules on top of ``LedgerState``: every check a call makes before it
/// changes anything, and what the change would be. A backend plans, makes the change durable its own way,
/// then applies it — so the in-memory and the file store answer every call the same way.
extension LedgerState {
    /// What an insert does.
    package enum InsertPlan: Sendable {
        /// The id is taken: answer with the stored entry.
        case existing(LedgerEntry)
        /// Store this entry (sequence and revision assigned).
        case insert(LedgerEntry)
    }

    /// What a replace does.
    package enum ReplacePlan: Sendable {
        /// Answer `false`: no such entry, or another revision.
        case refuse
        /// Store this entry (revision bumped).
        case replace(LedgerEntry)
    }

    /// What a bind does.
    package enum BindPlan: Sendable {
        /// Answer without a change.
        case answer(BindingOutcome)
        /// Bind this lowercased token.
        case bind(token: String)
    }

    /// Plans an insert; throws for an entry the contract refuses.
    package func planInsert(_ entry: LedgerEntry) throws -> InsertPlan {
        guard !entry.transactionId.isEmpty else {
            throw IAPError(.invalidArgument, "a ledger entry needs a transactionId")
        }
        guard !entry.userId.isEmpty else {
            throw IAPError(.invalidArgument, "ledger entry \(entry.transactionId) needs a userId")
        }
        if let existing = self.entry(transactionId: entry.transactionId) {
            return .existing(existing)
        }
        var stored = entry
        stored.sequence = lastSequence + 1
        stored.revision = 1
        return .insert(stored)
    }

    /// Plans a compare-and-set replace; throws when the entry changes what never changes.
    package func planReplace(_ entry: LedgerEntry, ifRevision revision: Int64) throws -> ReplacePlan {
        guard let current = self.entry(transactionId: entry.transactionId) else {
            return .refuse
        }
        guard entry.sequence == current.sequence else {
            throw IAPError(
                .invalidArgument,
                "ledger entry \(entry.transactionId) has sequence \(current.sequence), which never changes; "
                    + "got \(entry.sequence)"
            )
        }
        guard entry.recordedAt == current.recordedAt else {
            throw IAPError(
                .invalidArgument,
                "ledger entry \(entry.transactionId) was recorded at \(current.recordedAt), which never changes; "
                    + "got \(entry.recordedAt)"
            )
        }
        guard !entry.userId.isEmpty else {
            throw IAPError(.invalidArgument, "ledger entry \(entry.transactionId) needs a userId")
        }
        guard current.revision == revision else {
            return .refuse
        }
        var stored = entry
        stored.revision = current.revision + 1
        return .replace(stored)
    }

    /// The most bytes a signed transaction given to a store may have (Apple's are about 6 KB).
    package static let maximumSignedTransactionSize = 512 * 1024

    /// Checks a signed transaction given to a store with an entry: a compact JWS, three non-empty segments of
    /// unpadded base64url separated by dots, of at most ``maximumSignedTransactionSize`` bytes.
    ///
    /// - Throws: ``IAPError`` with code `invalidArgument` for anything else.
    package static func checkSignedTransaction(_ signedTransaction: String?, of transactionId: String) throws {
        guard var signedTransaction else { return }
        // Every line the ledger records passes here with its whole JWS (about 6 KB): one pass over the bytes, a table
        // lookup per byte.
        let isCompact = signedTransaction.withUTF8 { bytes in
            guard bytes.count <= maximumSignedTransactionSize else { return false }
            return base64URLClasses.withUnsafeBufferPointer { classes in
                var segments = 1
                var segmentLength = 0
                for byte in bytes {
                    switch classes[Int(byte)] {
                    case 1:
                        segmentLength += 1
                    case 2:
                        guard segmentLength > 0 else { return false }
                        segments += 1
                        segmentLength = 0
                    default:
                        return false
                    }
                }
                return segments == 3 && segmentLength > 0
            }
        }
        guard isCompact else {
            throw IAPError(
                .invalidArgument,
                "the signed transaction of \(transactionId) is not a compact JWS (three segments of unpadded "
                    + "base64url, at most \(maximumSignedTransactionSize) bytes)"
            )
        }
    }

    /// For each byte: 1 for a letter, a digit, `-` or `_` (base64url), 2 for `.`, 0 for anything else.
    private static let base64URLClasses: [UInt8] = (0...255).map { value in
        let byte = UInt8(value)
        let letter = byte | 0x20
        if (letter >= UInt8(ascii: "a") && letter <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_")
        {
            return 1
        }
        return byte == UInt8(ascii: ".") ? 2 : 0
    }

    /// Plans a binding (tokens compare case-insensitively).
    package func planBind(appAccountToken: String, to userId: String) throws -> BindPlan {
        guard !appAccountToken.isEmpty, !userId.isEmpty else {
            throw IAPError(
                .invalidArgument,
                "binding needs a non-empty appAccountToken and userId, got \"\(appAccountToken)\" → \"\(userId)\""
            )
        }
        let token = appAccountToken.lowercased()
        if let existing = user(forAppAccountToken: token) {
            return .answer(existing.isSameUser(as: userId) ? .alreadyBound : .conflict(existingUserId: existing))
        }
        return .bind(token: token)
    }

    /// The original transaction id to store a renewal info under, or `nil` when an equally new or newer one
    /// is stored (a missing `signedDate` is older than any).
    package func planRenewalInfo(_ renewalInfo: RenewalInfoPayload) throws -> String? {
        guard let originalTransactionId = renewalInfo.originalTransactionId, !originalTransactionId.isEmpty else {
            throw IAPError(.invalidArgument, "renewal info without an originalTransactionId cannot be stored")
        }
        if let stored = renewalInfos[originalTransactionId] {
            let storedDate = stored.signedDate ?? .distantPast
            let newDate = renewalInfo.signedDate ?? .distantPast
            guard newDate > storedDate else {
                return nil
            }
        }
        return originalTransactionId
    }

    /// Whether marking a notification is new.
    package func planNotification(_ notificationUUID: String) throws -> Bool {
        guard !notificationUUID.isEmpty else {
            throw IAPError(.invalidArgument, "a processed notification needs a notificationUUID")
        }
        return notifications[notificationUUID] == nil
    }

    /// A user's history page, with the contract's cursor (`v1:<sequence of the last entry returned>`).
    package func historyPage(userId: String, cursor: String?, limit: Int) throws -> LedgerPage {
        guard limit >= 1 else {
            throw IAPError(.invalidArgument, "a history page needs a limit of at least 1, got \(limit)")
        }
        let before = try cursor.map(Self.sequence(fromCursor:))
        let found = history(userId: userId, before: before, limit: limit)
        let nextCursor = found.more ? found.entries.last.map { Self.cursor(before: $0.sequence) } : nil
        return LedgerPage(entries: found.entries, nextCursor: nextCursor)
    }

    /// The due entries, after checking the limit.
    package func due(at instant: Date, limit: Int) throws -> [LedgerEntry] {
        guard limit >= 1 else {
            throw IAPError(.invalidArgument, "due deliveries need a limit of at least 1, got \(limit)")
        }
        return dueDeliveries(at: instant, limit: limit)
    }

    /// The parked entries, after checking the limit.
    package func parked(limit: Int) throws -> [LedgerEntry] {
        guard limit >= 1 else {
            throw IAPError(.invalidArgument, "parked entries need a limit of at least 1, got \(limit)")
        }
        return parkedEntries(limit: limit)
    }

    /// A page of distinct original transaction ids, by the sequence of each family's first entry, with the cursor
    /// `f1:<sequence of the last entry examined>`.
    package func originalTransactionIdPage(cursor: String?, limit: Int) throws -> OriginalTransactionIdPage {
        guard limit >= 1 else {
            throw IAPError(
                .invalidArgument,
                "a page of original transaction ids needs a limit of at least 1, got \(limit)"
            )
        }
        var position = 0
        if let cursor {
            let digits =
                cursor.hasPrefix(Self.familyCursorPrefix) ? cursor.dropFirst(Self.familyCursorPrefix.count) : ""
            guard let first = digits.first, first != "0", digits.count <= 18,
                digits.allSatisfy({ $0.isASCII && $0.isNumber }), let examined = Int(digits)
            else {
                throw IAPError(
                    .invalidArgument,
                    "malformed family cursor \"\(cursor)\": pass nil for the first page, then the nextCursor of the last page"
                )
            }
            position = examined
        }
        var found: [String] = []
        // A bounded scan: a page never examines more than this many entries, so a call stays short.
        let budget = max(limit, 10_000)
        var examined = 0
        while position < lastSequence, found.count < limit, examined < budget {
            if let original = familyStart(at: position) {
                found.append(original)
            }
            position += 1
            examined += 1
        }
        let next = position < lastSequence ? Self.familyCursorPrefix + String(position) : nil
        return OriginalTransactionIdPage(originalTransactionIds: found, nextCursor: next)
    }

    /// The version tag that starts every family cursor.
    private static let familyCursorPrefix = "f1:"

    /// The version tag that starts every cursor.
    package static let cursorPrefix = "v1:"

    /// The history cursor that continues below an entry's sequence.
    package static func cursor(before sequence: Int64) -> String {
        cursorPrefix + String(sequence)
    }

    /// The sequence a cursor points before; throws `invalidArgument` for a malformed cursor.
    package static func sequence(fromCursor cursor: String) throws -> Int64 {
        let malformed = IAPError(
            .invalidArgument,
            "malformed history cursor \"\(cursor)\": pass nil for the first page, then the nextCursor of the last page"
        )
        guard cursor.hasPrefix(cursorPrefix) else {
            throw malformed
        }
        let digits = cursor.dropFirst(cursorPrefix.count)
        guard let first = digits.first, first != "0",
            digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let sequence = Int64(digits)
        else {
            throw malformed
        }
        return sequence
    }

    /// Up to `limit` entries with a sequence above `sequence`, by ascending sequence (positions are `sequence - 1`).
    package func entries(afterSequence sequence: Int64, limit: Int) -> [LedgerEntry] {
        let start = Int(clamping: max(0, min(sequence, lastSequence)))
        let end = min(Int(clamping: lastSequence), start + limit)
        return (start..<end).map { entries[$0] }
    }
}
