import Foundation
import IAPCore
import Testing

/// The ledger state holds entries packed; packing must give back every entry exactly, byte for byte, whatever its
/// fields hold.
@Suite("Packed ledger entries")
struct PackedEntryTests {
    /// An entry with every field drawn by the payload generator, and ledger fields of every kind.
    static func entry(_ generator: AppStoreJSONWriterTests.Generator, id: String) -> LedgerEntry {
        var entry = LedgerEntry(
            transaction: generator.transaction(),
            transactionId: id,
            originalTransactionId: generator.pick([id, generator.text(), "2000000000000001"]),
            userId: generator.pick(["alice", "e\u{301}", "\u{E9}", "unowned:" + id, generator.text()]),
            productId: generator.text(),
            orderId: generator.maybe(generator.text()),
            recordedAt: generator.date()
        )
        entry.deliveryState = generator.pick(DeliveryState.allCases)
        entry.deliveryAttempts = generator.pick([0, 1, 7, Int.max, Int.min, Int(Int32.max) + 1])
        entry.nextAttemptAt = generator.maybe(generator.date())
        entry.lastError = generator.maybe(generator.text())
        entry.deliveredAt = generator.maybe(generator.date())
        entry.revokedAt = generator.maybe(generator.date())
        entry.revocationDelivered = generator.bool()
        entry.grantGeneration = generator.pick([0, 2, Int.max])
        entry.grantAttempted = generator.bool()
        entry.grantedUnits = generator.maybe(generator.int64())
        entry.refundAccessKept = generator.maybe(generator.bool())
        entry.givenUpAt = generator.maybe(generator.date())
        entry.consentRescindedAt = generator.maybe(generator.date())
        entry.revision = generator.int64()
        return entry
    }

    /// Equal as values, and equal in the bytes of every string `==` compares by canonical equivalence.
    static func expectIdentical(_ found: LedgerEntry?, _ expected: LedgerEntry) {
        #expect(found == expected)
        guard let found else {
            return
        }
        for (left, right) in [
            (found.transactionId, expected.transactionId), (found.userId, expected.userId),
            (found.productId, expected.productId), (found.originalTransactionId, expected.originalTransactionId),
            (found.transaction.transactionId ?? "-", expected.transaction.transactionId ?? "-"),
            (found.transaction.bundleId ?? "-", expected.transaction.bundleId ?? "-"),
            (found.transaction.storefront ?? "-", expected.transaction.storefront ?? "-"),
        ] {
            #expect(Array(left.utf8) == Array(right.utf8))
        }
    }

    @Test func everyFieldComesBackAsItWasRecorded() {
        for mode in [AppStoreJSONWriterTests.Generator.Mode.mixed, .everyField] {
            let generator = AppStoreJSONWriterTests.Generator(seed: 7)
            generator.mode = mode
            var state = LedgerState()
            var recorded: [LedgerEntry] = []
            for index in 0..<400 {
                var entry = Self.entry(
                    generator,
                    id: index % 2 == 0 ? String(2_000_000_000_000_001 + index) : "t\(index)"
                )
                entry.sequence = state.lastSequence + 1
                #expect(state.insert(entry) != nil)
                recorded.append(entry)
            }
            for entry in recorded {
                Self.expectIdentical(state.entry(transactionId: entry.transactionId), entry)
                Self.expectIdentical(state.entries[Int(entry.sequence - 1)], entry)
            }
            #expect(Array(state.entries) == recorded)
        }
    }

    @Test func transactionIdsKeepTheirBytes() {
        let ids = [
            "0", "00", "007", "1", "-1", "+1", " 1", "1 ", "1e5", "", "9223372036854775805", "9223372036854775806",
            "9223372036854775807", "18446744073709551615", "99999999999999999999", "\u{E9}", "e\u{301}", "٣",
        ]
        var state = LedgerState()
        for id in ids {
            var entry = LedgerEntry(
                transaction: TransactionPayload(transactionId: id),
                transactionId: id,
                originalTransactionId: id,
                userId: "alice",
                productId: "coins.100",
                recordedAt: Date(timeIntervalSince1970: 0)
            )
            entry.sequence = state.lastSequence + 1
            #expect(state.insert(entry) != nil, "\(id)")
        }
        // Ids whose bytes differ are different transactions, even where `==` calls them equal.
        #expect(state.lastSequence == Int64(ids.count))
        for id in ids {
            let found = state.entry(transactionId: id)
            #expect(found.map { Array($0.transactionId.utf8) } == Array(id.utf8), "\(id)")
            #expect(
                state.entries(originalTransactionId: id).map(\.transactionId).map { Array($0.utf8) } == [Array(id.utf8)]
            )
        }
        #expect(state.entry(transactionId: "2") == nil)
        #expect(state.entry(transactionId: "unknown") == nil)
    }

    @Test func replacingAndUndoingKeepTheIndexes() throws {
        let generator = AppStoreJSONWriterTests.Generator(seed: 11)
        var state = LedgerState()
        var entry = Self.entry(generator, id: "2000000000000001")
        entry.userId = "alice"
        entry.deliveryState = .pending
        entry.sequence = 1
        #expect(state.insert(entry) != nil)
        var moved = entry
        moved.userId = "bob"
        moved.originalTransactionId = "orig-2"
        moved.transaction.appTransactionId = "704289572311181848"
        moved.deliveryState = .delivered
        let replaced = state.replace(with: moved)
        let undo = try #require(replaced)
        #expect(state.history(userId: "alice", before: nil, limit: 10).entries.isEmpty)
        #expect(state.history(userId: "bob", before: nil, limit: 10).entries == [moved])
        #expect(state.entries(originalTransactionId: "orig-2") == [moved])
        #expect(state.entries(appTransactionId: "704289572311181848") == [moved])
        #expect(state.statistics.delivered == 1)
        state.undo(undo)
        #expect(state.history(userId: "alice", before: nil, limit: 10).entries == [entry])
        #expect(state.history(userId: "bob", before: nil, limit: 10).entries.isEmpty)
        #expect(state.entries(originalTransactionId: "orig-2").isEmpty)
        #expect(state.entries(appTransactionId: "704289572311181848").isEmpty)
        #expect(state.statistics.delivered == 0)
        state.undo(.insert)
        #expect(state.lastSequence == 0)
        #expect(state.entry(transactionId: "2000000000000001") == nil)
        #expect(state.statistics.transactions == 0)
        #expect(state.statistics.users == 0)
    }
}
