import Foundation
import IAPApp
import IAPCore
import IAPInMemory
import IAPTesting
import Testing

/// The outbox on disk: it survives restarts, and a damaged one is reported, never emptied.
@Suite("Purchase outbox")
struct PurchaseOutboxTests {
    @Test("the outbox file survives a restart with the purchase's context")
    func survivesRestart() async throws {
        let world = try AppWorld()
        world.transport.setReachable(false)
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let first = try await world.launch(on: phone, outbox: world.outboxFile())
        _ = await first.purchase(productId: AppWorld.coins, for: "alice", orderId: "order-8", quantity: 2)
        await first.stop()

        // Another process reads the same file, with the server still down.
        let second = PurchaseCoordinator(
            store: SimulatedStoreClient(store: world.appStore, account: "alice"),
            delivery: world.delivery(),
            outbox: world.outboxFile(),
            configuration: AppWorld.configuration,
            clock: world.clock
        )
        let kept = try await second.pendingDeliveries()
        #expect(kept.count == 1)
        #expect(kept.first?.userId == "alice")
        #expect(kept.first?.orderId == "order-8")
        #expect(kept.first?.productId == AppWorld.coins)
        #expect((kept.first?.attempts ?? 0) >= 1)
    }

    @Test("a corrupt outbox is a storageCorrupted error, and the file is left as it was")
    func corruptFileReported() async throws {
        let world = try AppWorld()
        let storage = world.outboxFile()
        let damaged = Data(#"{"version":1,"entries":{"2000":{"transactionId":"#.utf8)
        try await storage.save(damaged)
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = PurchaseCoordinator(
            store: phone,
            delivery: world.delivery(),
            outbox: storage,
            configuration: AppWorld.configuration,
            clock: world.clock
        )

        await #expect(throws: IAPError(.storageCorrupted)) { try await app.start(signedInUser: "alice") }
        let result = await app.purchase(productId: AppWorld.coins, for: "alice")
        #expect(result == .failed(IAPError(.storageCorrupted)))
        await #expect(throws: IAPError(.storageCorrupted)) { try await app.drainOutbox() }
        #expect(try await storage.load() == damaged)
        #expect(try await world.transactions(of: "alice").isEmpty)
    }

    @Test("an outbox of a newer format is reported, not overwritten")
    func newerFormatReported() async throws {
        let storage = InMemoryPurchaseOutboxStorage(data: Data(#"{"version":2}"#.utf8))
        let world = try AppWorld()
        let app = PurchaseCoordinator(
            store: SimulatedStoreClient(store: world.appStore, account: "alice"),
            delivery: world.delivery(),
            outbox: storage,
            configuration: AppWorld.configuration,
            clock: world.clock
        )
        await #expect(throws: IAPError(.storageCorrupted)) { try await app.pendingDeliveries() }
        #expect(storage.data == Data(#"{"version":2}"#.utf8))
        #expect(storage.saveCount == 0)
    }

    @Test("a purchase whose context cannot be saved is not started")
    func unsavableContextStartsNothing() async throws {
        let world = try AppWorld()
        let storage = InMemoryPurchaseOutboxStorage()
        let app = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "alice"),
            outbox: storage
        )
        storage.failSaves(1)
        let result = await app.purchase(productId: AppWorld.premium, for: "alice")
        #expect(result == .failed(IAPError(.storageFailure)))
        #expect(try await world.transactions(of: "alice").isEmpty)
    }
}
