import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPServerAPI
import IAPTestSupport
import IAPWebhook
import IAPTesting
import Testing

/// A wallet behind HTTP, as an integrator's backend would be: it checks every signature, applies each idempotency
/// key once, and answers what it is told to.
final class WebhookReceiver: Sendable {
    struct State {
        var received: [WebhookDelivery] = []
        var applied: [String: WebhookDelivery] = [:]
        var badSignatures = 0
        var statuses: [Int] = []
        var balances: [String: Int64] = [:]
        var cancelledGrants: Set<String> = []
    }

    let state = LockedValue(State())
    let authenticator: HMACSHA256
    let clock: ManualClock

    init(secret: [UInt8], clock: ManualClock) throws {
        authenticator = try HMACSHA256(key: secret)
        self.clock = clock
    }

    /// Answers the next requests with these statuses before it applies anything (an outage, a refusal).
    func answerNext(_ statuses: [Int]) {
        state.withLock { $0.statuses = statuses }
    }

    var received: [WebhookDelivery] { state.withLock { $0.received } }
    var badSignatures: Int { state.withLock { $0.badSignatures } }
    func balance(_ user: String) -> Int64 { state.withLock { $0.balances[user, default: 0] } }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let body = request.body ?? Data()
        guard
            request.method == "POST",
            request.headers["Content-Type"] == "application/json",
            let header = request.headers[WebhookSignature.headerName],
            let signature = try? WebhookSignature(header: header),
            signature.isValid(for: body, authenticator: authenticator, now: clock.now),
            let delivery = try? JSONDecoder().decode(WebhookDelivery.self, from: body),
            request.headers["Idempotency-Key"] == delivery.idempotencyKey
        else {
            state.withLock { $0.badSignatures += 1 }
            return HTTPResponse(status: 401)
        }
        return state.withLock { state in
            state.received.append(delivery)
            if !state.statuses.isEmpty {
                return HTTPResponse(status: state.statuses.removeFirst())
            }
            guard state.applied[delivery.idempotencyKey] == nil,
                !state.cancelledGrants.contains(delivery.idempotencyKey)
            else {
                return HTTPResponse(status: 409)
            }
            state.applied[delivery.idempotencyKey] = delivery
            if delivery.type == .grant {
                state.balances[delivery.userId, default: 0] += delivery.units
            } else if let grant = delivery.grantIdempotencyKey, state.applied[grant] != nil {
                state.balances[delivery.userId, default: 0] -= delivery.units
            } else if let grant = delivery.grantIdempotencyKey {
                // Take back only what was granted: the grant never came, and is refused if it comes late.
                state.cancelledGrants.insert(grant)
            }
            return HTTPResponse(status: 200)
        }
    }
}

@Suite("WebhookFulfillmentHook: grants and take-backs POSTed to any backend, signed")
struct WebhookFulfillmentHookTests {
    static let secret = Array("a-shared-secret-of-32-bytes-long".utf8)

    struct World {
        let shop: SimulatedShop
        let receiver: WebhookReceiver
        let transport: InProcessTransport
        let pipeline: DeliveryPipeline

        init() throws {
            shop = try SimulatedShop()
            let receiver = try WebhookReceiver(secret: WebhookFulfillmentHookTests.secret, clock: shop.clock)
            self.receiver = receiver
            transport = InProcessTransport { receiver.handle($0) }
            let hook = WebhookFulfillmentHook(
                url: URL(string: "https://wallet.example/iap/deliveries")!,
                authenticator: try HMACSHA256(key: WebhookFulfillmentHookTests.secret),
                transport: transport,
                clock: shop.clock
            )
            pipeline = DeliveryPipeline(
                verifier: shop.verifier,
                catalog: shop.catalog,
                store: shop.ledger,
                hook: hook,
                clock: shop.clock,
                retryPolicy: RetryPolicy(jitter: 0)
            )
        }
    }

