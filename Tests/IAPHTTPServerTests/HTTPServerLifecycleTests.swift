#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPTransportURLSession
import Testing

/// Asynchronous handlers, concurrency, binding, events and the graceful shutdown.
@Suite("HTTPServer: handlers and lifecycle")
struct HTTPServerLifecycleTests {
    /// A gate a handler waits at until the test opens it.
    final class Gate: Sendable {
        private let state = LockedValue<(open: Bool, waiters: [CheckedContinuation<Void, Never>], arrived: Int)>(
            (false, [], 0)
        )

        var arrived: Int { state.withLock { $0.arrived } }

        func wait() async {
            await withCheckedContinuation { continuation in
                let open = state.withLock { state -> Bool in
                    state.arrived += 1
                    if !state.open { state.waiters.append(continuation) }
                    return state.open
                }
                if open { continuation.resume() }
            }
        }

        func open() {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Counts what an actor saw, to prove the handlers really await.
    actor Ledger {
        private(set) var entries: [String] = []
        func append(_ entry: String) async {
            try? await Task.sleep(for: .milliseconds(20))
            entries.append(entry)
        }
    }

    @Test("concurrent requests to async handlers each get their own answer")
    func concurrentAsyncHandlers() async throws {
        let ledger = Ledger()
        var router = HTTPRouter()
        router.post("/orders/{orderId}") { request in
            let orderId = request.pathParameter("orderId") ?? ""
            await ledger.append(orderId)
            return .json(
                Data(#"{"orderId":"\#(orderId)","body":\#(String(decoding: request.body, as: UTF8.self))}"#.utf8)
            )
        }
        try await withServer(router: router) { server in
            let transport = URLSessionTransport()
            let answers = try await withThrowingTaskGroup(of: (Int, Data).self) { group in
                for index in 0..<50 {
                    group.addTask {
                        let response = try await transport.send(
                            HTTPRequest(
                                method: "POST",
                                url: try #require(URL(string: server.origin + "/orders/o\(index)")),
                                headers: ["Content-Type": "application/json"],
                                body: Data("\(index)".utf8)
                            )
                        )
                        return (index, response.body)
                    }
                }
                return try await group.reduce(into: [Int: Data]()) { $0[$1.0] = $1.1 }
            }
            #expect(answers.count == 50)
            for (index, body) in answers {
                #expect(String(decoding: body, as: UTF8.self) == #"{"orderId":"o\#(index)","body":\#(index)}"#)
            }
            #expect(await ledger.entries.count == 50)
        }
    }

    @Test("shutdown stops accepting, lets the request in flight finish, then stops")
    func gracefulShutdown() async throws {
        let gate = Gate()
        var router = HTTPRouter()
        router.get("/work") { _ in
            await gate.wait()
            return .text("done")
        }
        // The request waits on the gate for as long as a loaded machine takes to run the steps below.
        var configuration = HTTPServer.Configuration()
        configuration.requestDeadline = .seconds(300)
        configuration.idleTimeout = .seconds(300)
        let server = try HTTPServer(configuration: configuration, router: router)
        let port = server.port
        let inFlight = try RawHTTPConnection(port: port)
        inFlight.send("GET /work HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await eventually { gate.arrived == 1 })

        let stopping = Task { await server.shutdown(gracePeriod: .seconds(20)) }
        // New connections are refused once the server stopped listening.
        #expect(await eventually { (try? RawHTTPConnection(port: port)) == nil })
        #expect(server.requestsInFlight == 1)
        gate.open()
        let (bytes, closed) = await inFlight.readUntilClosed()
        let answer = RawHTTPConnection.parse(bytes)
        #expect(answer?.status == 200)
        #expect(answer?.body == Data("done".utf8))
        #expect(answer?.headers["connection"] == "close")
        #expect(closed)
        await stopping.value
        #expect(server.openConnections == 0)
    }

    @Test("shutdown answers 503 to a handler still running after the grace period, and cancels it")
    func shutdownAfterGrace() async throws {
        let cancelled = LockedValue(false)
        var router = HTTPRouter()
        router.get("/stuck") { _ in
            do {
                try await Task.sleep(for: .seconds(60))
            } catch {
                cancelled.withLock { $0 = true }
            }
            return .text("late")
        }
        let server = try HTTPServer(router: router)
        let stuck = try RawHTTPConnection(port: server.port)
        stuck.send("GET /stuck HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await eventually { server.requestsInFlight == 1 })
        let started = ContinuousClock.now
        async let read = stuck.readUntilClosed()
        await server.shutdown(gracePeriod: .milliseconds(300))
        // Well under the handler's 60 s, with room for a loaded machine.
        #expect(ContinuousClock.now - started < .seconds(30))
        let (bytes, closed) = await read
        #expect(closed)
        let answer = RawHTTPConnection.parse(bytes)
        #expect(answer == nil || answer?.status == 503)
        #expect(await eventually { cancelled.withLock { $0 } })
        await server.shutdown()  // a second call returns at once
    }

    @Test("port 0 picks a free port; IPv4 and IPv6 loopback both serve")
    func binding() async throws {
        var router = HTTPRouter()
        router.get("/ping") { request in .text("pong from \(request.remoteAddress ?? "?")") }
        var ipv6 = HTTPServer.Configuration(host: "::1", port: 0)
        ipv6.maximumConnections = 8
        try await withServer(ipv6, router: router) { server in
            #expect(server.port != 0)
            #expect(server.host == "[::1]")
            #expect(server.origin == "http://[::1]:\(server.port)")
            let answer = try await RawHTTPConnection.exchange(
                port: server.port,
                "GET /ping HTTP/1.1\r\nHost: [::1]\r\n\r\n",
                ipv6: true
            )
            #expect(answer?.body == Data("pong from ::1".utf8))
        }
        try await withServer(HTTPServer.Configuration(host: "localhost"), router: router) { server in
            #expect(server.host == "127.0.0.1")
            let response = try await URLSessionTransport().send(
                HTTPRequest(method: "GET", url: try #require(URL(string: server.origin + "/ping")))
            )
            #expect(String(decoding: response.body, as: UTF8.self) == "pong from 127.0.0.1")

            // The same port again is refused, with the system's reason.
            #expect {
                try HTTPServer(configuration: HTTPServer.Configuration(port: server.port), router: router)
            } throws: { error in
                let error = error as? IAPError
                return error?.code == .invalidConfiguration && error?.message.contains("in use") == true
            }
        }
        #expect(throws: IAPError.self) {
            try HTTPServer(configuration: HTTPServer.Configuration(host: "example.com"), router: router)
        }
        // A server released without shutdown() stops and frees its port.
        var dropped: HTTPServer? = try HTTPServer(router: router)
        let freed = try #require(dropped?.port)
        dropped = nil
        try await withServer(HTTPServer.Configuration(port: freed), router: router) { server in
            #expect(server.port == freed)
        }
        var invalid = HTTPServer.Configuration()
        invalid.maximumConnections = 0
        #expect(throws: IAPError.self) { try HTTPServer(configuration: invalid, router: router) }
    }

    @Test("a handler that throws or answers an unsendable header is a neutral 500, reported as an event")
    func failuresAreEvents() async throws {
        let events = InMemoryEventSink()
        var router = HTTPRouter()
        router.get("/users/{userId}/fail") { _ in throw IAPError(.storageFailure, "disk on fire") }
        router.get("/inject") { _ in HTTPServerResponse(status: 200, headers: ["X-Evil": "a\r\nSet-Cookie: x=1"]) }
        router.get("/users/{userId}/ok") { _ in .text("ok") }
        var configuration = HTTPServer.Configuration()
        configuration.events = events
        try await withServer(configuration, router: router) { server in
            let failed = try await RawHTTPConnection.exchange(
                port: server.port,
                "GET /users/alice/fail HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            #expect(failed?.status == 500)
            #expect(failed?.body == Data(#"{"error":"internal error"}"#.utf8))
            let injected = try await RawHTTPConnection.exchange(
                port: server.port,
                "GET /inject HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            #expect(injected?.status == 500)
            #expect(injected?.headers["set-cookie"] == nil)
            let ok = try await RawHTTPConnection.exchange(
                port: server.port,
                "GET /users/bob/ok HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            #expect(ok?.status == 200)

            #expect(await eventually { events.events(named: "http.request").count == 3 })
            let handlerFailure = try #require(events.events(named: "http.handler.failed").first)
            #expect(handlerFailure.errorCode == "storageFailure")
            #expect(events.events(named: "http.response.invalid").count == 1)
            let requests = events.events(named: "http.request")
            #expect(Set(requests.compactMap(\.outcome)) == ["500", "200"])
            // Requests are reported by their route, never by the user in the path.
            #expect(requests.contains { $0.message == "GET /users/{userId}/ok" })
            #expect(!requests.contains { $0.message?.contains("bob") == true })
        }
    }
}
