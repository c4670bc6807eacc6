#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// Everything a store shows through its public reads about a known set of keys.
///
/// Taken before and after a call that must change nothing, two snapshots compare equal exactly when no
/// read can tell the difference.
struct StoreSnapshot: Equatable {
    /// The keys a snapshot reads.
    struct Keys {
        var transactionIds: [String]
        var userIds: [String]
        var originalTransactionIds: [String]
        var appAccountTokens: [String]
        var notificationUUIDs: [String]
    }

    var entries: [String: LedgerEntry?] = [:]
    var histories: [String: [LedgerEntry]] = [:]
    var families: [String: [LedgerEntry]] = [:]
    var dueDeliveries: [LedgerEntry] = []
    var bindings: [String: String?] = [:]
    var renewalInfos: [String: RenewalInfoPayload?] = [:]
    var notifications: [String: Bool] = [:]
    var statistics: LedgerStatistics?

    /// Reads a snapshot of `store` through its public API.
    static func take(of store: any EntitlementStore, keys: Keys) async throws -> StoreSnapshot {
        var snapshot = StoreSnapshot()
        for id in keys.transactionIds {
            snapshot.entries[id] = try await store.entry(transactionId: id)
        }
        for user in keys.userIds {
            var all: [LedgerEntry] = []
            var cursor: String?
            repeat {
                let page = try await store.history(userId: user, cursor: cursor, limit: 50)
                all += page.entries
                cursor = page.nextCursor
            } while cursor != nil && all.count < 10_000
            snapshot.histories[user] = all
        }
        for original in keys.originalTransactionIds {
            snapshot.families[original] = try await store.entries(originalTransactionId: original)
            snapshot.renewalInfos[original] = try await store.renewalInfo(originalTransactionId: original)
        }
        snapshot.dueDeliveries = try await store.dueDeliveries(
            at: ConformanceFixtures.date(10 * 365 * 86_400),
            limit: 10_000
        )
        for token in keys.appAccountTokens {
            snapshot.bindings[token] = try await store.user(forAppAccountToken: token)
        }
        for uuid in keys.notificationUUIDs {
            snapshot.notifications[uuid] = try await store.isNotificationProcessed(uuid)
        }
        snapshot.statistics = try await store.statistics()
        return snapshot
    }

    /// What differs between this snapshot (before) and `after`, one line per read.
    func changes(to after: StoreSnapshot) -> [String] {
        var found: [String] = []
        for (id, entry) in entries.sorted(by: { $0.key < $1.key }) where after.entries[id] != entry {
            let now = after.entries[id] ?? nil
            found.append(
                "entry(transactionId: \"\(id)\") was \(ConformanceFixtures.describe(entry)), is now "
                    + ConformanceFixtures.describe(now)
                    + (entry.flatMap { before in
                        now.map {
                            "; " + ConformanceFixtures.differences(expected: before, actual: $0).joined(separator: "; ")
                        }
                    } ?? "")
            )
        }
        for (user, history) in histories.sorted(by: { $0.key < $1.key }) where after.histories[user] != history {
            found.append(
                "history of \"\(user)\" was \(ConformanceFixtures.ids(history)), is now "
                    + ConformanceFixtures.ids(after.histories[user] ?? [])
            )
        }
        for (original, family) in families.sorted(by: { $0.key < $1.key }) where after.families[original] != family {
            found.append(
                "entries(originalTransactionId: \"\(original)\") was \(ConformanceFixtures.ids(family)), is now "
                    + ConformanceFixtures.ids(after.families[original] ?? [])
            )
        }
        if dueDeliveries != after.dueDeliveries {
            found.append(
                "dueDeliveries was \(ConformanceFixtures.ids(dueDeliveries)), is now "
                    + ConformanceFixtures.ids(after.dueDeliveries)
            )
        }
        for (token, user) in bindings.sorted(by: { $0.key < $1.key }) where after.bindings[token] != user {
            found.append(
                "user(forAppAccountToken: \"\(token)\") was \(user.flatMap { $0 } ?? "nil"), is now "
                    + "\((after.bindings[token] ?? nil) ?? "nil")"
            )
        }
        for (original, info) in renewalInfos.sorted(by: { $0.key < $1.key }) where after.renewalInfos[original] != info
        {
            found.append("renewalInfo(originalTransactionId: \"\(original)\") changed")
        }
        for (uuid, processed) in notifications.sorted(by: { $0.key < $1.key })
        where after.notifications[uuid] != processed {
            found.append("isNotificationProcessed(\"\(uuid)\") was \(processed), is now \(!processed)")
        }
        if statistics != after.statistics {
            found.append(
                "statistics were \(statistics.map { "\($0)" } ?? "nil"), are now "
                    + "\(after.statistics.map { "\($0)" } ?? "nil")"
            )
        }
        return found
    }
}
