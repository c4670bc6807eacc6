#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPConformance
import IAPCore
import IAPInMemory
import Testing

private let epoch = Date(millisecondsSince1970: 1_767_225_600_000)

private func entry(_ id: String, user: String = "user-1") -> LedgerEntry {
    LedgerEntry(
        transaction: TransactionPayload(transactionId: id, productId: "coins"),
        transactionId: id,
        originalTransactionId: id,
        userId: user,
        productId: "coins",
        recordedAt: epoch
    )
}

private func inserted(_ outcome: InsertOutcome) -> LedgerEntry? {
    if case .inserted(let entry) = outcome {
        return entry
    }
    return nil
}

@Test func inMemoryStorePassesTheConformanceSuite() async {
    let report = await EntitlementStoreConformance { InMemoryEntitlementStore() }.run()
    #expect(report.failures.isEmpty, "\(report)")
    #expect(report.passed == EntitlementStoreConformance.checkNames)
}

@Test func sequenceStartsAtOneAndRevisionCountsReplaces() async throws {
    let store = InMemoryEntitlementStore()
    let first = try #require(inserted(try await store.insert(entry("t-1"))))
    let second = try #require(inserted(try await store.insert(entry("t-2"))))
    #expect(first.sequence == 1)
    #expect(second.sequence == 2)
    #expect(first.revision == 1)

    var changed = first
    changed.deliveryState = .delivered
    #expect(try await store.replace(changed, ifRevision: 1))
    changed.lastError = "again"
    #expect(try await store.replace(changed, ifRevision: 2))
    #expect(await store.entry(transactionId: "t-1")?.revision == 3)
    #expect(await store.entry(transactionId: "t-1")?.lastError == "again")
}

@Test func historyCursorIsTheLastSequenceWithAVersionTag() async throws {
    let store = InMemoryEntitlementStore()
    for index in 1...5 {
        _ = try await store.insert(entry("t-\(index)"))
    }
    let first = try await store.history(userId: "user-1", cursor: nil, limit: 2)
    #expect(first.entries.map(\.transactionId) == ["t-5", "t-4"])
    #expect(first.nextCursor == "v1:4")

    // The documented format can be written by hand: entries older than sequence 3.
    let handWritten = try await store.history(userId: "user-1", cursor: "v1:3", limit: 10)
    #expect(handWritten.entries.map(\.transactionId) == ["t-2", "t-1"])
    #expect(handWritten.nextCursor == nil)

    let last = try await store.history(userId: "user-1", cursor: "v1:2", limit: 1)
    #expect(last.entries.map(\.transactionId) == ["t-1"])
    #expect(last.nextCursor == nil, "no older entry exists, so there is no next page")
}

@Test(arguments: ["", "4", "v1:", "v1:abc", "v1:0", "v1:-3", "v1:+3", "v1:03", "v1:3 ", "v2:3", "V1:3", "v1:\u{0663}"])
func malformedCursorsAreInvalidArguments(cursor: String) async throws {
    let store = InMemoryEntitlementStore()
    _ = try await store.insert(entry("t-1"))
    await #expect(throws: IAPError(.invalidArgument)) {
        try await store.history(userId: "user-1", cursor: cursor, limit: 10)
    }
}

@Test func bindingsAreStoredInLowerCase() async throws {
    let store = InMemoryEntitlementStore()
    #expect(try await store.bind(appAccountToken: "ABCDEF00-1111-4222-8333-444455556666", to: "user-1") == .bound)
    #expect(await store.user(forAppAccountToken: "abcdef00-1111-4222-8333-444455556666") == "user-1")
    #expect(
        try await store.bind(appAccountToken: "abcdef00-1111-4222-8333-444455556666", to: "user-2")
            == .conflict(existingUserId: "user-1")
    )
}

@Test func replaceThatChangesImmutableFieldsIsRejected() async throws {
    let store = InMemoryEntitlementStore()
    let stored = try #require(inserted(try await store.insert(entry("t-1"))))
    var moved = stored
    moved.recordedAt = epoch.addingTimeInterval(1)
    await #expect(throws: IAPError(.invalidArgument)) {
        try await store.replace(moved, ifRevision: 1)
    }
    #expect(await store.entry(transactionId: "t-1") == stored)
    // An unknown id is a plain `false`, not an error.
    #expect(try await store.replace(entry("t-unknown"), ifRevision: 1) == false)
}

@Test func dueDeliveriesMoveWithTheManualClock() async throws {
    let clock = ManualClock(now: epoch)
    let store = InMemoryEntitlementStore()
    let stored = try #require(inserted(try await store.insert(entry("t-1"))))
    var retrying = stored
    retrying.deliveryState = .retrying
    retrying.nextAttemptAt = clock.now.addingTimeInterval(60)
    #expect(try await store.replace(retrying, ifRevision: stored.revision))

    #expect(try await store.dueDeliveries(at: clock.now, limit: 10).isEmpty)
    clock.advance(by: .seconds(59))
    #expect(try await store.dueDeliveries(at: clock.now, limit: 10).isEmpty)
    clock.advance(by: .seconds(1))
    #expect(try await store.dueDeliveries(at: clock.now, limit: 10).map(\.transactionId) == ["t-1"])
}

@Test func statisticsFollowUsersAcrossReplaces() async throws {
    let store = InMemoryEntitlementStore()
    let first = try #require(inserted(try await store.insert(entry("t-1", user: "user-1"))))
    _ = try await store.insert(entry("t-2", user: "user-2"))
    #expect(await store.statistics().users == 2)
    var moved = first
    moved.userId = "user-2"
    #expect(try await store.replace(moved, ifRevision: first.revision))
    let statistics = await store.statistics()
    #expect(statistics.users == 1)
    #expect(statistics.transactions == 2)
    let history = try await store.history(userId: "user-2", cursor: nil, limit: 10)
    #expect(history.entries.map(\.transactionId) == ["t-2", "t-1"])
}
