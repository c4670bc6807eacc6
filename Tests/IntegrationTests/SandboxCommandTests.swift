#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCore
import IAPTestSupport
import IAPTransportURLSession
import Testing

/// `iap sandbox`: the emulator and the server wired together, from the outside.
@Suite("iap sandbox", .serialized)
struct SandboxCommandTests {
    /// A running `iap sandbox` and what it printed.
    struct Sandbox {
        let process: ChildProcess
        let lines: [String]
        let directory: URL

        func url(_ prefix: String) throws -> String {
            let line = try #require(lines.first { $0.hasPrefix(prefix + " on ") })
            return String(line.dropFirst(prefix.count + 4))
        }

        func secret(_ name: String) throws -> String {
            try String(contentsOf: directory.appending(path: name), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }

        static func start(_ directory: URL, _ extra: [String] = []) async throws -> Sandbox {
            let process = try ChildProcess(
                executable: try EmulatorProcess.binary(),
                arguments: ["sandbox", "--dir", directory.path] + extra,
                logFile: directory.deletingLastPathComponent().appending(path: "sandbox-\(UUID().uuidString).log")
            )
            // Twelve lines, two more with a console: the URLs, the files, the app, and how to stop.
            let count = extra.contains("--console-port") ? 14 : 12
            let lines = await EmulatorProcess.lines(count, of: process.standardOutput, timeout: .seconds(90))
            guard lines.first?.hasPrefix("emulator on ") == true, lines.last == "Ctrl-C stops both" else {
                process.stop(gracePeriod: .seconds(10))
                let log = (try? String(contentsOf: process.logFile, encoding: .utf8)) ?? ""
                throw IAPError(.internalError, "iap sandbox did not start: \(lines) \(log)")
            }
            return Sandbox(process: process, lines: lines, directory: directory)
        }
    }

    static func send(
        _ method: String,
        _ url: String,
        headers: [String: String] = [:],
        body: String? = nil
    ) async throws -> HTTPResponse {
        try await URLSessionTransport().send(
            HTTPRequest(
                method: method,
                url: try #require(URL(string: url)),
                headers: headers.merging(body == nil ? [:] : ["Content-Type": "application/json"]) { $1 },
                body: Data((body ?? "").utf8)
            )
        )
    }

