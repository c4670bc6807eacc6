// The reader's own backends that Extending.md tests: a ledger in Redis and a catalog from a configuration
// service. Their bodies are the reader's; what is checked is that they are what the protocols require, and the
// examples' use of the conformance suites.
import Foundation
import IAPCore

actor RedisEntitlementStore: EntitlementStore {
    init(url: URL) async throws { assumed() as Void }
    func insert(_ entry: LedgerEntry, signedTransaction: String?) async throws -> InsertOutcome { assumed() }
    func entry(transactionId: String) async throws -> LedgerEntry? { assumed() }
    func replace(_ entry: LedgerEntry, ifRevision revision: Int64) async throws -> Bool { assumed() }
    func replace(_ entry: LedgerEntry, ifRevision revision: Int64, signedTransaction: String?) async throws -> Bool {
        assumed()
    }
    func signedTransaction(transactionId: String) async throws -> String? { assumed() }
    func entries(originalTransactionId: String) async throws -> [LedgerEntry] { assumed() }
    func history(userId: String, cursor: String?, limit: Int) async throws -> LedgerPage { assumed() }
    func dueDeliveries(at instant: Date, limit: Int) async throws -> [LedgerEntry] { assumed() }
    func parkedEntries(limit: Int) async throws -> [LedgerEntry] { assumed() }
    func bind(appAccountToken: String, to userId: String) async throws -> BindingOutcome { assumed() }
    func user(forAppAccountToken appAccountToken: String) async throws -> String? { assumed() }
    func storeRenewalInfo(_ renewalInfo: RenewalInfoPayload) async throws -> Bool { assumed() }
    func renewalInfo(originalTransactionId: String) async throws -> RenewalInfoPayload? { assumed() }
    func markNotificationProcessed(_ notificationUUID: String, at instant: Date) async throws -> Bool { assumed() }
    func isNotificationProcessed(_ notificationUUID: String) async throws -> Bool { assumed() }
    func statistics() async throws -> LedgerStatistics { assumed() }
    func originalTransactionIds(cursor: String?, limit: Int) async throws -> OriginalTransactionIdPage { assumed() }
}

/// A new, empty database for each run of the suite.
func freshDatabaseURL() async throws -> URL { assumed() }

struct RemoteCatalog: ProductCatalog {
    init(url: URL) async throws { assumed() as Void }
    func product(id: String) async throws -> CatalogProduct { assumed() }
    func allProducts() async throws -> [CatalogProduct] { assumed() }
}

let stagingURL: URL = assumed()
