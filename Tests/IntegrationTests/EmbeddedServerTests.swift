import Foundation
import IAPCore
import IAPServerAPI
import IAPTestSupport
import IAPTransportURLSession
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The program of Documentation/Server.md, as an embedder writes it (`SignalStopHelper documented`): secrets made as
/// README makes them, a purchase signed by `iap testdata`, delivered once, a stop on SIGTERM; a secret file others may
/// read, or one too short, stops it at start with the `IAPError` that says so and no ledger file created.
@Suite("The embedded server of Server.md")
struct EmbeddedServerTests {
    /// A configuration directory as README has it: the test root and catalog of `iap testdata`, the secrets as
    /// `openssl rand -hex 32 > FILE` writes them (64 hex digits and a newline), mode 0600.
    struct Setup {
        let directory: URL
        let config: URL
        let ledger: URL
        let userSecret: String
        let signedTransaction: String

        init(userSecret: String? = nil, userSecretMode: Int = 0o600) async throws {
            directory = FileManager.default.temporaryDirectory.appending(path: "iap-embedded-\(UUID().uuidString)")
            config = directory.appending(path: "config")
            ledger = directory.appending(path: "ledger")
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            let made = try await ChildProcess.run(
                try EmulatorProcess.binary(),
                [
                    "testdata", "transactions", "--count", "1", "--root-out", config.appending(path: "root.der").path,
                    "--catalog-out", config.appending(path: "catalog.json").path,
                ],
                timeout: .seconds(120)
            )
            try #require(made.status == 0, "\(String(decoding: made.standardError, as: UTF8.self))")
            signedTransaction = String(decoding: made.standardOutput, as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            self.userSecret = userSecret ?? Self.randomHex(32)
            try Self.write(self.userSecret + "\n", to: config.appending(path: "user-jwt.secret"), mode: userSecretMode)
            try Self.write(Self.randomHex(32) + "\n", to: config.appending(path: "service.token"), mode: 0o600)
        }

        static func randomHex(_ count: Int) -> String {
            (0..<count).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        }

        static func write(_ text: String, to file: URL, mode: Int) throws {
            try Data(text.utf8).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
        }

        func start() throws -> ChildProcess {
            try ChildProcess(
                executable: try SignalStopTests.helper(),
                arguments: ["documented", config.path, ledger.path],
                logFile: directory.appending(path: "helper.log")
            )
        }

        /// What the helper wrote on standard error.
        var log: String {
            (try? String(contentsOf: directory.appending(path: "helper.log"), encoding: .utf8)) ?? ""
        }

        /// The files of the ledger directory (none when it was never created).
        var ledgerFiles: [String] {
            (try? FileManager.default.contentsOfDirectory(atPath: ledger.path)) ?? []
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func submit(_ setup: Setup, to origin: String) async throws -> (Int, String) {
        let url = try #require(URL(string: origin + "/iap/v1/transactions"))
        let token = try ServeProcess.userToken("alice", secret: setup.userSecret)
        let answer = try await URLSessionTransport().send(
            HTTPRequest(
                method: "POST",
                url: url,
                headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"],
                body: Data(#"{"signedTransaction":"\#(setup.signedTransaction)"}"#.utf8),
                timeout: .seconds(60)
            )
        )
        return (answer.status, String(decoding: answer.body, as: UTF8.self))
    }

    @Test func theDocumentedProgramDeliversAPurchaseOnceAndStopsOnSIGTERM() async throws {
        let setup = try await Setup()
        defer { setup.remove() }
        let child = try setup.start()
        defer { child.kill() }
        let first = await EmulatorProcess.lines(1, of: child.standardOutput)
        let line = try #require(first.first, "no line: \(child.diagnostics())")
        try #require(line.hasPrefix("listening on http://127.0.0.1:"), "\(line); \(child.diagnostics())")
        let origin = String(line.dropFirst("listening on ".count))
        #expect(!origin.hasSuffix(":0"))

        let (status, body) = try await Self.submit(setup, to: origin)
        #expect(status == 200, "\(body)")
        #expect(body.contains(#""outcome":"delivered""#), "\(body)")
        let (again, repeated) = try await Self.submit(setup, to: origin)
        #expect(again == 200, "\(repeated)")
        #expect(repeated.contains(#""outcome":"alreadyDelivered""#), "\(repeated)")
        #expect(setup.log.contains(#""event":"server.started""#) && setup.log.contains(origin), "\(setup.log)")

        child.signal(SIGTERM)
        #expect(await child.exit(within: .seconds(10)), "no stop within 10 s of SIGTERM: \(child.diagnostics())")
        #expect(child.terminationStatus == 0 && !child.endedBySignal, "\(child.diagnostics())")
        let rest = String(decoding: child.standardOutput.readDataToEndOfFile(), as: UTF8.self)
        #expect(rest.contains("stopped by \(SIGTERM)"), "\(rest)")
    }

    @Test(arguments: [
        ("a secret file its group and others may read", nil as String?, 0o644, "invalidConfiguration: ", "chmod 600"),
        ("a secret of 10 bytes", "0123456789", 0o600, "invalidKey: ", "at least 16 bytes"),
    ])
    func aRefusedSecretStopsTheProgramAtStartWithoutALedgerFile(
        _ situation: String,
        secret: String?,
        mode: Int,
        code: String,
        said: String
    ) async throws {
        let setup = try await Setup(userSecret: secret, userSecretMode: mode)
        defer { setup.remove() }
        let child = try setup.start()
        defer { child.kill() }
        #expect(await child.exit(within: .seconds(30)), "\(situation): still running: \(child.diagnostics())")
        #expect(child.terminationStatus == 1, "\(situation): \(child.diagnostics())")
        #expect(setup.log.contains(code) && setup.log.contains(said), "\(situation): \(setup.log)")
        #expect(!setup.log.contains(setup.userSecret), "\(situation): the secret was printed")
        #expect(setup.ledgerFiles.isEmpty, "\(situation): the ledger directory holds \(setup.ledgerFiles)")
    }
}