    @Test("a purchase in the emulator reaches the server's ledger; Ctrl-C stops both; a restart keeps the ledger")
    func wiredTogether() async throws {
        let parent = FileManager.default.temporaryDirectory.appending(path: "sandbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appending(path: "state")
        let sandbox = try await Sandbox.start(directory, ["--console-port", "0", "--reconcile-every", "off"])
        var stopped = false
        defer {
            if !stopped { sandbox.process.stop() }
        }
        let emulator = try sandbox.url("emulator")
        let server = try sandbox.url("server")
        let console = try sandbox.url("console")
        let output = sandbox.lines.joined(separator: "\n")
        for name in ["emulator-control-token", "service-token", "user-jwt-secret", "console-password"] {
            let file = directory.appending(path: name)
            #expect(output.contains(file.path), "\(name) is named")
            #expect(!output.contains(try sandbox.secret(name)), "\(name)'s value is never printed")
            let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(name)")
        }

        // The user binds a token with the server, buys with it in the emulator: the notification delivers it.
        let service = ["Authorization": "Bearer \(try sandbox.secret("service-token"))"]
        let token = UUID().uuidString.lowercased()
        let bound = try await Self.send(
            "POST",
            server + "/iap/v1/users/alice/account-tokens",
            headers: service,
            body: #"{"appAccountToken": "\#(token)"}"#
        )
        #expect(bound.status == 201)
        let control = ["X-Emulator-Control-Token": try sandbox.secret("emulator-control-token")]
        let purchase = try await Self.send(
            "POST",
            emulator + "/emulator/v1/purchases",
            headers: control,
            body: #"{"productId": "plus.monthly", "account": "alice", "appAccountToken": "\#(token)"}"#
        )
        #expect(purchase.status == 200)
        var entitlements = ""
        for _ in 0..<100 where !entitlements.contains("plus.monthly") {
            try await Task.sleep(for: .milliseconds(100))
            let answer = try await Self.send("GET", server + "/iap/v1/users/alice/entitlements", headers: service)
            entitlements = String(decoding: answer.body, as: UTF8.self)
        }
        #expect(entitlements.contains("plus.monthly"), "\(entitlements)")
        #expect(try await Self.send("GET", console + "/console/sign-in").status == 200)

        sandbox.process.signal(SIGINT)
        #expect(await sandbox.process.exit(within: .seconds(30)))
        stopped = true
        #expect(sandbox.process.terminationStatus == 0)
        await #expect(throws: (any Error).self) { _ = try await Self.send("GET", server + "/healthz") }
        await #expect(throws: (any Error).self) { _ = try await Self.send("GET", emulator + "/emulator/v1/clock") }

        // The same directory again: the same secrets, the ledger and the store as they were.
        let again = try await Sandbox.start(directory, ["--reconcile-every", "off"])
        defer { again.process.stop() }
        let answer = try await Self.send(
            "GET",
            try again.url("server") + "/iap/v1/users/alice/entitlements",
            headers: service
        )
        #expect(String(decoding: answer.body, as: UTF8.self).contains("plus.monthly"))
    }

    @Test("a bad option is a usage error, and a server that cannot start stops the emulator")
    func refusals() async throws {
        let parent = FileManager.default.temporaryDirectory.appending(path: "sandbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: parent) }
        let usage = try ChildProcess(
            executable: try EmulatorProcess.binary(),
            arguments: ["sandbox", "--dir", parent.path, "--plans", "x.json"],
            logFile: parent.appending(path: "usage.log")
        )
        #expect(await usage.exit(within: .seconds(30)))
        #expect(usage.terminationStatus == 2)

        let failing = try ChildProcess(
            executable: try EmulatorProcess.binary(),
            arguments: ["sandbox", "--dir", parent.appending(path: "state").path, "--reconcile-every", "soon"],
            logFile: parent.appending(path: "failing.log")
        )
        #expect(await failing.exit(within: .seconds(60)))
        #expect(failing.terminationStatus == 1)
        let log = try String(contentsOf: failing.logFile, encoding: .utf8)
        #expect(log.contains("iap serve did not start"), "\(log)")
        // Nothing of the emulator is left running: its port would still answer.
        let emulatorLog = try String(
            contentsOf: parent.appending(path: "state/emulator.log"),
            encoding: .utf8
        )
        #expect(emulatorLog.contains("stopping"), "\(emulatorLog)")
    }

    @Test("two apps: an emulator each, one server; each purchase is its app's")
    func twoApps() async throws {
        let parent = FileManager.default.temporaryDirectory.appending(path: "sandbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appending(path: "state with space")
        let process = try ChildProcess(
            executable: try EmulatorProcess.binary(),
            arguments: [
                "sandbox", "--dir", directory.path, "--reconcile-every", "off", "--bundle-id", "com.example.app",
                "--bundle-id", "com.example.pro",
            ],
            logFile: parent.appending(path: "sandbox.log")
        )
        defer { process.stop() }
        let lines = await EmulatorProcess.lines(14, of: process.standardOutput, timeout: .seconds(90))
        try #require(lines.last == "Ctrl-C stops them all", "\(lines)")
        let sandbox = Sandbox(process: process, lines: lines, directory: directory)
        let first = try sandbox.url("emulator")
        let second = try sandbox.url("emulator of com.example.pro")
        let server = try sandbox.url("server")
        #expect(lines.contains("bundle ids com.example.app, com.example.pro, environment Production, ledger only"))

        let service = ["Authorization": "Bearer \(try sandbox.secret("service-token"))"]
        let token = UUID().uuidString.lowercased()
        let bound = try await Self.send(
            "POST",
            server + "/iap/v1/users/alice/account-tokens",
            headers: service,
            body: #"{"appAccountToken": "\#(token)"}"#
        )
        #expect(bound.status == 201)
        for (emulator, secret) in [
            (first, "emulator-control-token"), (second, "emulator-control-token-com.example.pro"),
        ] {
            let bought = try await Self.send(
                "POST",
                emulator + "/emulator/v1/purchases",
                headers: ["X-Emulator-Control-Token": try sandbox.secret(secret)],
                body: #"{"productId": "plus.monthly", "account": "alice", "appAccountToken": "\#(token)"}"#
            )
            #expect(bought.status == 200, "\(String(decoding: bought.body, as: UTF8.self))")
        }
        // Each app's notification delivers its own purchase: the entitlements of each app list it.
        for app in ["com.example.app", "com.example.pro"] {
            var entitlements = ""
            for _ in 0..<100 where !entitlements.contains("plus.monthly") {
                try await Task.sleep(for: .milliseconds(100))
                let answer = try await Self.send(
                    "GET",
                    server + "/iap/v1/users/alice/entitlements?bundleId=\(app)",
                    headers: service
                )
                entitlements = String(decoding: answer.body, as: UTF8.self)
            }
            #expect(entitlements.contains("plus.monthly"), "\(app): \(entitlements)")
        }
        let history = try await Self.send(
            "GET",
            server + "/iap/v1/users/alice/history?bundleId=com.example.pro",
            headers: service
        )
        let items = try #require(try JSONSerialization.jsonObject(with: history.body) as? [String: Any])["items"]
        #expect((items as? [[String: Any]])?.first?["transactionId"] as? String == "2001000000000001")
        process.signal(SIGINT)
        #expect(await process.exit(within: .seconds(30)))
        #expect(process.terminationStatus == 0)
    }
}
