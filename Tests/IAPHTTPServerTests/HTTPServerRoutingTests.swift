import Foundation
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPTransportURLSession
import Testing

/// Routing, path and query parameters, headers and the router's own answers, over real loopback requests.
@Suite("HTTPServer: routing")
struct HTTPServerRoutingTests {
    private static func router() -> HTTPRouter {
        var router = HTTPRouter()
        router.get("/iap/v1/users/{userId}/entitlements") { request in
            .text("entitlements of \(request.pathParameter("userId") ?? "?")")
        }
        router.get("/iap/v1/users/me/entitlements") { _ in .text("mine") }
        router.get("/iap/v1/users/{userId}/history") { request in
            let limit = request.queryValue("limit") ?? "-"
            let cursor = request.queryValue("cursor") ?? "-"
            return .text("history of \(request.pathParameter("userId") ?? "?") limit \(limit) cursor \(cursor)")
        }
        router.get("/files/{path...}") { request in .text("file \(request.pathParameter("path") ?? "?")") }
        router.post("/echo") { request in
            var response = HTTPServerResponse.json(request.body)
            response.headers.add(name: "X-Route", value: request.route ?? "-")
            response.headers.add(name: "X-Tags", value: request.headers.values(for: "x-tag").joined(separator: ","))
            return response
        }
        router.delete("/echo") { _ in HTTPServerResponse(status: 204) }
        return router
    }

    private func send(
        _ server: HTTPServer,
        _ method: String,
        _ target: String,
        headers: [String: String] = [:],
        body: Data? = nil
    ) async throws -> HTTPResponse {
        try await URLSessionTransport().send(
            HTTPRequest(
                method: method,
                url: try #require(URL(string: server.origin + target)),
                headers: headers,
                body: body
            )
        )
    }

    @Test("path parameters are percent-decoded, and a literal segment beats a parameter")
    func pathParameters() async throws {
        try await withServer(router: Self.router()) { server in
            let encoded = try await send(server, "GET", "/iap/v1/users/alice%2Fb%20c/entitlements")
            #expect(encoded.status == 200)
            #expect(String(decoding: encoded.body, as: UTF8.self) == "entitlements of alice/b c")
            #expect(encoded.header("Content-Type") == "text/plain; charset=utf-8")
            let mine = try await send(server, "GET", "/iap/v1/users/me/entitlements")
            #expect(String(decoding: mine.body, as: UTF8.self) == "mine")
            let rest = try await send(server, "GET", "/files/a/b/c.txt")
            #expect(String(decoding: rest.body, as: UTF8.self) == "file a/b/c.txt")
        }
    }

