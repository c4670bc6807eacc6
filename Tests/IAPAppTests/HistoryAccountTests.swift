import Foundation
import IAPApp
import IAPCore
import IAPInMemory
import IAPTesting
import Testing

/// The order history cache belongs to the device's Apple Account: after the customer signs in to another account,
/// none of the previous account's purchases shows.
@Suite("History by Apple Account")
struct HistoryAccountTests {
    @Test("after an Apple Account switch the cache is filled again from the new account's purchases")
    func accountSwitch() async throws {
        let world = try AppWorld()
        let outbox = world.outboxFile()
        let first = SimulatedStoreClient(store: world.appStore, account: "apple-id-1")
        let app = try await world.launch(on: first, outbox: outbox)
        guard case .delivered = await app.purchase(productId: AppWorld.premium, for: "alice") else {
            Issue.record("the purchase was not delivered")
            return
        }
        #expect(try await app.history(for: "alice").items.map(\.productId) == [AppWorld.premium])

        // The same install, the device now signed in to another Apple Account that bought something else.
        let second = SimulatedStoreClient(store: world.appStore, account: "apple-id-2")
        _ = try await world.appStore.purchase(productId: AppWorld.coins, account: "apple-id-2")
        let again = try await world.launch(on: second, outbox: outbox)
        let rows = try await again.history().items
        #expect(rows.map(\.productId) == [AppWorld.coins])

        // Back to the first account: its purchase shows again, the other's does not.
        let back = try await world.launch(on: first, outbox: outbox)
        #expect(try await back.history().items.map(\.productId) == [AppWorld.premium])
    }
}
