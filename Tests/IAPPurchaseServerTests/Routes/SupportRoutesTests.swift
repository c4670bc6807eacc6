import Foundation
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPTesting
import Testing

/// `POST /iap/v1/support/orders/{orderId}/lookup` and `/redeliver` through the router: the service token, the
/// operator's name, the audit log.
@Suite("Routes: support lookup and redelivery")
struct SupportRoutesTests {
    typealias World = PurchaseServerWorld

    static let actions = ["lookup", "redeliver"]

    static func support(
        _ world: World,
        _ orderId: String,
        _ action: String,
        operators: [String] = ["carol"],
        body: String = ""
    ) async throws -> TestResponse {
        try await world.service(
            "POST",
            "/iap/v1/support/orders/\(orderId)/\(action)",
            headers: operators.map { ("X-Operator", $0) },
            body: body
        )
    }

    static func report(_ answer: TestResponse) throws -> OrderLookupReport {
        try answer.decode(OrderLookupReport.self, with: AppStoreJSON.makeDecoder())
    }

    @Test func aLookupShowsTheOrderAndIsAuditedUnderTheOperatorsName() async throws {
        let world = try World()
        let lost = try await world.buy("coins.100", user: "alice")
        let orderId = try #require(lost.orderId)
        let answer = try await Self.support(world, orderId, "lookup")
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.headers["Content-Type"] == "application/json")
        let report = try Self.report(answer)
        #expect(report.found && report.orderId == orderId && !report.redelivered)
        #expect(report.transactions.map(\.transactionId) == [lost.transactionId])
        #expect(report.transactions.first?.delivered == false)
        // A lookup changes nothing.
        #expect(await world.ledger.entry(transactionId: lost.transactionId) == nil)
        let entries = await world.auditLog.entries()
        #expect(entries.map(\.action) == ["lookup"])
        #expect(entries.map(\.actor) == ["carol"])
        #expect(entries.map(\.orderId) == [orderId])
        // An empty JSON object is no body either; anything else is refused.
        #expect(try await Self.support(world, orderId, "lookup", body: " { } ").status == 200)
        let withBody = try await Self.support(world, orderId, "lookup", body: #"{"userId":"alice"}"#)
        #expect(withBody.status == 400)
        #expect(try withBody.failure().error == "a lookup takes no body")
    }

    @Test func aRedeliveryToTheNamedUserGrantsOnceAndIsAudited() async throws {
        let world = try World()
        let lost = try await world.buy("coins.100", user: "alice")
        let orderId = try #require(lost.orderId)
        let answer = try await Self.support(world, orderId, "redeliver", body: #"{"userId":"alice"}"#)
        #expect(answer.status == 200, "\(answer.text)")
        let report = try Self.report(answer)
        #expect(report.redelivered)
        #expect(report.transactions.map(\.redelivery) == ["delivered"])
        #expect(world.wallet.balance("alice") == 100)
        let again = try await Self.support(world, orderId, "redeliver")
        #expect(try Self.report(again).transactions.map(\.redelivery) == ["alreadyDelivered"])
        #expect(world.wallet.calls.count == 1)
        let entries = await world.auditLog.entries()
        #expect(
            entries.map(\.action)
                == ["redeliver.requested", "redeliver.completed", "redeliver.requested", "redeliver.completed"]
        )
        #expect(entries.allSatisfy { $0.actor == "carol" && $0.orderId == orderId })
        #expect(await world.auditLog.verify().isIntact)
    }

