import Foundation
import IAPCore
import IAPInMemory
import IAPStorageFile
import IAPTestSupport
import Testing

/// The deliveries under way (`claims(at:)`): claims that hold, claims whose deliverer stopped, and entries that are
/// not claimed at all, on the file store (after a reopen too) and the in-memory store; and the default, which walks
/// the ledger, agrees.
@Suite("Claim counts")
struct ClaimCountsTests {
    static let now = Fixture.date(1_000)

    /// Six entries: two claims that hold, one stale since `now - 30 s`, one stale since `now - 90 s`, a retry
    /// waiting, a delivered one, and a pending one nobody claimed.
    static func fill(_ store: any EntitlementStore) async throws {
        func entry(_ id: String, _ state: DeliveryState, next: Date?) -> LedgerEntry {
            var entry = Fixture.entry(id, user: "user-\(id)")
            entry.deliveryState = state
            entry.nextAttemptAt = next
            entry.deliveryAttempts = next == nil ? 0 : 1
            if state == .delivered {
                entry.deliveredAt = now
            }
            return entry
        }
        for made in [
            entry("c1", .pending, next: now.addingTimeInterval(60)),
            entry("c2", .pending, next: now.addingTimeInterval(1)),
            entry("s1", .pending, next: now.addingTimeInterval(-30)),
            entry("s2", .pending, next: now.addingTimeInterval(-90)),
            entry("r1", .retrying, next: now.addingTimeInterval(-10)),
            entry("d1", .delivered, next: nil),
            entry("p1", .pending, next: nil),
        ] {
            _ = try await Fixture.insert(made, into: store)
        }
    }

    static let expected = ClaimCounts(
        claimed: 2,
        staleClaims: 2,
        oldestStaleSince: now.addingTimeInterval(-90),
        claimsHoldUntil: now.addingTimeInterval(60)
    )

    /// The default implementation of `ListableEntitlementStore`, which walks the pages.
    static func walked(_ store: some ListableEntitlementStore, at instant: Date) async throws -> ClaimCounts {
        var counts = ClaimCounts()
        try await store.forEachPage(size: 2) { page in
            for entry in page {
                counts.count(entry, at: instant)
            }
        }
        return counts
    }

    @Test func theFileStoreCountsClaimsThatHoldAndClaimsWhoseDelivererStopped() async throws {
        try await withTemporaryDirectory { directory in
            var store = try FileEntitlementStore(directory: directory.url)
            try await Self.fill(store)
            #expect(try await store.claims(at: Self.now) == Self.expected)
            #expect(try await Self.walked(store, at: Self.now) == Self.expected)
            // A minute later the claim of c2 has expired too; the one of c1 holds.
            let later = try await store.claims(at: Self.now.addingTimeInterval(30))
            #expect(later.claimed == 1 && later.staleClaims == 3)
            #expect(later.claimsHoldUntil == Self.now.addingTimeInterval(60))
            await store.close()
            store = try FileEntitlementStore(directory: directory.url)
            #expect(try await store.claims(at: Self.now) == Self.expected)
            await store.close()
            await #expect(throws: IAPError.self) {
                try await store.claims(at: Self.now)
            }
        }
    }

    @Test func theInMemoryStoreCountsClaimsAsTheFileStoreDoes() async throws {
        let store = InMemoryEntitlementStore()
        try await Self.fill(store)
        #expect(try await store.claims(at: Self.now) == Self.expected)
        #expect(try await Self.walked(store, at: Self.now) == Self.expected)
        #expect(
            try await store.claims(at: Self.now.addingTimeInterval(-1_000))
                == ClaimCounts(claimed: 4, claimsHoldUntil: Self.now.addingTimeInterval(60))
        )
    }
}
