import Foundation
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPTestSupport
import IAPTransportURLSession
import Testing

/// The limits a server keeps against clients that send too much, too slowly or too many at once.
@Suite("HTTPServer: limits")
struct HTTPServerLimitsTests {
    private static func echo() -> HTTPRouter {
        var router = HTTPRouter()
        router.post("/echo") { request in .json(request.body) }
        router.get("/ping") { _ in .text("pong") }
        return router
    }

    @Test("a body larger than the cap is 413: at once for a Content-Length, when it passes the cap when chunked")
    func bodyCap() async throws {
        var configuration = HTTPServer.Configuration()
        configuration.maximumBodySize = 1000
        configuration.idleTimeout = .seconds(30)
        try await withServer(configuration, router: Self.echo()) { server in
            let exact = String(repeating: "a", count: 998)
            let fits = try await RawHTTPConnection.exchange(
                port: server.port,
                "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n\"\(exact)\""
            )
            #expect(fits?.status == 200)
            #expect(fits?.body.count == 1000)

            // Declared too large: answered before any of the body is sent, and the connection is closed.
            let declared = try RawHTTPConnection(port: server.port)
            declared.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n")
            let (bytes, closed) = await declared.readUntilClosed()
            #expect(RawHTTPConnection.parse(bytes)?.status == 413)
            #expect(closed)

            // Declared too large and sent whole at once, as most clients do: the answer is written, the body read
            // and dropped, and the connection closed only then, so that no reset can take the answer away.
            let sentWhole = try RawHTTPConnection(port: server.port)
            sentWhole.send(
                "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
                    + String(repeating: "a", count: 100_000)
            )
            let (answer, closedAfter) = await sentWhole.readUntilClosed()
            #expect(RawHTTPConnection.parse(answer)?.status == 413)
            #expect(closedAfter)

            // Chunked: answered 413 as soon as it passes the cap.
            let chunk = String(repeating: "b", count: 600)
            let chunked = try await RawHTTPConnection.exchange(
                port: server.port,
                "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n0\r\n\r\n"
            )
            #expect(chunked?.status == 413)
            let small = try await RawHTTPConnection.exchange(
                port: server.port,
                "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nping\r\n0\r\n\r\n"
            )
            #expect(small?.body == Data("ping".utf8))

            // A chunked body that goes on far past the cap is answered 413, then cut off (long before the idle
            // timeout).
            let endless = try RawHTTPConnection(port: server.port)
            endless.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            for _ in 0..<500 where endless.send("258\r\n\(chunk)\r\n") {}
            let cutOff = await endless.readUntilClosed(timeout: .seconds(30))
            #expect(cutOff.closed)
            #expect(RawHTTPConnection.parse(cutOff.bytes)?.status == 413)
        }
    }