    @Test func aRedeliveryBodyIsEmptyOrNamesAValidUserOnly() async throws {
        let world = try World()
        let orderId = try #require(try await world.buy("coins.100", user: "alice").orderId)
        for body in [#"{"userId":"alice","extra":1}"#, "[]", "not json", #"{"userId":42}"#] {
            let answer = try await Self.support(world, orderId, "redeliver", body: body)
            #expect(answer.status == 400, "\(body)")
            #expect(answer.text == #"{"code":"malformedRequest","error":"the body is {\"userId\": \"...\"} or empty"}"#)
        }
        for userId in ["unowned:1", "", String(repeating: "u", count: 257)] {
            let answer = try await Self.support(world, orderId, "redeliver", body: #"{"userId":"\#(userId)"}"#)
            #expect(answer.status == 400, "\(userId)")
            #expect(try answer.failure().code == "invalidArgument")
        }
        #expect(world.wallet.calls.isEmpty)
        #expect(await world.auditLog.entries().isEmpty)
        // null names nobody.
        #expect(try await Self.support(world, orderId, "redeliver", body: #"{"userId":null}"#).status == 200)
    }

    @Test func anOrderTheAppStoreDoesNotKnowIsAnswered404() async throws {
        let world = try World()
        for action in Self.actions {
            let answer = try await Self.support(world, "NOSUCHORDER", action)
            #expect(answer.status == 404, "\(action): \(answer.text)")
            let report = try Self.report(answer)
            #expect(!report.found && report.transactions.isEmpty)
        }
        // The lookup of an unknown order is audited too: someone asked about it.
        #expect(await world.auditLog.entries().map(\.action) == ["lookup"])
    }

    @Test func theServiceTokenAndOneOperatorNameAreRequired() async throws {
        let world = try World()
        let orderId = try #require(try await world.buy("coins.100", user: "alice").orderId)
        for action in Self.actions {
            let path = "/iap/v1/support/orders/\(orderId)/\(action)"
            for bearer in [nil, "wrong-token-of-some-length", try world.userToken("alice")] {
                let answer = try await world.client.send(
                    "POST",
                    path,
                    bearer: bearer,
                    headers: [("X-Operator", "carol")]
                )
                #expect(answer.status == 401, "\(action)")
                #expect(answer.headers["WWW-Authenticate"] == #"Bearer realm="iap""#)
                #expect(try answer.failure().code == "unauthenticated")
            }
            for operators in [
                [], [""], ["   "], [String(repeating: "c", count: 129)], ["carol", "dave"], ["ca\u{7}rol"],
            ] {
                let answer = try await Self.support(world, orderId, action, operators: operators)
                #expect(answer.status == 400, "\(action) \(operators)")
                #expect(
                    answer.text
                        == #"{"code":"malformedRequest","error":"X-Operator must name who asks, for the audit log "#
                        + #"(1 to 128 characters, once)"}"#
                )
            }
            #expect(
                try await Self.support(world, orderId, action, operators: [String(repeating: "c", count: 128)]).status
                    == 200
            )
        }
        #expect(world.events.events(named: "auth.refused").count == 6)
        #expect(await world.auditLog.entries().allSatisfy { $0.actor == String(repeating: "c", count: 128) })
    }

    @Test func anOrderIdThatCannotBeOneIsAnswered400() async throws {
        let world = try World()
        for orderId in [String(repeating: "A", count: 65), "A%20B", "%C3%A9t%C3%A9"] {
            let answer = try await Self.support(world, orderId, "lookup")
            #expect(answer.status == 400, "\(orderId)")
            #expect(answer.text == #"{"code":"invalidArgument","error":"the order id is not valid"}"#)
        }
        #expect(await world.auditLog.entries().isEmpty)
    }

    @Test func withoutAnOrderToolSupportIsAnswered501AfterTheChecks() async throws {
        let world = try World(support: false)
        for action in Self.actions {
            let answer = try await Self.support(world, "MQ7F3K9X2B", action)
            #expect(answer.status == 501, "\(action)")
            #expect(try answer.failure().code == "unsupportedOperation")
            // The credential and the operator's name are still checked first.
            #expect(try await world.client.send("POST", "/iap/v1/support/orders/MQ7F3K9X2B/\(action)").status == 401)
            #expect(try await Self.support(world, "MQ7F3K9X2B", action, operators: []).status == 400)
        }
    }
}
