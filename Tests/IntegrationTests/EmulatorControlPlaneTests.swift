#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTransportURLSession
import Testing

/// The attacks on `iap emulate`'s control plane, kept as tests: a web page, a rebound DNS name, a missing token,
/// junk in the journal, slow clients, files others can read.
@Suite("iap emulate: the control plane")
struct EmulatorControlPlaneTests {
    /// A raw request to the emulator, with exactly these header lines.
    private func raw(_ emulator: EmulatorProcess, _ requestLine: String, _ headers: [String], body: String = "")
        throws -> String
    {
        let port = try #require(emulator.baseURL.port)
        var text = requestLine + "\r\n"
        for header in headers {
            text += header + "\r\n"
        }
        text += "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        return try RawConnection.exchange(port: port, text)
    }

    private func status(_ answer: String) -> Int? {
        Int(answer.split(separator: " ").dropFirst().first ?? "")
    }

    /// The purchases the customer has, through the API.
    private func purchases(_ emulator: EmulatorProcess, anyOf transactionId: String) async throws -> Int {
        try await emulator.client().transactionHistoryPage(anyTransactionId: transactionId).signedTransactions?.count
            ?? 0
    }

    @Test("a control request needs the printed token: none, a wrong one or two are 401, and change nothing")
    func controlToken() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        #expect(emulator.controlToken.count == 64)
        let hexadecimal = emulator.controlToken.allSatisfy(\.isHexDigit)
        #expect(hexadecimal)
        let first = try await emulator.purchase("coins.100")

        let host = "Host: 127.0.0.1:\(try #require(emulator.baseURL.port))"
        let json = "Content-Type: application/json"
        let buy = #"{"productId":"coins.100"}"#
        let line = "POST /emulator/v1/purchases HTTP/1.1"
        #expect(status(try raw(emulator, line, [host, json], body: buy)) == 401)
        #expect(status(try raw(emulator, line, [host, json, "X-Emulator-Control-Token: nope"], body: buy)) == 401)
        let twice = [
            host, json, "X-Emulator-Control-Token: \(emulator.controlToken)", "X-Emulator-Control-Token: other",
        ]
        #expect(status(try raw(emulator, line, twice, body: buy)) == 401)
        let unauthorizedGet = try raw(emulator, "GET /emulator/v1/notifications HTTP/1.1", [host])
        #expect(status(unauthorizedGet) == 401)
        #expect(!unauthorizedGet.contains("signedPayload"))
        #expect(try await purchases(emulator, anyOf: first.transactionId) == 1)

        let good = [host, json, "X-Emulator-Control-Token: \(emulator.controlToken)"]
        #expect(status(try raw(emulator, line, good, body: buy)) == 200)
        #expect(try await purchases(emulator, anyOf: first.transactionId) == 2)