    @Test("transfer codings and chunk sizes the server cannot take are answered at once, long before the idle timeout")
    func transferCodingEdges() async throws {
        var configuration = HTTPServer.Configuration()
        configuration.maximumBodySize = 1000
        configuration.idleTimeout = .seconds(90)
        configuration.requestDeadline = .seconds(180)
        try await withServer(configuration, router: Self.echo()) { server in
            // Each is sent, and the connection held open: a 4xx/5xx must come without the client closing.
            let filler = String(repeating: "c", count: 1500)
            let cases: [(name: String, request: String, status: Int)] = [
                ("xchunked", "Transfer-Encoding: xchunked\r\n\r\n4\r\nping\r\n", 501),
                ("chunked, identity", "Transfer-Encoding: chunked, identity\r\n\r\n4\r\nping\r\n", 501),
                ("gzip, chunked", "Transfer-Encoding: gzip, chunked\r\n\r\n4\r\nping\r\n", 501),
                ("identity", "Transfer-Encoding: identity\r\n\r\nping", 501),
                ("two headers", "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n4\r\nping\r\n", 501),
                ("with Content-Length", "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n4\r\nping\r\n", 400),
                ("size over 64 bits", "Transfer-Encoding: chunked\r\n\r\n1ffffffffffffffff\r\nping", 413),
                (
                    "size 2^63-1, body past the cap", "Transfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n\(filler)",
                    413
                ),
                ("size over the cap, body past it", "Transfer-Encoding: chunked\r\n\r\n5dc\r\n\(filler)", 413),
            ]
            for item in cases {
                let connection = try RawHTTPConnection(port: server.port)
                let started = ContinuousClock.now
                connection.send("POST /echo HTTP/1.1\r\nHost: x\r\n" + item.request)
                let answer = await connection.readAnswer(timeout: .seconds(60))
                let elapsed = ContinuousClock.now - started
                #expect(answer?.status == item.status, "\(item.name)")
                // Alone it takes milliseconds; the bound leaves room for a loaded machine, far below the idle timeout.
                #expect(elapsed < .seconds(45), "\(item.name): \(elapsed)")
                let closed = await connection.readUntilClosed(timeout: .seconds(20))
                #expect(closed.closed, "\(item.name): the connection is closed after the answer")
            }
            // The server goes on serving.
            let ping = try await RawHTTPConnection.exchange(port: server.port, "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(ping?.status == 200)
        }
    }

    @Test("a client that stops sending in the middle of its request is dropped after the idle timeout")
    func idleTimeout() async throws {
        var configuration = HTTPServer.Configuration()
        configuration.idleTimeout = .seconds(1)
        configuration.requestDeadline = .seconds(60)
        try await withServer(configuration, router: Self.echo()) { server in
            let slow = try RawHTTPConnection(port: server.port)
            slow.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
            let idle = try RawHTTPConnection(port: server.port)
            let started = ContinuousClock.now
            // Closed after the 1 s idle timeout, long before the 60 s deadline (with room for a loaded machine).
            #expect(await slow.readUntilClosed(timeout: .seconds(45)).closed)
            #expect(await idle.readUntilClosed(timeout: .seconds(45)).closed)
            #expect(ContinuousClock.now - started < .seconds(45))
            #expect(await eventually { server.openConnections == 0 })
            let answer = try await RawHTTPConnection.exchange(
                port: server.port,
                "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            #expect(answer?.status == 200)
        }
    }

    @Test("a request trickled in within the idle timeout is still cut off at its deadline")
    func requestDeadlineWhileReceiving() async throws {
        let events = InMemoryEventSink()
        var configuration = HTTPServer.Configuration()
        configuration.idleTimeout = .seconds(2)
        configuration.requestDeadline = .seconds(1)
        configuration.events = events
        try await withServer(configuration, router: Self.echo()) { server in
            let trickle = try RawHTTPConnection(port: server.port)
            let head = Array("GET /ping HTTP/1.1\r\nHost: x\r\nX-Slow: " + String(repeating: "z", count: 200))
            let cutOff = await offPool { () -> Bool in
                for character in head {
                    guard trickle.send(String(character)) else { return true }
                    usleep(100_000)
                }
                return false
            }
            #expect(cutOff)
            #expect(await trickle.readUntilClosed().closed)
            #expect(!events.events(named: "http.deadline.exceeded").isEmpty)
        }
    }

    @Test("a handler that outlives the deadline is cancelled and its client answered 503")
    func handlerDeadline() async throws {
        let cancelled = LockedValue(false)
        var router = HTTPRouter()
        router.get("/slow") { _ in
            do {
                try await Task.sleep(for: .seconds(30))
            } catch {
                cancelled.withLock { $0 = true }
                throw error
            }
            return .text("late")
        }
        var configuration = HTTPServer.Configuration()
        configuration.requestDeadline = .seconds(1)
        try await withServer(configuration, router: router) { server in
            let started = ContinuousClock.now
            let answer = try await RawHTTPConnection.exchange(
                port: server.port,
                "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            #expect(answer?.status == 503)
            #expect(answer?.body == Data(#"{"error":"the request took too long"}"#.utf8))
            // At the 1 s deadline, long before the handler's 60 s (with room for a loaded machine).
            #expect(ContinuousClock.now - started < .seconds(30))
            #expect(await eventually { cancelled.withLock { $0 } })
        }
    }

    @Test("a full server answers 503 at once, and serves again once a connection closes")
    func connectionLimit() async throws {
        var configuration = HTTPServer.Configuration()
        configuration.maximumConnections = 2
        // The held connections must outlast a loaded machine's slowest step, or the count goes below one.
        configuration.idleTimeout = .seconds(120)
        configuration.requestDeadline = .seconds(120)
        try await withServer(configuration, router: Self.echo()) { server in
            let holders = [try RawHTTPConnection(port: server.port), try RawHTTPConnection(port: server.port)]
            #expect(await eventually { server.openConnections == 2 })

            let started = ContinuousClock.now
            let refused = try RawHTTPConnection(port: server.port)
            refused.send("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
            let (bytes, closed) = await refused.readUntilClosed(timeout: .seconds(30))
            let answer = RawHTTPConnection.parse(bytes)
            #expect(answer?.status == 503)
            #expect(answer?.headers["retry-after"] == "1")
            #expect(closed)
            // At once, not after the held connections' 120 s (with room for a loaded machine).
            #expect(ContinuousClock.now - started < .seconds(30))

            holders[0].close()
            #expect(await eventually { server.openConnections == 1 })
            let served = try await RawHTTPConnection.exchange(
                port: server.port,
                "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            #expect(served?.status == 200)
            holders[1].close()
        }
    }

    @Test("a connection beyond the per-address limit is closed unanswered")
    func perAddressLimit() async throws {
        var configuration = HTTPServer.Configuration()
        configuration.maximumConnectionsPerAddress = 2
        // The held connections must stay open until the count is seen, however late a loaded machine looks.
        configuration.idleTimeout = .seconds(120)
        configuration.requestDeadline = .seconds(120)
        try await withServer(configuration, router: Self.echo()) { server in
            let holders = [try RawHTTPConnection(port: server.port), try RawHTTPConnection(port: server.port)]
            #expect(await eventually { server.openConnections == 2 })
            let third = try RawHTTPConnection(port: server.port)
            third.send("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
            let (bytes, closed) = await third.readUntilClosed(timeout: .seconds(30))
            #expect(closed)
            #expect(bytes.isEmpty)
            _ = holders
        }
    }

    @Test("64 slow clients hold connections while good requests are all served")
    func slowClientsDoNotStarve() async throws {
        var configuration = HTTPServer.Configuration()
        // Long enough that no slow client is dropped while 64 connect on a loaded machine: the point is that they
        // all hold their connections while the good requests are served.
        configuration.idleTimeout = .seconds(120)
        configuration.requestDeadline = .seconds(120)
        try await withServer(configuration, router: Self.echo()) { server in
            var slow: [RawHTTPConnection] = []
            for _ in 0..<64 {
                let connection = try RawHTTPConnection(port: server.port)
                connection.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
                slow.append(connection)
            }
            #expect(await eventually(within: .seconds(60)) { server.openConnections >= 64 })
            let transport = URLSessionTransport()
            let url = try #require(URL(string: server.origin + "/ping"))
            let served = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await transport.send(HTTPRequest(method: "GET", url: url)).status }
                }
                return try await group.reduce(into: 0) { $0 += $1 == 200 ? 1 : 0 }
            }
            #expect(served == 100)
            _ = slow
        }
    }
}
