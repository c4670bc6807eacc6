import Foundation
import IAPCore
import IAPInMemory
import Testing

/// The invariants of a whole ledger and the re-verification of the signed transactions it keeps, as library API.
struct LedgerInvariantsTests {
    /// A shop whose ledger holds three delivered purchases.
    static func shopWithPurchases() async throws -> Shop {
        var shop = try Shop()
        let pipeline = shop.pipeline()
        for product in ["coins.100", "pro.lifetime", "plus.monthly"] {
            let jws = try shop.sign(shop.transaction(product))
            _ = await pipeline.submit(signedTransaction: jws, userId: "alice")
        }
        return shop
    }

    /// An entry recording a transaction for alice, as a store would be given it.
    static func entry(_ transaction: TransactionPayload) -> LedgerEntry {
        LedgerEntry(
            transaction: transaction,
            transactionId: transaction.transactionId ?? "",
            originalTransactionId: transaction.originalTransactionId ?? "",
            userId: "alice",
            productId: transaction.productId ?? "",
            recordedAt: Shop.start
        )
    }

    @Test func aLedgerTheStoreWroteHoldsEveryInvariantAndEveryKeptTransactionVerifies() async throws {
        let shop = try await Self.shopWithPurchases()
        #expect(await shop.memory.allEntries().count == 3)
        #expect(try await LedgerInvariants.check(shop.memory) == [])
        let result = try await LedgerReverification.run(shop.memory, verifier: shop.verifier)
        #expect(result.verified == 3)
        #expect(result.problems.isEmpty && result.missing.isEmpty)
    }

    @Test func anEntryMarkedDeliveredThatWasNeverGrantedIsNamed() async throws {
        var shop = try Shop()
        let transaction = shop.transaction("pro.lifetime")
        var entry = Self.entry(transaction)
        entry.deliveryState = DeliveryState.delivered
        _ = try await shop.memory.insert(entry, signedTransaction: try shop.sign(transaction))
        let problems = try await LedgerInvariants.check(shop.memory)
        #expect(problems == ["transaction \(entry.transactionId) is marked delivered but was never granted"])
    }

    @Test func aRecordedPayloadThatDiffersFromItsSignedTransactionIsNamedWithTheField() async throws {
        var shop = try Shop()
        let signed = shop.transaction("coins.100")
        var recorded = signed
        recorded.quantity = 5
        let entry = Self.entry(recorded)
        _ = try await shop.memory.insert(entry, signedTransaction: try shop.sign(signed))
        let unsigned = shop.transaction("pro.lifetime")
        let unsignedEntry = Self.entry(unsigned)
        _ = try await shop.memory.insert(unsignedEntry, signedTransaction: nil)

        let progress = LockedValue(0)
        let result = try await LedgerReverification.run(shop.memory, verifier: shop.verifier) { _, _ in
            progress.withLock { $0 += 1 }
        }
        #expect(result.verified == 0)
        #expect(
            result.problems.map(\.line) == [
                "storageCorrupted: transaction \(entry.transactionId): the recorded payload differs from its signed "
                    + "transaction in quantity",
                "notFound: transaction \(unsignedEntry.transactionId): it was recorded without its signed transaction, "
                    + "though the ledger keeps them since sequence 1: it cannot be verified again",
            ]
        )
        #expect(progress.withLock { $0 } == 0)
        #expect(LedgerReverification.differences(recorded: signed, signed: signed) == [])
    }

    /// Entries of bob with a made-up payload, delivered, `count` of them from `first` on.
    static func deliveredEntries(_ count: Int, from first: Int, user: String) -> [LedgerEntry] {
        (first..<first + count).map { index in
            let id = String(4_000_000 + index)
            var entry = LedgerEntry(
                transaction: TransactionPayload(
                    originalTransactionId: id,
                    transactionId: id,
                    productId: "coins.100",
                    type: .consumable
                ),
                transactionId: id,
                originalTransactionId: id,
                userId: user,
                productId: "coins.100",
                recordedAt: Shop.start
            )
            entry.deliveryState = .delivered
            entry.deliveredAt = Shop.start
            return entry
        }
    }

    @Test func theCheckWalksTheLedgerPageByPageAndFindsWhatIsWrongOnALaterPage() async throws {
        let store = InMemoryEntitlementStore()
        // 2,500 entries: two pages of the walk; the broken one is on the second.
        for entry in Self.deliveredEntries(2_500, from: 0, user: "bob") {
            _ = try await store.insert(entry)
        }
        #expect(try await LedgerInvariants.check(store) == [])
        var broken = Self.deliveredEntries(1, from: 2_500, user: "carol")[0]
        broken.deliveredAt = nil
        _ = try await store.insert(broken)
        let findings = try await LedgerInvariants.examine(store)
        #expect(findings.problems == ["transaction 4002500 is marked delivered but was never granted"])
        #expect(findings.equivalentUserIds.isEmpty)
        #expect(findings.undecidedProratedRefunds.isEmpty)
    }

    @Test func oneWalkNamesCanonicallyEquivalentUserIdsByTheirBytes() async throws {
        let store = InMemoryEntitlementStore()
        // "José" composed (NFC) and decomposed (NFD): equal as Swift strings, two users as the ledger compares them.
        let composed = "Jos\u{E9}"
        let decomposed = "Jose\u{301}"
        for entry in Self.deliveredEntries(3, from: 0, user: composed)
            + Self.deliveredEntries(2, from: 3, user: decomposed)
            + Self.deliveredEntries(3, from: 5, user: "ana")
        {
            _ = try await store.insert(entry)
        }
        let findings = try await LedgerInvariants.examine(store)
        #expect(findings.problems == [])
        #expect(findings.equivalentUserIds.count == 1)
        let group = findings.equivalentUserIds.first ?? []
        #expect(group.count == 2)
        #expect(Set(group.map { Array($0.utf8) }) == [Array(composed.utf8), Array(decomposed.utf8)])
        #expect(try await LedgerInvariants.equivalentUserIds(store) == findings.equivalentUserIds)
    }
}
