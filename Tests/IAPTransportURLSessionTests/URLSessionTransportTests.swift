import Foundation
import IAPCore
import IAPServerAPI
import IAPTestSupport
import IAPTransportURLSession
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("URLSessionTransport against a loopback server")
struct URLSessionTransportTests {
    @Test func roundTripsStatusHeadersAndBody() async throws {
        let server = try LoopbackServer { request in
            .respond(
                status: 201,
                headers: ["Content-Type": "application/json", "X-Echo": request.headers["x-custom"] ?? ""],
                body: Data(#"{"echo":"#.utf8) + request.body + Data("}".utf8)
            )
        }
        defer { server.stop() }
        let transport = URLSessionTransport()
        let url = try #require(URL(string: "\(server.url)/inApps/v1/transactions/a%2Fb?status=1&status=2"))
        let response = try await transport.send(
            HTTPRequest(
                method: "PUT",
                url: url,
                headers: ["X-Custom": "hello", "Content-Type": "application/json", "Authorization": "Bearer t"],
                body: Data(#"{"a":1}"#.utf8),
                timeout: .seconds(10)
            )
        )
        #expect(response.status == 201)
        #expect(response.header("x-echo") == "hello")
        #expect(response.header("Content-Type") == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"echo":{"a":1}}"#)
        let received = try #require(server.requests.first)
        #expect(received.method == "PUT")
        #expect(received.target == "/inApps/v1/transactions/a%2Fb?status=1&status=2")
        #expect(received.headers["authorization"] == "Bearer t")
        #expect(String(decoding: received.body, as: UTF8.self) == #"{"a":1}"#)
    }

    @Test func errorStatusesAreResponses() async throws {
        let server = try LoopbackServer { _ in
            .respond(status: 429, headers: ["Retry-After": "1700000001500"], body: Data(#"{"errorCode":4290000}"#.utf8))
        }
        defer { server.stop() }
        let response = try await URLSessionTransport().send(HTTPRequest(method: "GET", url: server.url))
        #expect(response.status == 429)
        #expect(response.header("retry-after") == "1700000001500")
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        let server = try LoopbackServer { _ in .hang }
        defer { server.stop() }
        let started = ContinuousClock.now
        let error = await #expect(throws: IAPError.self) {
            _ = try await URLSessionTransport().send(
                HTTPRequest(method: "GET", url: server.url, timeout: .milliseconds(300))
            )
        }
        #expect(error?.code == .timeout)
        let elapsed = ContinuousClock.now - started
        // Bounded, with room for a loaded machine.
        #expect(elapsed >= .milliseconds(250) && elapsed < .seconds(30), "\(elapsed)")
    }

    @Test func aRefusedConnectionIsATransportFailure() async throws {
        // Bind a port, then close it, so that nothing listens there.
        let server = try LoopbackServer { _ in .hang }
        let url = server.url
        server.stop()
        let error = await #expect(throws: IAPError.self) {
            _ = try await URLSessionTransport().send(HTTPRequest(method: "GET", url: url, timeout: .seconds(10)))
        }
        #expect(error?.code == .transportFailure)
        #expect(error?.underlying != nil)
    }

    @Test func cancellingTheTaskCancelsTheExchange() async throws {
        let server = try LoopbackServer { _ in .hang }
        defer { server.stop() }
        let transport = URLSessionTransport()
        let task = Task {
            try await transport.send(HTTPRequest(method: "GET", url: server.url, timeout: .seconds(30)))
        }
        while server.requests.isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        task.cancel()
        let error = await #expect(throws: IAPError.self) { _ = try await task.value }
        #expect(error?.code == .cancelled)
    }

    @Test func anAlreadyCancelledTaskSendsNothing() async throws {
        let server = try LoopbackServer { _ in .respond(status: 200, headers: [:], body: Data()) }
        defer { server.stop() }
        let transport = URLSessionTransport()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(HTTPRequest(method: "GET", url: server.url))
        }
        let error = await #expect(throws: IAPError.self) { _ = try await task.value }
        #expect(error?.code == .cancelled)
        #expect(server.requests.isEmpty)
    }

    @Test func anOversizedBodyIsRefused() async throws {
        let server = try LoopbackServer { _ in
            .respond(status: 200, headers: [:], body: Data(repeating: UInt8(ascii: "a"), count: 10_000))
        }
        defer { server.stop() }
        let error = await #expect(throws: IAPError.self) {
            _ = try await URLSessionTransport(maximumResponseSize: 1_000).send(
                HTTPRequest(method: "GET", url: server.url)
            )
        }
        #expect(error?.code == .decodingFailure)
    }

