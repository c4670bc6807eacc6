#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The deliveries under way in a ledger at one instant: the entries a deliverer has claimed (``DeliveryState/pending``
/// with the claim's expiry in ``LedgerEntry/nextAttemptAt``), by whether the claim still holds.
///
/// A claim that has expired belongs to a deliverer that stopped (a crash, a `kill -9`) between its claim and the
/// outcome: the entry is neither delivered nor waiting for a retry, and the next drain of due deliveries
/// (``DeliveryPipeline/drainDueRetries(limit:)``, which `iap serve` runs on its own, `iap ledger ingest` runs before
/// it reads and `iap ledger drain` runs on demand) claims it again and delivers it. `iap ledger stats` and
/// `iap ledger check` show both counts.
public struct ClaimCounts: Codable, Sendable, Hashable {
    /// Entries being delivered: claimed, the claim not expired.
    public var claimed: Int
    /// Entries whose claim has expired: their deliverer stopped before recording the outcome.
    public var staleClaims: Int
    /// When the earliest stale claim expired, or `nil` when there is none.
    public var oldestStaleSince: Date?
    /// When the last claim that still holds expires, or `nil` when none holds: from then on, a drain takes every
    /// entry claimed now that is still undelivered.
    public var claimsHoldUntil: Date?

    /// Creates counts.
    ///
    /// - Parameters:
    ///   - claimed: Entries being delivered.
    ///   - staleClaims: Entries whose claim has expired.
    ///   - oldestStaleSince: When the earliest stale claim expired.
    ///   - claimsHoldUntil: When the last claim that still holds expires.
    public init(claimed: Int = 0, staleClaims: Int = 0, oldestStaleSince: Date? = nil, claimsHoldUntil: Date? = nil) {
        self.claimed = claimed
        self.staleClaims = staleClaims
        self.oldestStaleSince = oldestStaleSince
        self.claimsHoldUntil = claimsHoldUntil
    }

    /// Counts one entry, if it is claimed, as of `instant`.
    ///
    /// - Parameters:
    ///   - entry: An entry of the ledger.
    ///   - instant: The instant the claims are judged at.
    public mutating func count(_ entry: borrowing LedgerEntry, at instant: Date) {
        guard entry.deliveryState == .pending, let expiry = entry.nextAttemptAt else {
            return
        }
        if expiry > instant {
            claimed += 1
            claimsHoldUntil = max(claimsHoldUntil ?? expiry, expiry)
        } else {
            staleClaims += 1
            oldestStaleSince = min(oldestStaleSince ?? expiry, expiry)
        }
    }
}
