import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import Testing

/// `POST /iap/v1/transactions` as a stranger sees it: the authenticated user owns what is submitted, and every body,
/// whatever the outcome, holds a code and a neutral message; the detail goes to the operator.
@Suite("Transaction submission: owner and private answers")
struct TransactionSubmissionPrivacyTests {
    /// A shop whose events are kept.
    struct Server {
        var shop: Shop
        let events = InMemoryEventSink()
        let pipeline: DeliveryPipeline
        let handler: TransactionSubmissionHandler

        /// What the shop's wallet says when it fails: internal detail.
        static let hookFailure = "the wallet service is down"

        init(authentication: TransactionSubmissionHandler.Authentication = .required) throws {
            shop = try Shop()
            pipeline = shop.pipeline(events: events)
            handler = TransactionSubmissionHandler(pipeline: pipeline, authentication: authentication)
        }

        func body(_ signed: String, user: String? = nil) throws -> Data {
            try JSONEncoder().encode(TransactionSubmission(signedTransaction: signed, userId: user))
        }
    }

    /// Everything a body may say: its keys, and a message free of users other than the caller and of the server's
    /// inside.
    static func expectPrivate(_ response: TransactionSubmissionResponse, caller: String?, _ context: String) throws {
        let text = String(decoding: response.body, as: UTF8.self)
        let object = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        #expect(Set(object.keys).isSubset(of: ["outcome", "transactionId", "finish", "error"]), "\(context): \(text)")
        if let error = object["error"] as? [String: Any] {
            #expect(Set(error.keys) == ["code", "message", "retryable"], "\(context): \(text)")
        }
        for secret in ["carol", Server.hookFailure, "injected", "wallet", "unowned:", "kept changing", "revision"]
        where secret != caller {
            #expect(!text.contains(secret), "\(context): the body names '\(secret)': \(text)")
        }
    }

    @Test func everyOutcomeAnswersACodeAndANeutralMessageAndTellsTheOperatorTheDetail() async throws {
        var server = try Server()
        let shop = server.shop
        // carol's purchase, with the token her app derived and bound.
        let carolToken = UUID().uuidString.lowercased()
        _ = try await shop.memory.bind(appAccountToken: carolToken, to: "carol")
        let carols = try shop.sign(server.shop.transaction("pro.lifetime", token: carolToken))
        #expect(await server.handler.handle(body: try server.body(carols), authenticatedUserId: "carol").status == 200)

        var answers: [(status: Int, response: TransactionSubmissionResponse, caller: String?)] = []
        func send(_ body: Data, as caller: String?, handler: TransactionSubmissionHandler? = nil) async throws {
            let response = await (handler ?? server.handler).handle(body: body, authenticatedUserId: caller)
            answers.append((response.status, response, caller))
            try Self.expectPrivate(response, caller: caller, "HTTP \(response.status)")
        }

        // 200: a purchase of the authenticated user.
        try await send(try server.body(try shop.sign(server.shop.transaction("coins.100"))), as: "mallory")
        // 202 deferred: the hook fails with internal detail.
        shop.wallet.failNext(1)
        try await send(try server.body(try shop.sign(server.shop.transaction("coins.100"))), as: "mallory")
        // 400: not a submission; signed data that is not a JWS; a user id in the reserved namespace.
        try await send(Data("{}".utf8), as: "mallory")
        try await send(try server.body("x.y.z"), as: "mallory")
        try await send(try server.body(carols, user: "unowned:2000000000000001"), as: "mallory")
        // 401: no authenticated user.
        try await send(try server.body(carols, user: "carol"), as: nil)
        // 403: a body naming another user than the authenticated one.
        try await send(try server.body(carols, user: "carol"), as: "mallory")
        // 409: carol's purchase, presented by mallory.
        try await send(try server.body(carols), as: "mallory")
        // 202: a product the catalog does not know: recorded and parked, never granted by guess.
        try await send(try server.body(try shop.sign(server.shop.transaction("no.such.product"))), as: "mallory")
        // 503: the ledger fails.
        shop.store.inject(.beforeApplying, on: .insert)
        try await send(try server.body(try shop.sign(server.shop.transaction("coins.100"))), as: "mallory")

        #expect(answers.map(\.status) == [200, 202, 400, 400, 400, 401, 403, 409, 202, 503])
        #expect(
            answers.map { $0.response.result.error?.code.rawValue ?? "-" } == [
                "-", "fulfillmentFailed", "malformedRequest", "malformedSignedData", "malformedRequest",
                "unauthenticated", "userMismatch", "ownershipConflict", "unknownProduct", "storageFailure",
            ]
        )
        #expect(answers.map(\.response.result.finish) == [true] + Array(repeating: false, count: 9))

