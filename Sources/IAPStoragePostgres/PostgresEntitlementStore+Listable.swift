#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

extension PostgresEntitlementStore: ListableEntitlementStore {
    /// The first sequence recorded with its signed transaction: ``signedTransactionsFromSequence()``.
    public func firstSignedSequence() async throws -> Int64 {
        try await signedTransactionsFromSequence()
    }

    /// The claimed rows at `instant`: one scan of the partial index of undelivered rows (`iap_ledger_entries_due`).
    public func claims(at instant: Date) async throws -> ClaimCounts {
        try await pool.run(retryingOnLostConnection: true) { connection in
            let result = try connection.execute(.claims, [String(instant.millisecondsSince1970)])
            guard result.count == 1 else {
                throw IAPError(.storageFailure, "the claims query returned \(result.count) rows")
            }
            let oldest = result.string(0, 2).flatMap(Int64.init).map { Date(millisecondsSince1970: $0) }
            let holdUntil = result.string(0, 3).flatMap(Int64.init).map { Date(millisecondsSince1970: $0) }
            return ClaimCounts(
                claimed: try Int(result.int64(0, 0)),
                staleClaims: try Int(result.int64(0, 1)),
                oldestStaleSince: oldest,
                claimsHoldUntil: holdUntil
            )
        }
    }

    /// The rows whose lookup columns (`transaction_id`, `original_transaction_id`, `user_id`, `delivery_state`)
    /// disagree with the entry they hold, the first 100 by sequence: each lookup is an index on one of these columns,
    /// and the table's constraints keep transaction ids and sequences unique. One scan of the table, in the server;
    /// nothing of it is held here.
    public func indexProblems() async throws -> [String] {
        try await pool.run(retryingOnLostConnection: true) { connection in
            let result = try connection.execute(.lookupMismatches)
            return (0..<result.count).map { row in
                let id = result.string(row, 0) ?? ""
                let column = result.string(row, 1) ?? ""
                return "transaction \(id): its \(column) column disagrees with the entry it holds"
            }
        }
    }
}
