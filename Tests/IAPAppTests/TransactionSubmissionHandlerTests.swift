import Foundation
import IAPApp
import IAPCore
import IAPInMemory
import IAPTesting
import Testing

/// The server half of `POST /iap/v1/transactions`: status codes and JSON bodies for every kind of request.
@Suite("Transaction submission handler")
struct TransactionSubmissionHandlerTests {
    func body(_ fields: [String: String?]) throws -> Data {
        var object: [String: Any] = [:]
        for (key, value) in fields {
            object[key] = value ?? NSNull()
        }
        return try JSONSerialization.data(withJSONObject: object)
    }

    func json(_ response: TransactionSubmissionResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
    }

    func buy(_ world: AppWorld, _ productId: String, token: UUID? = nil) async throws -> SimulatedTransaction {
        let result = try await world.appStore.purchase(productId: productId, account: "alice", appAccountToken: token)
        return try #require(result.transaction)
    }

    @Test("a purchase is answered 200 delivered with finish true, then 200 alreadyDelivered")
    func delivers() async throws {
        let world = try AppWorld()
        let transaction = try await buy(world, AppWorld.coins)
        let request = try body([
            "signedTransaction": transaction.signedTransaction, "userId": "alice", "orderId": "order-1",
        ])

        let first = await world.handler.handle(body: request, authenticatedUserId: nil)
        let second = await world.handler.handle(body: request, authenticatedUserId: nil)

        #expect(first.status == 200)
        let answer = try json(first)
        #expect(answer["outcome"] as? String == "delivered")
        #expect(answer["finish"] as? Bool == true)
        #expect(answer["transactionId"] as? String == transaction.transactionId)
        #expect(second.status == 200)
        #expect(try json(second)["outcome"] as? String == "alreadyDelivered")
        #expect(world.wallet.calls.count == 1)
        #expect(world.grants.first?.orderId == "order-1")
    }

    @Test("bodies that are not the contract are 400 malformedRequest, with a clear message")
    func badBodies() async throws {
        let world = try AppWorld()
        let bodies: [Data] = [
            Data(),
            Data("not json".utf8),
            Data("[]".utf8),
            Data(#"{"userId":"alice"}"#.utf8),
            Data(#"{"signedTransaction":42,"userId":"alice"}"#.utf8),
            Data(#"{"signedTransaction":"","userId":"alice"}"#.utf8),
            Data(#"{"signedTransaction":"a.b.c","userId":""}"#.utf8),
            Data(#"{"signedTransaction":"a.b.c","orderId":"\#(String(repeating: "x", count: 300))"}"#.utf8),
            Data(repeating: 0x20, count: TransactionSubmissionHandler.maximumBodySize + 1),
        ]
        for request in bodies {
            let response = await world.handler.handle(body: request, authenticatedUserId: nil)
            #expect(response.status == 400)
            #expect(response.result.error?.code == .malformedRequest)
            let answer = try json(response)
            #expect(answer["finish"] as? Bool == false)
            let error = try #require(answer["error"] as? [String: Any])
            #expect(error["code"] as? String == "malformedRequest")
            #expect((error["message"] as? String)?.isEmpty == false)
        }
        #expect(world.wallet.calls.isEmpty)
    }

    @Test("signed data that does not verify is rejected: 400 malformed, 422 another app")
    func rejectsSignedData() async throws {
        let garbage = await (try AppWorld()).handler.handle(
            body: try body(["signedTransaction": "x.y.z", "userId": "alice"]),
            authenticatedUserId: nil
        )
        #expect(garbage.status == 400)
        #expect(garbage.result.error?.code == .malformedSignedData)

        let world = try AppWorld(serverBundleId: "com.example.other")
        let transaction = try await buy(world, AppWorld.premium)
        let response = await world.handler.handle(
            body: try body(["signedTransaction": transaction.signedTransaction, "userId": "alice"]),
            authenticatedUserId: nil
        )
        #expect(response.status == 422)
        #expect(response.result.error?.code == .bundleIdMismatch)
        #expect(try json(response)["finish"] as? Bool == false)
    }

    @Test("another user's purchase is 409; a user other than the authenticated one is 403")
    func ownership() async throws {
        let world = try AppWorld()
        let token = UUID()
        let transaction = try await buy(world, AppWorld.premium, token: token)
        _ = await world.handler.handle(
            body: try body(["signedTransaction": transaction.signedTransaction, "userId": "alice"]),
            authenticatedUserId: nil
        )
        let stolen = await world.handler.handle(
            body: try body(["signedTransaction": transaction.signedTransaction, "userId": "mallory"]),
            authenticatedUserId: nil
        )
        #expect(stolen.status == 409)
        #expect(stolen.result.error?.code == .ownershipConflict)

        let impersonated = await world.handler.handle(
            body: try body(["signedTransaction": transaction.signedTransaction, "userId": "alice"]),
            authenticatedUserId: "mallory"
        )
        #expect(impersonated.status == 403)
        #expect(world.wallet.calls.count == 1)
    }

    @Test("a store failure is 503 with retryable true, and the same body later delivers")
    func storeFailureIsRetryable() async throws {
        let world = try AppWorld()
        let faulty = FaultInjectingEntitlementStore(wrapping: world.ledger)
        let pipeline = DeliveryPipeline(
            verifier: try world.appStore.makeVerifier(),
            catalog: world.catalog,
            store: faulty,
            hook: world.wallet,
            clock: world.clock
        )
        let handler = TransactionSubmissionHandler(pipeline: pipeline)
        let transaction = try await buy(world, AppWorld.coins)
        let request = try body(["signedTransaction": transaction.signedTransaction, "userId": "alice"])
        faulty.inject(.beforeApplying, on: .insert)

        let failed = await handler.handle(body: request, authenticatedUserId: "alice")
        let retried = await handler.handle(body: request, authenticatedUserId: "alice")

        #expect(failed.status == 503)
        let error = try #require(try json(failed)["error"] as? [String: Any])
        #expect(error["retryable"] as? Bool == true)
        #expect(retried.status == 200)
        #expect(world.wallet.calls.count == 1)
    }

    @Test("the HTTP client maps the handler's answers back to outcomes, end to end")
    func roundTrip() async throws {
        let world = try AppWorld()
        let transaction = try await buy(world, AppWorld.coins)
        let client = world.delivery()
        let submission = TransactionSubmission(
            signedTransaction: transaction.signedTransaction,
            userId: "alice",
            orderId: "order-4"
        )
        let first = try await client.submit(submission)
        let again = try await client.submit(submission)
        let stolen = try await client.submit(
            TransactionSubmission(signedTransaction: transaction.signedTransaction, userId: "mallory")
        )
        #expect(first.outcome == .delivered && first.finish)
        #expect(again.outcome == .alreadyDelivered && again.finish)
        #expect(stolen.outcome == .rejected && !stolen.finish && stolen.error?.code == .ownershipConflict)
        let sent = try #require(world.transport.requests.first)
        #expect(sent.method == "POST")
        #expect(sent.url.absoluteString == "https://api.example.com/iap/v1/transactions")
        #expect(sent.headers["Authorization"] == "Bearer app-token")
    }
}