        // The operator has the detail, the client never had: in the response's detail and in one event per request.
        #expect(answers[1].response.detail?.message.contains(Server.hookFailure) == true)
        #expect(answers[6].response.detail?.message.contains("carol") == true)
        #expect(answers[7].response.detail?.message.contains("carol") == true)
        let submissions = server.events.events.filter { $0.event.hasPrefix("submission.") }
        #expect(submissions.count == 11)
        #expect(submissions.last?.errorCode == "storageFailure")
        #expect(submissions.last?.message?.contains("injected") == true)
        let conflict = try #require(
            server.events.events(named: "submission.rejected").first { $0.errorCode == "ownershipConflict" }
        )
        #expect(conflict.userId == "mallory")
        #expect(conflict.message?.contains("carol") == true)
        #expect(server.shop.wallet.calls.filter { $0.userId == "carol" }.count == 1)
    }

    @Test func aPurchaseGivenToNobodyIsNotFinished() async throws {
        var server = try Server(authentication: .trustBodyUserId)
        let unbound = try server.shop.sign(server.shop.transaction("pro.lifetime", token: UUID().uuidString))

        let response = await server.handler.handle(body: try server.body(unbound), authenticatedUserId: nil)

        #expect(response.status == 202)
        #expect(response.result.outcome == .awaitingOwner)
        #expect(!response.result.finish)
        #expect(response.result.isRetryable)
        try Self.expectPrivate(response, caller: nil, "awaitingOwner")
        let claimed = await server.handler.handle(
            body: try server.body(unbound, user: "alice"),
            authenticatedUserId: nil
        )
        #expect(claimed.status == 200 && claimed.result.finish)
    }

    @Test func theBodysUserIsTrustedOnlyByTheNamedOptOut() async throws {
        var strict = try Server()
        let signed = try strict.shop.sign(strict.shop.transaction("coins.100"))
        #expect(strict.handler.authentication == .required)
        let refused = await strict.handler.handle(
            body: try strict.body(signed, user: "alice"),
            authenticatedUserId: nil
        )
        #expect(refused.status == 401)
        #expect(strict.shop.wallet.calls.isEmpty)
        let same = await strict.handler.handle(
            body: try strict.body(signed, user: "alice"),
            authenticatedUserId: "alice"
        )
        #expect(same.status == 200)
        #expect(strict.shop.wallet.calls.map(\.userId) == ["alice"])

        var open = try Server(authentication: .trustBodyUserId)
        let other = try open.shop.sign(open.shop.transaction("coins.100"))
        let trusted = await open.handler.handle(body: try open.body(other, user: "bob"), authenticatedUserId: nil)
        #expect(trusted.status == 200)
        #expect(open.shop.wallet.calls.map(\.userId) == ["bob"])
        // Even then, an authenticated user the body contradicts is refused.
        let mismatch = await open.handler.handle(body: try open.body(other, user: "bob"), authenticatedUserId: "eve")
        #expect(mismatch.status == 403)
        #expect(!String(decoding: mismatch.body, as: UTF8.self).contains("bob"))
    }
}
