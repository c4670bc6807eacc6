import Foundation
import IAPApp
import IAPCore
import IAPInMemory
import IAPTesting
import Testing

/// Fresh credentials: the delivery client asks for its headers on every request, and a server that wants the
/// customer to sign in again keeps the purchase unfinished until they have.
@Suite("Sign-in and fresh credentials")
struct AuthenticationTests {
    /// The app's session token, which the app refreshes; counts how often the client asked for it.
    final class Session: Sendable {
        private let state = LockedValue<(token: String?, reads: Int)>((nil, 0))

        func set(_ token: String?) {
            state.withLock { $0.token = token }
        }

        var reads: Int { state.withLock { $0.reads } }

        func headers() throws -> [String: String] {
            let token = state.withLock { state in
                state.reads += 1
                return state.token
            }
            guard let token else {
                throw IAPError(.authenticationRequired, "nobody is signed in")
            }
            return ["Authorization": "Bearer \(token)"]
        }
    }

    func launch(_ world: AppWorld, session: Session) async throws -> PurchaseCoordinator {
        let app = PurchaseCoordinator(
            store: SimulatedStoreClient(store: world.appStore, account: "alice"),
            delivery: world.delivery { try session.headers() },
            outbox: InMemoryPurchaseOutboxStorage(),
            configuration: AppWorld.configuration,
            clock: world.clock
        )
        await app.start(signedInUser: "alice")
        return app
    }

    @Test("the header provider is asked for every request, so a refreshed token is the one sent")
    func headersPerRequest() async throws {
        let world = try AppWorld()
        let session = Session()
        session.set("token-1")
        world.sessions.require("token-1")
        let app = try await launch(world, session: session)

        let first = await app.purchase(productId: AppWorld.coins, for: "alice")
        guard case .delivered = first else {
            Issue.record("expected a delivery, got \(first)")
            return
        }
        session.set("token-2")
        world.sessions.require("token-2")
        let second = await app.purchase(productId: AppWorld.premium, for: "alice")
        guard case .delivered = second else {
            Issue.record("expected a delivery with the refreshed token, got \(second)")
            return
        }
        let sent = world.transport.requests.map { $0.headers["Authorization"] }
        #expect(sent == ["Bearer token-1", "Bearer token-2"])
        #expect(session.reads == world.transport.requests.count)
    }

    @Test(
        "401 and 403 keep the purchase unfinished, the result says sign in; signIn delivers it",
        arguments: [401, 403]
    )
    func refusedUntilSignIn(status: Int) async throws {
        let world = try AppWorld()
        let session = Session()
        session.set("expired")
        world.sessions.require("fresh", refusingWith: status)
        let app = try await launch(world, session: session)
        let events = await app.events()

        let result = await app.purchase(productId: AppWorld.coins, for: "alice", quantity: 3)
        guard case .pending(.authenticationRequired(let transactionId)) = result else {
            Issue.record("expected a purchase waiting for a sign-in, got \(result)")
            return
        }
        #expect(result.failureKind == nil)
        #expect(try await !world.isFinished(transactionId))
        #expect(world.grants.isEmpty)
        let entry = try #require(await app.pendingDeliveries().first)
        #expect(entry.transactionId == transactionId)
        #expect(entry.isAwaitingAuthentication)
        #expect(entry.state == .awaitingDelivery)
        #expect(await app.outboxStatus().awaitingAuthentication == 1)
        for await event in events {
            if case .deferred(let id, let error) = event {
                #expect(id == transactionId)
                #expect(error.code == .authenticationRequired)
                #expect(PurchaseFailureKind.classify(error) == .authenticationRequired)
                break
            }
        }

        // The customer signs in again; the app has the new token before it tells the coordinator.
        session.set("fresh")
        let report = await app.signIn("alice")
        #expect(report.delivered == [transactionId])
        #expect(try await world.isFinished(transactionId))
        #expect(world.grants.map(\.transactionId) == [transactionId])
        #expect(await app.pendingDeliveries().isEmpty)
    }

    @Test("an explicit drain delivers a purchase that waited for credentials, as signIn does")
    func drainAfterCredentials() async throws {
        let world = try AppWorld()
        let session = Session()
        session.set("expired")
        world.sessions.require("fresh")
        let app = try await launch(world, session: session)
        let result = await app.purchase(productId: AppWorld.premium, for: "alice")
        guard case .pending(.authenticationRequired(let transactionId)) = result else {
            Issue.record("expected a purchase waiting for a sign-in, got \(result)")
            return
        }
        let waiting = await app.drainOutbox(force: true)
        #expect(waiting.awaitingAuthentication == [transactionId])

        session.set("fresh")
        let report = await app.drainOutbox(force: true)
        #expect(report.delivered == [transactionId])
        #expect(report.awaitingAuthentication.isEmpty)
        #expect(try await world.isFinished(transactionId))
    }

    @Test("without credentials nothing is sent: the purchase waits for a sign-in")
    func noCredentialsSendsNothing() async throws {
        let world = try AppWorld()
        let session = Session()
        let app = try await launch(world, session: session)
        let result = await app.purchase(productId: AppWorld.premium, for: "alice")
        guard case .pending(.authenticationRequired(let transactionId)) = result else {
            Issue.record("expected a purchase waiting for a sign-in, got \(result)")
            return
        }
        #expect(world.transport.requests.isEmpty)
        #expect(session.reads == 1)
        #expect(try await !world.isFinished(transactionId))

        session.set("token")
        #expect(await app.signIn("alice").delivered == [transactionId])
        #expect(world.transport.requests.count == 1)
    }

    @Test("signing out submits nothing")
    func signOutSubmitsNothing() async throws {
        let world = try AppWorld()
        let session = Session()
        let app = try await launch(world, session: session)
        _ = await app.purchase(productId: AppWorld.premium, for: "alice")
        let reads = session.reads
        let report = await app.signIn(nil)
        #expect(report.delivered.isEmpty && report.waiting.isEmpty)
        #expect(session.reads == reads)
    }
}
