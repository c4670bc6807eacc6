#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPStorageFile
import IAPTestSupport

/// A fresh directory under the temporary directory, removed by ``remove()``.
struct TemporaryDirectory: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appending(
            path: "iap-filestore-tests-\(UUID().uuidString)",
            directoryHint: .isDirectory
        )
    }

    var path: String { url.path(percentEncoded: false) }

    func file(_ name: String) -> URL {
        url.appending(path: name, directoryHint: .notDirectory)
    }

    func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs `body` with a fresh directory and removes it after.
func withTemporaryDirectory(_ body: (TemporaryDirectory) async throws -> Void) async throws {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    try await body(directory)
}

/// Test entries and dates.
enum Fixture {
    static let epochMilliseconds: Int64 = 1_767_225_600_000

    static func date(_ seconds: Int64) -> Date {
        Date(millisecondsSince1970: epochMilliseconds + seconds * 1000)
    }

    static func entry(_ transactionId: String, user: String, original: String? = nil, second: Int64 = 0) -> LedgerEntry
    {
        let family = original ?? transactionId
        let purchased = date(second)
        return LedgerEntry(
            transaction: TransactionPayload(
                originalTransactionId: family,
                transactionId: transactionId,
                bundleId: "com.example.app",
                productId: "coins.100",
                purchaseDate: purchased,
                originalPurchaseDate: purchased,
                quantity: 1,
                type: .consumable,
                appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138",
                inAppOwnershipType: .purchased,
                signedDate: purchased,
                environment: .production,
                storefront: "USA",
                currency: "USD",
                price: 990
            ),
            transactionId: transactionId,
            originalTransactionId: family,
            userId: user,
            productId: "coins.100",
            orderId: "order-\(transactionId) \"quoted\" ünïcödé\n",
            recordedAt: purchased
        )
    }

    static func renewalInfo(_ original: String, signedAt second: Int64) -> RenewalInfoPayload {
        RenewalInfoPayload(
            originalTransactionId: original,
            autoRenewProductId: "monthly",
            productId: "monthly",
            autoRenewStatus: .on,
            signedDate: date(second),
            environment: .production
        )
    }

    /// Inserts an entry that must be new, with its signed transaction when given.
    @discardableResult
    static func insert(
        _ entry: LedgerEntry,
        signed: String? = nil,
        into store: any EntitlementStore
    ) async throws -> LedgerEntry {
        guard case .inserted(let stored) = try await store.insert(entry, signedTransaction: signed) else {
            throw IAPError(.internalError, "\(entry.transactionId) was already stored")
        }
        return stored
    }

    /// A compact JWS of the size and shape Apple signs (a 4 KB protected header holding the certificate chain,
    /// the same for every transaction, a payload and an 86-character signature), distinct per label. Stores keep
    /// what they are given; verifying is not their job, so it is not signed.
    static func signedTransaction(_ label: String, payloadBytes: Int = 1_200) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        func segment(_ count: Int, seed: String) -> String {
            var state = seed.utf8.reduce(UInt64(1_469_598_103_934_665_603)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
            return String(
                (0..<count).map { _ in
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    return alphabet[Int(state >> 58)]
                }
            )
        }
        return "eyJhbGciOiJFUzI1NiIsIng1YyI6WyJNSUl" + segment(4_000, seed: "chain") + "."
            + segment(payloadBytes, seed: label) + "." + segment(86, seed: label + "/signature")
    }
}

/// Everything a store shows through its public reads about a set of keys, for before/after comparisons.
struct LedgerDump: Equatable, CustomStringConvertible {
    var entries: [String: LedgerEntry?] = [:]
    var histories: [String: [String]] = [:]
    var families: [String: [String]] = [:]
    var due: [String] = []
    var bindings: [String: String?] = [:]
    var renewalInfos: [String: RenewalInfoPayload?] = [:]
    var notifications: [String: Bool] = [:]
    var statistics: LedgerStatistics?

    struct Keys {
        var transactionIds: [String]
        var users: [String]
        var tokens: [String] = []
        var notifications: [String] = []
    }

    static func take(of store: any EntitlementStore, keys: Keys) async throws -> LedgerDump {
        var dump = LedgerDump()
        for id in keys.transactionIds {
            dump.entries[id] = try await store.entry(transactionId: id)
            dump.families[id] = try await store.entries(originalTransactionId: id).map(\.transactionId)
            dump.renewalInfos[id] = try await store.renewalInfo(originalTransactionId: id)
        }
        for user in keys.users {
            var ids: [String] = []
            var cursor: String?
            repeat {
                let page = try await store.history(userId: user, cursor: cursor, limit: 7)
                ids += page.entries.map(\.transactionId)
                cursor = page.nextCursor
            } while cursor != nil
            dump.histories[user] = ids
        }
        dump.due = try await store.dueDeliveries(at: Fixture.date(1_000_000), limit: 100_000).map(\.transactionId)
        for token in keys.tokens {
            dump.bindings[token] = try await store.user(forAppAccountToken: token)
        }
        for uuid in keys.notifications {
            dump.notifications[uuid] = try await store.isNotificationProcessed(uuid)
        }
        dump.statistics = try await store.statistics()
        return dump
    }

    var description: String {
        "\(statistics.map { "\($0)" } ?? "no statistics"), \(entries.count) entries, due \(due.count)"
    }
}
