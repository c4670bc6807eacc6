import Foundation
import IAPCore
import IAPInMemory
import IAPStorageFile
import IAPTestSupport
import Testing

/// The whole ledger a page at a time (`entries(afterSequence:limit:)`, `forEachPage`), as exports and checks walk it,
/// on the file store (after a reopen and a compaction too) and the in-memory store.
@Suite("Ledger pages")
struct LedgerPagesTests {
    static func walk(_ store: some ListableEntitlementStore, size: Int) async throws -> [[String]] {
        var pages: [[String]] = []
        try await store.forEachPage(size: size) { page in
            pages.append(page.map(\.transactionId))
        }
        return pages
    }

    static func check(_ store: some ListableEntitlementStore, ids: [String]) async throws {
        let pages = try await walk(store, size: 10)
        #expect(pages.map(\.count) == [10, 10, 5])
        #expect(pages.flatMap { $0 } == ids)
        #expect(try await walk(store, size: 25).map(\.count) == [25])
        #expect(try await walk(store, size: 10_000).flatMap { $0 } == ids)
        let tail = try await store.entries(afterSequence: 20, limit: 100)
        #expect(tail.map(\.sequence) == [21, 22, 23, 24, 25])
        #expect(try await store.entries(afterSequence: 25, limit: 10).isEmpty)
        #expect(try await store.entries(afterSequence: 1_000, limit: 10).isEmpty)
        for limit in [0, -1, 10_001] {
            let error = await #expect(throws: IAPError.self) {
                try await store.entries(afterSequence: 0, limit: limit)
            }
            #expect(error?.code == .invalidArgument)
        }
    }

    @Test func theFileStoreWalksItsEntriesInOrder() async throws {
        try await withTemporaryDirectory { directory in
            let ids = (1...25).map { "t-\($0)" }
            var store = try FileEntitlementStore(directory: directory.url)
            for (index, id) in ids.enumerated() {
                try await Fixture.insert(Fixture.entry(id, user: "user-\(index % 4)"), into: store)
            }
            try await Self.check(store, ids: ids)
            try await store.compact()
            await store.close()
            store = try FileEntitlementStore(directory: directory.url)
            try await Self.check(store, ids: ids)
            await store.close()
            await #expect(throws: IAPError.self) {
                try await store.entries(afterSequence: 0, limit: 10)
            }
        }
    }

    @Test func theInMemoryStoreWalksItsEntriesInOrder() async throws {
        let store = InMemoryEntitlementStore()
        let ids = (1...25).map { "t-\($0)" }
        for (index, id) in ids.enumerated() {
            try await Fixture.insert(Fixture.entry(id, user: "user-\(index % 4)"), into: store)
        }
        try await Self.check(store, ids: ids)
    }
}
