import Foundation
import IAPApp
import IAPCore
import IAPInMemory
import IAPTesting
import Testing

/// The outbox on disk: it survives restarts, and one that cannot be read is moved aside and kept, never deleted,
/// without stopping purchases.
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
        let kept = await second.pendingDeliveries()
        #expect(kept.count == 1)
        #expect(kept.first?.userId == "alice")
        #expect(kept.first?.orderId == "order-8")
        #expect(kept.first?.productId == AppWorld.coins)
        #expect((kept.first?.attempts ?? 0) >= 1)
    }

    @Test("a damaged outbox file is moved aside and kept; purchases go on, and the purchase it held is delivered")
    func damagedFileQuarantined() async throws {
        let world = try AppWorld()
        let storage = world.outboxFile()
        // A purchase the server has not confirmed yet sits in the outbox, unfinished in the store.
        world.transport.setReachable(false)
        let first = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "alice"),
            outbox: storage
        )
        let held = await first.purchase(productId: AppWorld.coins, for: "alice")
        guard case .pending(.awaitingDelivery(let heldId)) = held else {
            Issue.record("expected a purchase waiting for delivery, got \(held)")
            return
        }
        await first.stop()
        // The file is damaged (a torn write of another tool, a disk error), and the server is back.
        let damaged = Data(#"{"version":1,"entries":{"2000":{"transactionId":"#.utf8)
        try await storage.save(damaged)
        world.transport.setReachable(true)

        let app = PurchaseCoordinator(
            store: SimulatedStoreClient(store: world.appStore, account: "alice"),
            delivery: world.delivery(),
            outbox: storage,
            configuration: AppWorld.configuration,
            clock: world.clock
        )
        let events = await app.events()
        await app.start(signedInUser: "alice")

        // Moved aside, byte for byte, and reported.
        let status = await app.outboxStatus()
        #expect(status.isDurable)
        let quarantine = try #require(status.quarantines.first)
        #expect(status.quarantines.count == 1)
        #expect(quarantine.location == storage.path + ".quarantined-\(world.clock.now.millisecondsSince1970)")
        #expect(quarantine.error.code == .storageCorrupted)
        #expect(try await FilePurchaseOutboxStorage(path: quarantine.location).load() == damaged)
        var reported: OutboxQuarantine?
        for await event in events {
            if case .outboxQuarantined(let record) = event {
                reported = record
                break
            }
        }
        #expect(reported == quarantine)

        // The purchase it held was never finished, so the store hands it over again and it is delivered, once.
        try await eventually("the held purchase is delivered") { try await world.isFinished(heldId) }
        #expect(world.grants.map(\.transactionId) == [heldId])

        // The listener runs: a purchase on another device arrives and is delivered.
        let tablet = SimulatedStoreClient(store: world.appStore, account: "alice")
        guard
            case .success(let signed) = try await tablet.purchase(
                productId: AppWorld.premium,
                options: .init(appAccountToken: UUID())
            )
        else {
            Issue.record("the tablet's purchase did not complete")
            return
        }
        let tabletId = try UnverifiedTransaction(signedTransaction: signed).transactionId
        try await eventually("the other device's purchase is delivered") { try await world.isFinished(tabletId) }

        // And purchases work: a new outbox took the old one's place, with the record of the quarantine.
        let bought = await app.purchase(productId: AppWorld.season, for: "alice")
        guard case .delivered = bought else {
            Issue.record("expected a delivered purchase, got \(bought)")
            return
        }
        let relaunched = PurchaseCoordinator(
            store: SimulatedStoreClient(store: world.appStore, account: "alice"),
            delivery: world.delivery(),
            outbox: storage,
            configuration: AppWorld.configuration,
            clock: world.clock
        )
        #expect(await relaunched.outboxStatus().quarantines == [quarantine])
    }

    @Test("an outbox written by a newer version is moved aside, kept, and the app buys and delivers")
    func newerFormatQuarantined() async throws {
        let newer = Data(#"{"version":2,"entries":{},"somethingNew":true}"#.utf8)
        let storage = InMemoryPurchaseOutboxStorage(data: newer)
        let world = try AppWorld()
        let app = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "alice"),
            outbox: storage
        )
        #expect(storage.quarantined.map(\.data) == [newer])
        let status = await app.outboxStatus()
        #expect(status.isDurable)
        #expect(status.quarantines.map(\.location) == storage.quarantined.map(\.location))
        #expect(status.quarantines.first?.errorMessage.contains("format version 2") == true)

        let result = await app.purchase(productId: AppWorld.premium, for: "alice")
        guard case .delivered(let item) = result else {
            Issue.record("expected a delivered purchase, got \(result)")
            return
        }
        #expect(try await world.isFinished(item.transactionId))
        // The new outbox is this version's, readable by the next launch.
        let saved = try #require(storage.data)
        #expect(saved != newer)
        #expect(
            await PurchaseCoordinator(
                store: SimulatedStoreClient(store: world.appStore, account: "alice"),
                delivery: world.delivery(),
                outbox: storage,
                configuration: AppWorld.configuration,
                clock: world.clock
            ).outboxStatus().quarantines.count == 1
        )
    }

    @Test("storage that can be neither read nor moved aside: the outbox lives in memory, nothing is overwritten")
    func unmovableOutboxStaysInMemory() async throws {
        let damaged = Data("not json".utf8)
        let storage = InMemoryPurchaseOutboxStorage(data: damaged)
        storage.failQuarantines(true)
        let world = try AppWorld()
        let app = PurchaseCoordinator(
            store: SimulatedStoreClient(store: world.appStore, account: "alice"),
            delivery: world.delivery(),
            outbox: storage,
            configuration: AppWorld.configuration,
            clock: world.clock
        )
        let events = await app.events()
        await app.start(signedInUser: "alice")
        let status = await app.outboxStatus()
        #expect(!status.isDurable)
        #expect(status.unavailableError?.code == .storageFailure)
        for await event in events {
            if case .outboxUnavailable(let error) = event {
                #expect(error.code == .storageFailure)
                break
            }
        }

        let result = await app.purchase(productId: AppWorld.coins, for: "alice", quantity: 2)
        guard case .delivered = result else {
            Issue.record("expected a delivered purchase, got \(result)")
            return
        }
        #expect(world.grants.count == 1)
        #expect(storage.data == damaged)
        #expect(storage.saveCount == 0)
    }

    @Test("an outbox that cannot be read at all (a directory in its place) leaves purchases working")
    func unreadableOutboxStaysInMemory() async throws {
        let world = try AppWorld()
        let path = world.directory + "/outbox.json"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let app = try await world.launch(
            on: SimulatedStoreClient(store: world.appStore, account: "alice"),
            outbox: FilePurchaseOutboxStorage(path: path)
        )
        let status = await app.outboxStatus()
        #expect(!status.isDurable)
        #expect(status.quarantines.isEmpty)
        let result = await app.purchase(productId: AppWorld.premium, for: "alice")
        guard case .delivered = result else {
            Issue.record("expected a delivered purchase, got \(result)")
            return
        }
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
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
