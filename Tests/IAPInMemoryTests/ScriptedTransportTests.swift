import Foundation
import IAPCore
import IAPInMemory
import Testing

@Suite("ScriptedTransport")
struct ScriptedTransportTests {
    func request(
        _ method: String = "GET",
        _ url: String = "https://example.com/inApps/v1/transactions/1?status=1&status=2",
        headers: [String: String] = ["Authorization": "Bearer t"],
        body: String? = nil
    ) throws -> HTTPRequest {
        HTTPRequest(
            method: method,
            url: try #require(URL(string: url)),
            headers: headers,
            body: body.map { Data($0.utf8) }
        )
    }

    @Test func answersMatchingRequestsInOrder() async throws {
        let transport = ScriptedTransport()
        transport.expect(
            method: "GET",
            path: "/inApps/v1/transactions/1",
            query: [("status", "1"), ("status", "2")],
            headers: ["authorization": "Bearer t"],
            body: .empty
        ).respond(status: 200, headers: ["X-Thing": "a"], body: "first")
        transport.expect(method: "POST", path: "/p", body: .json(#"{"b":[1,2],"a":true}"#))
            .respond(status: 201, body: "second")
        let first = try await transport.send(try request())
        #expect(first.status == 200)
        #expect(first.header("x-thing") == "a")
        #expect(String(decoding: first.body, as: UTF8.self) == "first")
        let second = try await transport.send(
            try request("POST", "https://example.com/p", body: #"{ "a" : true, "b" : [1, 2] }"#)
        )
        #expect(second.status == 201)
        #expect(transport.requests.count == 2)
        #expect(transport.pendingCount == 0)
        try transport.verify()
    }

    @Test func reportsEveryDifference() async throws {
        let transport = ScriptedTransport()
        transport.expect(
            method: "PUT",
            path: "/other",
            query: [("status", "2"), ("status", "1")],
            headers: ["Authorization": "Bearer u", "Accept": "application/json"],
            body: .json(#"{"a":1}"#)
        ).respond(status: 200)
        let error = await #expect(throws: IAPError.self) {
            _ = try await transport.send(try request(body: #"{"a":2}"#))
        }
        let message = error?.message ?? ""
        #expect(error?.code == .invalidArgument)
        #expect(message.contains("method GET, expected PUT"))
        #expect(message.contains("path /inApps/v1/transactions/1, expected /other"))
        #expect(message.contains("query status=1&status=2, expected status=2&status=1"))
        #expect(message.contains("header Authorization: Bearer t, expected Bearer u"))
        #expect(message.contains("header Accept: <missing>, expected application/json"))
        #expect(message.contains(#"body {"a":2}, expected {"a":1}"#))
        #expect(throws: IAPError(.invalidArgument)) { try transport.verify() }
    }

    @Test func anUnexpectedRequestAndAnUnmetExpectationFailVerification() async throws {
        let transport = ScriptedTransport()
        await #expect(throws: IAPError(.invalidArgument)) { _ = try await transport.send(try request()) }
        let unused = ScriptedTransport()
        unused.expect(method: "GET", path: "/never").respond(status: 200)
        let error = #expect(throws: IAPError.self) { try unused.verify() }
        #expect(error?.message.contains("expected GET /never but it was never sent") == true)
    }

    @Test func anExpectationWithoutAnswerFails() async throws {
        let transport = ScriptedTransport()
        transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
        let error = await #expect(throws: IAPError.self) { _ = try await transport.send(try request()) }
        #expect(error?.message.contains("gives no answer") == true)
    }

    @Test func scriptedFailuresAreThrown() async throws {
        let transport = ScriptedTransport()
        transport.expect(method: "GET", path: "/inApps/v1/transactions/1").fail(with: IAPError(.timeout, "slow"))
        await #expect(throws: IAPError(.timeout)) { _ = try await transport.send(try request()) }
        try transport.verify()
    }

    @Test func queryIsDecodedBeforeComparison() async throws {
        let transport = ScriptedTransport()
        transport.expect(method: "GET", path: "/p", query: [("productId", "a&b=c d")]).respond(status: 200)
        _ = try await transport.send(try request("GET", "https://example.com/p?productId=a%26b%3Dc%20d"))
        try transport.verify()
    }
}

@Suite("ImmediateClock")
struct ImmediateClockTests {
    @Test func sleepsMoveTimeAndTheLinkedWallClock() async throws {
        let wall = ManualClock(now: Date(millisecondsSince1970: 1_000))
        let clock = ImmediateClock(linkedTo: wall)
        let start = clock.now
        try await clock.sleep(for: .seconds(2))
        try await clock.sleep(until: start, tolerance: nil)
        #expect(clock.sleeps == [.seconds(2), .zero])
        #expect(start.duration(to: clock.now) == .seconds(2))
        #expect(wall.now.millisecondsSince1970 == 3_000)
    }

    @Test func aCancelledSleepThrows() async {
        let clock = ImmediateClock()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeps.isEmpty)
    }
}