        // --control-token sets it; nothing else is accepted.
        let chosen = "a-chosen-token-of-the-test-1234"
        let configured = try await EmulatorProcess.start(extraArguments: ["--control-token", chosen])
        defer { configured.stop() }
        #expect(configured.controlToken == chosen)
        #expect(try await configured.get("/emulator/v1/clock").status == 200)
        let short = try await CommandLineContractTests.iap([
            "emulate", "--port", "0", "--bundle-id", "com.example.app", "--issuer-id", "issuer", "--key-id", "KEY",
            "--auth-key", "AuthKey.p8", "--control-token", "short",
        ])
        #expect(short.status == 2)
        #expect(short.stderr.contains("--control-token"))
    }

    @Test("a page in a browser cannot drive the store: a foreign Origin is 403, text/plain is 415")
    func crossSiteRequests() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let first = try await emulator.purchase("coins.100")
        let port = try #require(emulator.baseURL.port)
        let host = "Host: 127.0.0.1:\(port)"
        let token = "X-Emulator-Control-Token: \(emulator.controlToken)"
        let line = "POST /emulator/v1/purchases HTTP/1.1"
        let buy = #"{"productId":"coins.100"}"#

        // What the attack was: a text/plain POST from a foreign page, without any token.
        let attack = try raw(
            emulator,
            line,
            [host, "Content-Type: text/plain", "Origin: http://evil.example"],
            body: buy
        )
        #expect(status(attack) == 403)
        #expect(status(try raw(emulator, line, [host, token, "Origin: http://evil.example"], body: buy)) == 403)
        #expect(status(try raw(emulator, line, [host, token, "Origin: null"], body: buy)) == 403)
        #expect(status(try raw(emulator, line, [host, token, "Content-Type: text/plain"], body: buy)) == 415)
        #expect(status(try raw(emulator, line, [host, token], body: buy)) == 415)
        let form = "Content-Type: application/x-www-form-urlencoded"
        #expect(status(try raw(emulator, line, [host, token, form], body: "productId=coins.100")) == 415)
        // The API refuses a foreign origin too, before its bearer token is looked at.
        let api = try raw(
            emulator,
            "GET /inApps/v1/transactions/\(first.transactionId) HTTP/1.1",
            [host, "Origin: http://evil.example"]
        )
        #expect(status(api) == 403)
        #expect(try await purchases(emulator, anyOf: first.transactionId) == 1)

        // The emulator's own origin, and JSON with a charset, are fine.
        let own = "Origin: \(emulator.baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")))"
        let charset = "Content-Type: application/json; charset=utf-8"
        #expect(status(try raw(emulator, line, [host, token, own, charset], body: buy)) == 200)
        #expect(try await purchases(emulator, anyOf: first.transactionId) == 2)
    }

    @Test("a rebound DNS name is 421, a missing Host 400; loopback names with the right port pass")
    func hostHeader() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let port = try #require(emulator.baseURL.port)
        let token = "X-Emulator-Control-Token: \(emulator.controlToken)"
        let clock = "GET /emulator/v1/clock HTTP/1.1"
        for host in ["evil.example", "evil.example:\(port)", "127.0.0.1:\(port + 1)", "localhost.evil.example"] {
            #expect(status(try raw(emulator, clock, ["Host: \(host)", token])) == 421, "Host: \(host)")
        }
        #expect(status(try raw(emulator, clock, [token])) == 400)
        #expect(status(try raw(emulator, clock, ["Host: 127.0.0.1", "Host: localhost", token])) == 400)
        for host in ["127.0.0.1", "127.0.0.1:\(port)", "localhost", "LOCALHOST:\(port)", "[::1]", "[::1]:\(port)"] {
            #expect(status(try raw(emulator, clock, ["Host: \(host)", token])) == 200, "Host: \(host)")
        }
        // A rebound name reads nothing from the API either.
        let api = try raw(emulator, "GET /inApps/v1/transactions/1 HTTP/1.1", ["Host: evil.example:\(port)"])
        #expect(status(api) == 421)
    }

    @Test("listening beyond loopback warns that the control plane is reachable; a wildcard bind takes IP hosts only")
    func warningOffLoopback() async throws {
        let emulator = try await EmulatorProcess.start(extraArguments: ["--host", "0.0.0.0"])
        defer { emulator.stop() }
        #expect(emulator.baseURL.host == "0.0.0.0")
        let port = try #require(emulator.baseURL.port)
        let token = "X-Emulator-Control-Token: \(emulator.controlToken)"
        let clock = "GET /emulator/v1/clock HTTP/1.1"
        #expect(status(try raw(emulator, clock, ["Host: 192.0.2.7:\(port)", token])) == 200)
        #expect(status(try raw(emulator, clock, ["Host: evil.example:\(port)", token])) == 421)
        let log = try emulator.standardError()
        #expect(log.contains("warning: --host 0.0.0.0 is not a loopback address"))
        #expect(log.contains("control plane"))
        #expect(!log.contains(emulator.controlToken))

        let loopback = try await EmulatorProcess.start()
        defer { loopback.stop() }
        _ = try await loopback.get("/emulator/v1/clock")
        #expect(!(try loopback.standardError()).contains("warning:"))
    }

    @Test("only changes that succeeded are journaled; a full journal refuses the next change before applying it")
    func journal() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(
            path: "iap-emulate-journal-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appending(path: "store")
        let key = try P256PrivateKey()
        let arguments = ["--data", data.path, "--journal-limit", "4096"]
        var bought: [String] = []
        do {
            let emulator = try await EmulatorProcess.start(extraArguments: arguments, key: key, directory: directory)
            defer { emulator.stop() }
            bought.append(try await emulator.purchase("coins.100").transactionId)
            #expect(try await emulator.post("/emulator/v1/purchases", json: #"{"productId":"nope"}"#).status == 400)
            let junk = #"{"productId":"coins.100","quantity":-1,"x":""# + String(repeating: "j", count: 2000) + #""}"#
            #expect(try await emulator.post("/emulator/v1/purchases", json: junk).status == 400)
            #expect(try await emulator.post("/emulator/v1/clock/advance", json: #"{"seconds":-5}"#).status == 400)
            let port = try #require(emulator.baseURL.port)
            _ = try RawConnection.exchange(
                port: port,
                "POST /emulator/v1/purchases HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 25\r\n\r\n{\"productId\":\"coins.100\"}"
            )

            let lines = try String(contentsOf: data.appending(path: "journal.jsonl"), encoding: .utf8)
                .split(separator: "\n")
            #expect(lines.count == 1)
            #expect(lines.allSatisfy { $0.contains(#""status":200"#) })

            // Fill the journal: the change that does not fit is refused 507, and not applied.
            var full: HTTPResponse?
            for _ in 0..<100 {
                let response = try await emulator.post("/emulator/v1/purchases", json: #"{"productId":"coins.100"}"#)
                if response.status != 200 {
                    full = response
                    break
                }
                bought.append(
                    try JSONDecoder().decode(EmulatorProcess.Purchase.self, from: response.body).transactionId
                )
            }
            let refused = try #require(full)
            #expect(refused.status == 507)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("journal is full"))
            let journalSize = try FileManager.default.attributesOfItem(
                atPath: data.appending(path: "journal.jsonl").path
            )[
                .size
            ]
            #expect((journalSize as? Int ?? 0) <= 4096)
            let history = try await emulator.client().transactionHistoryPage(anyTransactionId: bought[0])
            #expect(history.signedTransactions?.count == min(bought.count, 20))
            // Reading still works.
            #expect(try await emulator.get("/emulator/v1/clock").status == 200)
        }
        // The restart replays exactly what was answered 200.
        let restarted = try await EmulatorProcess.start(extraArguments: arguments, key: key, directory: directory)
        defer { restarted.stop() }
        let verifier = try await restarted.verifier()
        var listed: [String] = []
        for try await page in try restarted.client().transactionHistory(anyTransactionId: bought[0]) {
            listed += try (page.signedTransactions ?? []).map { try verifier.transaction($0).transactionId ?? "" }
        }
        #expect(listed == bought)
    }

    @Test("the data directory is 0700, its files 0600, and a symlink where a file belongs is refused")
    func privateFiles() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-emulate-files-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appending(path: "nested/store")
        let key = try P256PrivateKey()
        do {
            let emulator = try await EmulatorProcess.start(
                extraArguments: ["--data", data.path],
                key: key,
                directory: directory
            )
            defer { emulator.stop() }
            _ = try await emulator.purchase("premium")
        }
        func mode(_ url: URL) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int ?? -1) & 0o777
        }
        #expect(try mode(data) == 0o700)
        #expect(try mode(data.deletingLastPathComponent()) == 0o700)
        #expect(try mode(data.appending(path: "store.json")) == 0o600)
        #expect(try mode(data.appending(path: "journal.jsonl")) == 0o600)

        // A symlink in place of the journal: the emulator refuses to start, and the link's target is untouched.
        let victim = directory.appending(path: "victim.txt")
        try Data("precious\n".utf8).write(to: victim)
        try FileManager.default.removeItem(at: data.appending(path: "journal.jsonl"))
        try FileManager.default.createSymbolicLink(
            at: data.appending(path: "journal.jsonl"),
            withDestinationURL: victim
        )
        await #expect(throws: IAPError.self) {
            try await EmulatorProcess.start(extraArguments: ["--data", data.path], key: key, directory: directory)
        }
        #expect(try String(contentsOf: victim, encoding: .utf8) == "precious\n")

        // The same for the keys' file.
        let fresh = directory.appending(path: "fresh")
        try FileManager.default.createDirectory(at: fresh, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: fresh.appending(path: "store.json"), withDestinationURL: victim)
        await #expect(throws: IAPError.self) {
            try await EmulatorProcess.start(extraArguments: ["--data", fresh.path], key: key, directory: directory)
        }
        #expect(try String(contentsOf: victim, encoding: .utf8) == "precious\n")
    }

    @Test("64 slow clients do not starve the emulator; beyond --max-connections it answers 503 at once")
    func slowClients() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let port = try #require(emulator.baseURL.port)
        var slow: [RawConnection] = []
        for _ in 0..<64 {
            let connection = try RawConnection(port: port)
            connection.write("POST /emulator/v1/purchases HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 40\r\n\r\n{")
            slow.append(connection)
        }
        let served = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask { try await emulator.get("/emulator/v1/clock").status }
            }
            return try await group.reduce(into: 0) { $0 += $1 == 200 ? 1 : 0 }
        }
        #expect(served == 100)
        for connection in slow { connection.close() }

        let small = try await EmulatorProcess.start(extraArguments: ["--max-connections", "8"])
        defer { small.stop() }
        let smallPort = try #require(small.baseURL.port)
        var holders: [RawConnection] = []
        for _ in 0..<8 {
            holders.append(try RawConnection(port: smallPort))
        }
        // The holders are accepted before the next connection: the kernel's backlog hands them over in order.
        let started = ContinuousClock.now
        let busy = try await small.get("/emulator/v1/clock")
        #expect(busy.status == 503)
        #expect(busy.header("Retry-After") == "1")
        #expect(ContinuousClock.now - started < .seconds(4))
        for holder in holders { holder.close() }
        // Once the emulator has seen them close, it serves again.
        var status = 0
        for _ in 0..<100 where status != 200 {
            try await Task.sleep(for: .milliseconds(50))
            status = try await small.get("/emulator/v1/clock").status
        }
        #expect(status == 200)
    }
}