    @Test("query parameters are decoded, and a repeated header keeps every value")
    func queryAndHeaders() async throws {
        try await withServer(router: Self.router()) { server in
            let history = try await send(server, "GET", "/iap/v1/users/bob/history?limit=5&cursor=a%2Bb+c")
            #expect(String(decoding: history.body, as: UTF8.self) == "history of bob limit 5 cursor a+b c")

            let raw = try #require(
                try await RawHTTPConnection.exchange(
                    port: server.port,
                    "POST /echo HTTP/1.1\r\nHost: x\r\nX-Tag: one\r\nX-Tag: two\r\nContent-Length: 4\r\n\r\nping"
                )
            )
            #expect(raw.status == 200)
            #expect(raw.body == Data("ping".utf8))
            #expect(raw.headers["x-tags"] == "one,two")
            #expect(raw.headers["x-route"] == "/echo")
        }
    }

    @Test("an unknown path is 404, a known path with another method 405 with Allow, HEAD is answered by GET")
    func notFoundAndMethodNotAllowed() async throws {
        try await withServer(router: Self.router()) { server in
            let missing = try await send(server, "GET", "/nowhere")
            #expect(missing.status == 404)
            #expect(missing.body == Data(#"{"error":"no such endpoint"}"#.utf8))
            let wrongMethod = try await send(server, "PUT", "/echo", body: Data("{}".utf8))
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.header("Allow") == "DELETE, POST")
            let head = try #require(
                try await RawHTTPConnection.exchange(
                    port: server.port,
                    "HEAD /files/x HTTP/1.1\r\nHost: x\r\n\r\n",
                    head: true
                )
            )
            #expect(head.status == 200)
            #expect(head.headers["content-length"] == "6")
            #expect(head.body.isEmpty)
        }
    }

    @Test("a router answers in process exactly as over HTTP")
    func inProcess() async throws {
        let router = Self.router()
        let response = try await router.respond(
            to: HTTPServerRequest(method: "GET", target: "/iap/v1/users/carol/history?limit=2")
        )
        #expect(String(decoding: response.body, as: UTF8.self) == "history of carol limit 2 cursor -")
        #expect(try await router.respond(to: HTTPServerRequest(method: "GET", target: "/x")).status == 404)
        #expect(throws: IAPError.self) { try HTTPServerRequest(method: "GET", target: "/a%zz") }
        #expect(throws: IAPError.self) { try HTTPServerRequest(method: "GET", target: "no-slash") }
    }

    @Test("a malformed target or head is answered 400 and the server goes on")
    func malformed() async throws {
        try await withServer(router: Self.router()) { server in
            let badEscape = try await RawHTTPConnection.exchange(
                port: server.port,
                "GET /files/a%zz HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            #expect(badEscape?.status == 400)
            let noColon = try await RawHTTPConnection.exchange(
                port: server.port,
                "GET / HTTP/1.1\r\nBad Header\r\n\r\n"
            )
            #expect(noColon?.status == 400)
            let badLength = try await RawHTTPConnection.exchange(
                port: server.port,
                "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n"
            )
            #expect(badLength?.status == 400)
            let badChunk = try await RawHTTPConnection.exchange(
                port: server.port,
                "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"
            )
            #expect(badChunk?.status == 400)
            // A request line without a single space is not HTTP at all: libmicrohttpd closes without an answer.
            let garbage = try RawHTTPConnection(port: server.port)
            garbage.send("GARBAGE\r\n\r\n")
            let (bytes, closed) = await garbage.readUntilClosed()
            #expect(closed)
            #expect(bytes.isEmpty || String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 400"))

            #expect(try await send(server, "GET", "/files/ok").status == 200)
        }
    }

    @Test("a head larger than the connection's memory is answered 431")
    func headTooLarge() async throws {
        var configuration = HTTPServer.Configuration()
        configuration.connectionMemoryLimit = 16 * 1024
        try await withServer(configuration, router: Self.router()) { server in
            let huge =
                "GET /files/x HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 20_000) + "\r\n\r\n"
            let refused = try await RawHTTPConnection.exchange(port: server.port, huge)
            #expect(refused?.status == 431)
            let fits = "GET /files/x HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 8_000) + "\r\n\r\n"
            let served = try await RawHTTPConnection.exchange(port: server.port, fits)
            #expect(served?.status == 200)
        }
    }

    @Test("two requests on one kept-alive connection are both answered, in order")
    func keepAlive() async throws {
        try await withServer(router: Self.router()) { server in
            let connection = try RawHTTPConnection(port: server.port)
            connection.send("GET /files/one HTTP/1.1\r\nHost: x\r\n\r\n")
            let first = try #require(await connection.readAnswer())
            connection.send("GET /files/two HTTP/1.1\r\nHost: x\r\n\r\n")
            let second = try #require(await connection.readAnswer())
            #expect(String(decoding: first.body, as: UTF8.self) == "file one")
            #expect(String(decoding: second.body, as: UTF8.self) == "file two")
            #expect(first.headers["connection"] == nil)

            var closing = HTTPServer.Configuration()
            closing.keepAlive = false
            try await withServer(closing, router: Self.router()) { oneShot in
                let single = try RawHTTPConnection(port: oneShot.port)
                single.send("GET /files/one HTTP/1.1\r\nHost: x\r\n\r\n")
                let (bytes, closed) = await single.readUntilClosed()
                #expect(closed)
                #expect(RawHTTPConnection.parse(bytes)?.headers["connection"] == "close")
            }
        }
    }
}
