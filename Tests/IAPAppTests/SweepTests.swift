import Foundation
import IAPApp
import IAPCore
import IAPInMemory
import IAPTesting
import Testing

/// The sweep at launch and on returning to the foreground: the store's unfinished transactions the outbox does not
/// hold are submitted.
@Suite("Launch and foreground sweep")
struct SweepTests {
    /// A purchase made on the device outside the coordinator (StoreKit's own views, another code path): the store
    /// does not send a device its own purchase through the updates, as StoreKit does not.
    func buyOutside(_ phone: SimulatedStoreClient, _ productId: String) async throws -> String {
        let result = try await phone.purchase(productId: productId, options: .init(appAccountToken: UUID()))
        guard case .success(let signed) = result else {
            Issue.record("the purchase did not complete: \(result)")
            throw CancellationError()
        }
        return try UnverifiedTransaction(signedTransaction: signed).transactionId
    }

    /// Launches the app on a device whose updates are the test's (and send nothing), so that only a sweep finds
    /// what the store holds.
    func launchWithoutUpdates(_ world: AppWorld, _ phone: SimulatedStoreClient) async -> PurchaseCoordinator {
        let app = PurchaseCoordinator(
            store: ScriptedUpdatesStoreClient(device: phone),
            delivery: world.delivery(),
            outbox: InMemoryPurchaseOutboxStorage(),
            configuration: AppWorld.configuration,
            clock: world.clock
        )
        await app.start(signedInUser: "alice")
        return app
    }

    @Test("a sweep submits the unfinished transactions the outbox does not hold, and finishes them once delivered")
    func recoversUnfinished() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = await launchWithoutUpdates(world, phone)
        let outside = try await buyOutside(phone, AppWorld.premium)
        #expect(await app.pendingDeliveries().isEmpty)
        #expect(try await !world.isFinished(outside))

        let report = try await app.sweep()
        #expect(report.recovered == [outside])
        #expect(report.delivered == [outside])
        #expect(try await world.isFinished(outside))
        #expect(world.grants.map(\.transactionId) == [outside])
        #expect(try await app.latestTransaction(for: AppWorld.premium)?.userId == "alice")

        // Nothing is left: a second sweep finds nothing and submits nothing.
        let requests = world.transport.requests.count
        let again = try await app.sweep()
        #expect(again.recovered.isEmpty && again.delivered.isEmpty)
        #expect(world.transport.requests.count == requests)
    }

    @Test("launching sweeps: what an earlier run left unfinished and unrecorded is delivered at start")
    func launchSweeps() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let first = try await buyOutside(phone, AppWorld.coins)
        let second = try await buyOutside(phone, AppWorld.season)
        // The updates of this device send nothing: only the sweep can find the two purchases.
        _ = await launchWithoutUpdates(world, phone)
        #expect(try await world.isFinished(first))
        #expect(try await world.isFinished(second))
        #expect(Set(world.grants.map(\.transactionId)) == [first, second])
    }

    @Test("a foreground sweep keeps the backoff; a forced one does not")
    func foregroundKeepsBackoff() async throws {
        let world = try AppWorld()
        let phone = SimulatedStoreClient(store: world.appStore, account: "alice")
        let app = try await world.launch(on: phone, outbox: InMemoryPurchaseOutboxStorage())
        world.transport.setReachable(false)
        guard
            case .pending(.awaitingDelivery(let waiting)) = await app.purchase(productId: AppWorld.coins, for: "alice")
        else {
            Issue.record("the purchase should wait for the server")
            return
        }
        world.transport.setReachable(true)
        let foreground = try await app.sweep()
        #expect(foreground.notDue == [waiting])
        #expect(try await !world.isFinished(waiting))
        let forced = try await app.sweep(force: true)
        #expect(forced.delivered == [waiting])
        #expect(try await world.isFinished(waiting))
    }
}