    @Test func aGrantIsPostedOnceWithItsKeySignatureAndBody() async throws {
        let world = try World()
        let bought = try await world.shop.buy("coins.100", user: "alice")
        let outcome = await world.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        guard case .delivered = outcome else {
            Issue.record("expected delivered, got \(outcome)")
            return
        }
        #expect(world.receiver.badSignatures == 0)
        let delivery = try #require(world.receiver.received.first)
        #expect(world.receiver.received.count == 1)
        #expect(delivery.type == .grant)
        #expect(delivery.idempotencyKey == bought.payload.transactionId)
        #expect(delivery.userId == "alice")
        #expect(delivery.productId == "coins.100")
        #expect(delivery.units == 100)
        #expect(delivery.environment == bought.payload.environment?.rawValue)
        #expect(delivery.bundleId == bought.payload.bundleId)
        #expect(delivery.purchaseDate == bought.payload.purchaseDate?.millisecondsSince1970)
        #expect(delivery.revocationDate == nil)
        #expect(world.receiver.balance("alice") == 100)

        // The body leaves out what is unknown, and names the fields exactly.
        let request = try #require(world.transport.requests.first)
        let object = try #require(
            try JSONSerialization.jsonObject(with: request.body ?? Data()) as? [String: Any]
        )
        #expect(object["expiresDate"] == nil && object["revocationDate"] == nil)
        #expect(
            Set(object.keys) == [
                "type", "idempotencyKey", "userId", "productId", "transactionId", "originalTransactionId",
                "environment", "bundleId", "units", "purchaseDate",
            ]
        )

        // Submitting again delivers nothing twice.
        let again = await world.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        guard case .alreadyDelivered = again else {
            Issue.record("expected alreadyDelivered, got \(again)")
            return
        }
        #expect(world.receiver.received.count == 1)
    }

    @Test func anOutageIsRetriedUnderTheSameKeyAndAppliedOnce() async throws {
        let world = try World()
        let bought = try await world.shop.buy("coins.100", user: "alice")
        world.receiver.answerNext([503, 500])
        let first = await world.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        guard case .deferred(_, let error) = first else {
            Issue.record("expected deferred, got \(first)")
            return
        }
        #expect(error.isRetryable)
        #expect(error.httpStatus == 503)
        for _ in 0..<2 {
            world.shop.clock.advance(by: .seconds(3_600))
            _ = await world.pipeline.drainDueRetries()
        }
        #expect(world.receiver.received.count == 3)
        #expect(Set(world.receiver.received.map(\.idempotencyKey)).count == 1)
        #expect(world.receiver.balance("alice") == 100)
        let entry = await world.shop.ledger.entry(transactionId: bought.payload.transactionId ?? "")
        #expect(entry?.deliveredAt != nil)
    }

    @Test func a409MeansAppliedBefore() async throws {
        let world = try World()
        let bought = try await world.shop.buy("pro.lifetime", user: "alice")
        world.receiver.answerNext([409])
        let outcome = await world.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        guard case .delivered = outcome else {
            Issue.record("expected delivered, got \(outcome)")
            return
        }
    }

    @Test(arguments: [410, 422])
    func aFinalRefusalIsDeadLetteredAtOnce(status: Int) async throws {
        let world = try World()
        let bought = try await world.shop.buy("pro.lifetime", user: "alice")
        world.receiver.answerNext([status])
        let outcome = await world.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        guard case .deferred(let entry, let error) = outcome else {
            Issue.record("expected deferred, got \(outcome)")
            return
        }
        #expect(error.code == .fulfillmentRefused)
        #expect(!error.isRetryable)
        #expect(error.httpStatus == status)
        #expect(entry.deliveryState == .deadLettered)
        #expect(entry.deliveryAttempts == 1)
        // The retry queue leaves it alone: a person looks.
        world.shop.clock.advance(by: .seconds(86_400))
        _ = await world.pipeline.drainDueRetries()
        #expect(world.receiver.received.count == 1)
    }

    @Test(arguments: [400, 401, 403, 404, 408, 429, 500, 503])
    func anyOtherFailureIsRetriedUntilTheReceiverIsFixed(status: Int) async throws {
        let world = try World()
        let bought = try await world.shop.buy("coins.100", user: "alice")
        world.receiver.answerNext([status, status])
        let outcome = await world.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        guard case .deferred(let entry, let error) = outcome else {
            Issue.record("expected deferred, got \(outcome)")
            return
        }
        #expect(error.code == .fulfillmentFailed)
        #expect(error.isRetryable)
        #expect(error.httpStatus == status)
        #expect(entry.deliveryState == .retrying)
        for _ in 0..<2 {
            world.shop.clock.advance(by: .seconds(3_600))
            _ = await world.pipeline.drainDueRetries()
        }
        #expect(world.receiver.received.count == 3)
        #expect(world.receiver.balance("alice") == 100)
    }

    @Test func aRedeliveryCallsAWaitingOrDeadLetteredDeliveryAtOnce() async throws {
        let world = try World()
        let waiting = try await world.shop.buy("coins.100", user: "alice")
        let dead = try await world.shop.buy("pro.lifetime", user: "alice")
        world.receiver.answerNext([503, 410])
        _ = await world.pipeline.submit(signedTransaction: waiting.signedTransaction, userId: "alice")
        _ = await world.pipeline.submit(signedTransaction: dead.signedTransaction, userId: "alice")
        // The receiver is fixed; nobody waits for the retry queue.
        for bought in [waiting, dead] {
            let id = try #require(bought.payload.transactionId)
            let outcome = try await world.pipeline.redeliver(transactionId: id)
            guard case .delivered(let entry) = outcome else {
                Issue.record("expected delivered, got \(String(describing: outcome))")
                return
            }
            #expect(entry.deliveredAt != nil && entry.deliveryState == .delivered)
            // Delivered: a second redelivery has nothing to do.
            #expect(try await world.pipeline.redeliver(transactionId: id) == nil)
        }
        #expect(world.receiver.received.count == 4)
        #expect(world.receiver.balance("alice") == 101)
        #expect(try await world.pipeline.redeliver(transactionId: "404") == nil)
    }

    @Test func aRefundIsTakenBackUnderItsOwnStableKey() async throws {
        let world = try World()
        let bought = try await world.shop.buy("coins.100", user: "alice")
        _ = await world.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        let transactionId = try #require(bought.payload.transactionId)
        try await world.shop.appStore.refund(transactionId: transactionId)
        _ = try await world.shop.deliverNotifications(to: world.pipeline)
        let revokes = world.receiver.received.filter { $0.type == .revoke }
        #expect(revokes.count == 1)
        let revoke = try #require(revokes.first)
        #expect(revoke.idempotencyKey == "\(transactionId):revoke:0")
        #expect(revoke.transactionId == transactionId)
        #expect(revoke.revocationDate != nil)
        #expect(revoke.grantIdempotencyKey == transactionId)
        #expect(revoke.grantAcknowledged == true)
        #expect(revoke.revocationType == "REFUND_FULL")
        #expect(world.receiver.balance("alice") == 0)

        // The revoke's body names the grant and the refund; the grant's fields are all still there.
        let request = try #require(world.transport.requests.last)
        let object = try #require(
            try JSONSerialization.jsonObject(with: request.body ?? Data()) as? [String: Any]
        )
        #expect(
            Set(object.keys) == [
                "type", "idempotencyKey", "userId", "productId", "transactionId", "originalTransactionId",
                "environment", "bundleId", "units", "purchaseDate", "revocationDate", "grantIdempotencyKey",
                "grantAcknowledged", "revocationType",
            ]
        )
    }

    @Test func aProratedRefundNamesItsShare() async throws {
        let world = try World()
        let bought = try await world.shop.buy("pro.lifetime", user: "alice")
        _ = await world.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        let transactionId = try #require(bought.payload.transactionId)
        try await world.shop.appStore.refund(transactionId: transactionId, percentage: 25_000)
        _ = try await world.shop.deliverNotifications(to: world.pipeline)
        let revoke = try #require(world.receiver.received.last)
        #expect(revoke.type == .revoke)
        #expect(revoke.revocationType == "REFUND_PRORATED")
        #expect(revoke.revocationPercentage == 25_000)
    }

    @Test func aRefundOfAGrantWhoseAnswerWasLostTakesBackNothingAndTheGrantIsRefusedLater() async throws {
        let world = try World()
        let bought = try await world.shop.buy("coins.100", user: "alice")
        let transactionId = try #require(bought.payload.transactionId)
        // The grant's call fails: the receiver never applied it.
        world.receiver.answerNext([503])
        _ = await world.pipeline.submit(signedTransaction: bought.signedTransaction, userId: "alice")
        try await world.shop.appStore.refund(transactionId: transactionId)
        _ = try await world.shop.deliverNotifications(to: world.pipeline)
        // The take-back replaces the grant's retry, when that is due.
        world.shop.clock.advance(by: .seconds(3_600))
        _ = await world.pipeline.drainDueRetries()
        #expect(world.receiver.received.map(\.type) == [.grant, .revoke])
        let revoke = try #require(world.receiver.received.last)
        #expect(revoke.type == .revoke)
        #expect(revoke.grantIdempotencyKey == transactionId)
        #expect(revoke.grantAcknowledged == false)
        #expect(world.receiver.balance("alice") == 0)
        // The grant arrives late (its call outlived everything): refused, nothing given.
        let grant = try #require(world.receiver.received.first)
        let hook = WebhookFulfillmentHook(
            url: URL(string: "https://wallet.example/iap/deliveries")!,
            authenticator: try HMACSHA256(key: Self.secret),
            transport: world.transport,
            clock: world.shop.clock
        )
        let late = Delivery(
            action: .grant,
            idempotencyKey: grant.idempotencyKey,
            transactionId: transactionId,
            userId: "alice",
            product: try world.shop.catalog.product(id: "coins.100"),
            transaction: bought.payload,
            units: 100,
            orderId: nil
        )
        #expect(world.receiver.handle(try hook.request(for: late)).status == 409)
        #expect(world.receiver.balance("alice") == 0)
    }

    @Test func aTamperedOrOldRequestFailsVerification() throws {
        let hmac = try HMACSHA256(key: Self.secret)
        let body = Array(#"{"type":"grant"}"#.utf8)
        let signature = WebhookSignature(signing: body, at: 1_767_225_600, authenticator: hmac)
        let now = Date(timeIntervalSince1970: 1_767_225_630)
        let parsed = try WebhookSignature(header: signature.header)
        #expect(parsed == signature)
        #expect(parsed.isValid(for: body, authenticator: hmac, now: now))
        #expect(!parsed.isValid(for: Array(#"{"type":"revoke"}"#.utf8), authenticator: hmac, now: now))
        #expect(!parsed.isValid(for: body, authenticator: hmac, now: now.addingTimeInterval(3_600)))
        #expect(
            !parsed.isValid(for: body, authenticator: try HMACSHA256(key: Array(repeating: 7, count: 32)), now: now)
        )
        #expect(throws: IAPError(.malformedRequest)) { try WebhookSignature(header: "t=1,v1=zz") }
        #expect(throws: IAPError(.malformedRequest)) {
            try WebhookSignature(header: "v1=" + String(repeating: "a", count: 64))
        }
    }
}