    @Test func aRedirectToAnotherHostIsNotFollowed() async throws {
        let other = try LoopbackServer { _ in .respond(status: 200, headers: [:], body: Data("elsewhere".utf8)) }
        defer { other.stop() }
        // "localhost" is another host than "127.0.0.1" for the same-origin check.
        let target = "http://localhost:\(other.port)/steal"
        let server = try LoopbackServer { _ in
            .respond(status: 302, headers: ["Location": target], body: Data())
        }
        defer { server.stop() }
        let response = try await URLSessionTransport().send(
            HTTPRequest(method: "GET", url: server.url, headers: ["Authorization": "Bearer secret"])
        )
        #expect(response.status == 302)
        #expect(response.header("location") == target)
        #expect(other.requests.isEmpty)
    }

    @Test func aRedirectOnTheSameOriginIsFollowed() async throws {
        let server = try LoopbackServer { request in
            request.target == "/old"
                ? .respond(status: 307, headers: ["Location": "/new"], body: Data())
                : .respond(status: 200, headers: [:], body: Data("new".utf8))
        }
        defer { server.stop() }
        let response = try await URLSessionTransport().send(
            HTTPRequest(method: "GET", url: try #require(URL(string: "\(server.url)/old")))
        )
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "new")
    }

    @Test func aTransportThatFollowsNoRedirectReturnsEvenASameOriginOne() async throws {
        for status in [301, 302, 303, 307, 308] {
            let server = try LoopbackServer { request in
                request.target == "/old"
                    ? .respond(status: status, headers: ["Location": "/new"], body: Data())
                    : .respond(status: 200, headers: [:], body: Data("new".utf8))
            }
            defer { server.stop() }
            let response = try await URLSessionTransport(redirects: .none).send(
                HTTPRequest(
                    method: "POST",
                    url: try #require(URL(string: "\(server.url)/old")),
                    headers: ["Idempotency-Key": "k1"],
                    body: Data("{}".utf8)
                )
            )
            #expect(response.status == status)
            #expect(response.header("location") == "/new")
            #expect(server.requests.map(\.target) == ["/old"], "HTTP \(status)")
        }
    }

    @Test func theClientWorksOverTheRealTransport() async throws {
        let server = try LoopbackServer { request in
            request.target == "/inApps/v1/transactions/1234"
                ? .respond(status: 200, headers: [:], body: Data(#"{"signedTransactionInfo":"abc"}"#.utf8))
                : .respond(status: 404, headers: [:], body: Data(#"{"errorCode":4040010}"#.utf8))
        }
        defer { server.stop() }
        let client = try AppStoreServerAPIClient(
            environment: .sandbox,
            baseURL: server.url,
            transport: URLSessionTransport(),
            tokenProvider: StaticTokenProvider()
        )
        let info = try await client.transactionInfo(transactionId: "1234")
        #expect(info.signedTransactionInfo == "abc")
        let error = await #expect(throws: IAPError.self) { _ = try await client.transactionInfo(transactionId: "9") }
        #expect(error?.apiError == .transactionIdNotFound)
        #expect(server.requests.first?.headers["authorization"] == "Bearer static")
        #expect(server.requests.first?.headers["user-agent"] == AppStoreServerAPIClient.userAgent)
    }
}

/// A token provider that always hands out the same token.
struct StaticTokenProvider: BearerTokenProvider {
    func token() async throws -> String { "static" }
    func invalidate() async {}
}
