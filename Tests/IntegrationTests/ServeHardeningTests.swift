import Foundation
import IAPCore
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `iap serve` against one greedy client, and the secrets and files it is given.
@Suite("iap serve: per-address connections, private files, strict options")
struct ServeHardeningTests {
    typealias CLI = CommandLineContractTests

    static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-serve-hard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The options of a ledger-only server in `directory`, without its secret files.
    static func options(_ directory: URL) -> [String] {
        [
            "--port", "0", "--data", directory.appending(path: "ledger").path, "--bundle-id", "com.example.app",
            "--environment", "Sandbox", "--ledger-only",
        ]
    }

    /// `GET path` from `source` on a connection of its own, and what came back before the server closed it.
    static func get(_ path: String, _ server: ServeProcess, from source: String = "127.0.0.1") throws -> String {
        try server.raw(
            Array("GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
            from: source,
            halfClose: false
        )
    }

    static func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    @Test func manySlowConnectionsFromOneAddressLeaveOtherClientsAndHealthzServed() async throws {
        let directory = try Self.directory()
        let server = try await ServeProcess.start(Self.options(directory), directory: directory)
        defer { server.stop() }
        // 40 slow clients from 127.0.0.1, each in the middle of its head: past the default of 32 per address.
        var slow: [Int32] = []
        defer {
            for fd in slow { close(fd) }
        }
        for _ in 0..<40 {
            let fd = try server.connection(from: "127.0.0.1")
            Self.send(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
            slow.append(fd)
        }
        // One more from that address is closed unanswered; the held ones keep their connections (a header line
        // before each check keeps them from the 10 s idle timeout).
        let keepAlive = { for fd in slow { Self.send(fd, "X-Slow: 1\r\n") } }
        keepAlive()
        #expect(try await eventually { try Self.get("/healthz", server).isEmpty })
        // Other addresses are served: /healthz, and the metrics.
        keepAlive()
        let health = try Self.get("/healthz", server, from: "127.0.0.2")
        #expect(health.hasPrefix("HTTP/1.1 200"), "\(health)")
        keepAlive()
        let metrics = try Self.get("/metrics", server, from: "127.0.0.3")
        #expect(metrics.hasPrefix("HTTP/1.1 200"))
        // The held connections are still open, and answered once their heads end.
        Self.send(slow[0], "\r\n")
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { recv(slow[0], $0.baseAddress, $0.count, 0) }
        #expect(count > 0 && String(decoding: buffer[..<max(0, count)], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    }

    @Test func theLimitPerAddressIsAnOptionAndAConfigurationKey() async throws {
        let directory = try Self.directory()
        let zero = try await CLI.iap(["serve"] + Self.options(directory) + ["--max-connections-per-address", "0"])
        #expect(zero.status == 2)
        #expect(zero.stderr.contains("--max-connections-per-address must be 1...256"))

        let config = directory.appending(path: "serve.json")
        try Data(#"{"max-connections-per-address": 2}"#.utf8).write(to: config)
        let server = try await ServeProcess.start(
            Self.options(directory) + ["--config", config.path],
            directory: directory
        )
        defer { server.stop() }
        let held = [try server.connection(), try server.connection()]
        defer {
            for fd in held { close(fd) }
        }
        for fd in held { Self.send(fd, "GET /healthz HTTP/1.1\r\n") }
        #expect(try await eventually { try Self.get("/healthz", server).isEmpty })
        let other = try Self.get("/healthz", server, from: "127.0.0.2")
        #expect(other.hasPrefix("HTTP/1.1 200"))
    }

    @Test func secretFilesOthersCanReadAreRefusedNamingTheChmodThatFixesThem() async throws {
        let directory = try Self.directory()
        let secret = "a-secret-of-enough-length-0123456789"
        func file(_ name: String, mode: Int, _ text: String = "a-secret-of-enough-length-0123456789\n") throws -> String
        {
            let path = directory.appending(path: name).path
            try Data(text.utf8).write(to: URL(filePath: path))
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            return path
        }
        let user = try file("user.secret", mode: 0o600)
        let token = try file("service.token", mode: 0o600)
        let secrets = ["--user-jwt-secret-file", user, "--service-token-file", token]
        let api = ["--issuer-id", "ISSUER", "--key-id", "KEY"]
        let grant = ["--grant-url", "http://127.0.0.1:9/iap"]
        let base = Self.options(directory).filter { $0 != "--ledger-only" }
        let cases: [(option: String, mode: Int, arguments: (String) -> [String])] = [
            (
                "--user-jwt-secret-file", 0o644,
                { ["--ledger-only", "--user-jwt-secret-file", $0, "--service-token-file", token] }
            ),
            (
                "--service-token-file", 0o640,
                { ["--ledger-only", "--user-jwt-secret-file", user, "--service-token-file", $0] }
            ),
            ("--grant-secret-file", 0o604, { grant + ["--grant-secret-file", $0] + secrets }),
            ("--auth-key", 0o644, { ["--ledger-only", "--auth-key", $0] + api + secrets }),
            (
                "--database-password-file", 0o660,
                {
                    ["--ledger-only", "--database", "postgres://127.0.0.1:9/x", "--database-password-file", $0]
                        + secrets
                }
            ),
        ]
        for item in cases {
            let path = try file("open-\(String(item.option.dropFirst(2)))", mode: item.mode)
            var arguments = ["serve"] + base + item.arguments(path)
            if item.option == "--database-password-file" {
                arguments = arguments.filter { $0 != "--data" && $0 != directory.appending(path: "ledger").path }
            }
            let run = try await CLI.iap(arguments)
            #expect(run.status == 2, "\(item.option): \(run.stderr)")
            #expect(run.stderr.contains("chmod 600 \(path)"), "\(item.option): \(run.stderr)")
            #expect(!run.stderr.contains(secret) && !run.stdout.contains("listening"))
        }
    }

    @Test func aPasswordInTheGrantURLIsRefusedWithoutBeingShown() async throws {
        let directory = try Self.directory()
        let grant = try ServeProcess.grantOptions(
            try #require(URL(string: "https://wallet:hunter2-pass@wallet.example/iap")),
            directory: directory
        )
        let run = try await CLI.iap(["serve"] + Self.options(directory).filter { $0 != "--ledger-only" } + grant)
        #expect(run.status == 2)
        #expect(run.stderr.contains("--grant-url must not hold a user or password"))
        #expect(run.stderr.contains("--grant-secret-file"))
        #expect(!run.stderr.contains("hunter2-pass"))
    }

    @Test func anExistingEventsFileIsNarrowedAndTheTokenLifetimeIsKept() async throws {
        let directory = try Self.directory()
        let events = directory.appending(path: "events.jsonl")
        try Data().write(to: events)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: events.path)
        let user = directory.appending(path: "user.secret")
        let token = directory.appending(path: "service.token")
        try ServeProcess.writePrivate(ServeProcess.userSecret, to: user)
        try ServeProcess.writePrivate(ServeProcess.serviceToken, to: token)
        let bad = try await CLI.iap(
            ["serve"] + Self.options(directory) + [
                "--user-jwt-secret-file", user.path, "--service-token-file", token.path, "--user-jwt-max-lifetime",
                "1week",
            ]
        )
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--user-jwt-max-lifetime takes a duration"))

        let server = try await ServeProcess.start(
            Self.options(directory) + ["--events", events.path, "--user-jwt-max-lifetime", "90m"],
            directory: directory
        )
        defer { server.stop() }
        let mode = try FileManager.default.attributesOfItem(atPath: events.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let body = #"{"signedTransaction":"x.y.z"}"#
        let now = Int(SystemClock().now.timeIntervalSince1970)
        let inTime = try await server.send(
            "POST",
            "/iap/v1/transactions",
            bearer: try ServeProcess.userToken("alice", expiresIn: 3_600),
            body: body
        )
        #expect(inTime.status == 400)
        for claims in [
            #"{"sub":"alice","exp":\#(now + 7_200)}"#, #"{"sub":"alice","exp":1e308}"#,
            #"{"sub":"alice","iat":\#(now - 7_200),"exp":\#(now + 60)}"#,
            #"{"sub":"alice","exp":\#(now + 60),"sub":"bob"}"#,
        ] {
            let response = try await server.send(
                "POST",
                "/iap/v1/transactions",
                bearer: try ServeProcess.userToken("alice", claims: claims),
                body: body
            )
            #expect(response.status == 401, "\(claims)")
        }
    }
}
