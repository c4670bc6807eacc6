import IAPCore

/// The invariants `iap ledger check` verifies beyond the store's own checksums.
enum LedgerInvariants {
    /// Every broken invariant, in words; empty when the ledger is sound.
    static func check(_ store: some ListableEntitlementStore) async throws -> [String] {
        let entries = try await store.allEntries()
        var problems: [String] = []
        var byId: [String: LedgerEntry] = [:]
        var sequences: Set<Int64> = []
        for entry in entries {
            if byId.updateValue(entry, forKey: entry.transactionId) != nil {
                problems.append("transaction \(entry.transactionId) is recorded twice")
            }
            if !sequences.insert(entry.sequence).inserted || entry.sequence < 1 {
                problems.append(
                    "transaction \(entry.transactionId) has a duplicate or invalid sequence \(entry.sequence)"
                )
            }
            if entry.revision < 1 {
                problems.append("transaction \(entry.transactionId) has an invalid revision \(entry.revision)")
            }
            if entry.transaction.transactionId != entry.transactionId {
                problems.append("transaction \(entry.transactionId) holds the payload of another transaction")
            }
            if entry.deliveryState == .delivered, entry.deliveredAt == nil, entry.revokedAt == nil {
                problems.append("transaction \(entry.transactionId) is marked delivered but was never granted")
            }
            if entry.deliveryState == .delivered, entry.revokedAt != nil, entry.deliveredAt != nil,
                !entry.revocationDelivered
            {
                problems.append("transaction \(entry.transactionId) is revoked and settled, but was never taken back")
            }
            if entry.deliveryState == .retrying, entry.nextAttemptAt == nil {
                problems.append("transaction \(entry.transactionId) waits for a retry that has no time")
            }
        }

        // The indexes must find every entry exactly once.
        for (user, own) in Dictionary(grouping: entries, by: \.userId) {
            let listed = try await store.allHistory(userId: user)
            if listed.map(\.transactionId).sorted() != own.map(\.transactionId).sorted() {
                problems.append(
                    "the history of user \(user) lists \(listed.count) entries, the ledger holds \(own.count)"
                )
            }
            if listed.map(\.sequence) != listed.map(\.sequence).sorted(by: >) {
                problems.append("the history of user \(user) is not newest first")
            }
        }
        for (original, family) in Dictionary(grouping: entries, by: \.originalTransactionId) {
            let listed = try await store.entries(originalTransactionId: original)
            if Set(listed.map(\.transactionId)) != Set(family.map(\.transactionId)) {
                problems.append(
                    "original transaction \(original) lists \(listed.count) entries, the ledger holds \(family.count)"
                )
            }
        }

        let statistics = try await store.statistics()
        let expected = LedgerStatistics(
            transactions: entries.count,
            delivered: entries.filter { $0.deliveryState == .delivered }.count,
            pendingRetries: entries.filter { $0.deliveryState == .retrying }.count,
            deadLetters: entries.filter { $0.deliveryState == .deadLettered }.count,
            revoked: entries.filter { $0.revokedAt != nil }.count,
            // Users are the real owners (LedgerEntry.owner), as the stores count them.
            users: Set(entries.compactMap(\.owner)).count,
            environments: entries.reduce(into: [:]) { counts, entry in
                if let environment = entry.environment {
                    counts[environment.rawValue, default: 0] += 1
                }
            },
            unknownProduct: entries.filter { $0.deliveryState == .unknownProduct }.count
        )
        if statistics != expected {
            problems.append("the statistics say \(statistics) but the entries count \(expected)")
        }
        return problems
    }
}
