import Foundation
import IAPCore
import IAPTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// SIGTERM stops a server, every time, however soon it comes and however busy the process is: an embedded
/// `PurchaseServer.run()` awaited inside a `Task`, `iap serve` and `iap emulate`, each in a child process (a signal
/// handler belongs to the whole process: none is installed in the test process).
@Suite("SIGTERM stops every server")
struct SignalStopTests {
    static let rounds = 20
    static let limit = Duration.seconds(10)

    static func helper() throws -> URL {
        let iap = try EmulatorProcess.binary()
        let helper = iap.deletingLastPathComponent().appending(path: "SignalStopHelper")
        guard FileManager.default.isExecutableFile(atPath: helper.path) else {
            throw IAPError(.invalidConfiguration, "no SignalStopHelper next to \(iap.path); build the tests")
        }
        return helper
    }

    /// Starts the helper, waits for its first line, sends SIGTERM at once and waits for the end (at most `limit`).
    static func stopHelper(_ arguments: [String], ready: String, in directory: URL) async throws {
        let child = try ChildProcess(
            executable: try helper(),
            arguments: arguments,
            logFile: directory.appending(path: "helper.log")
        )
        defer { child.kill() }
        let first = await EmulatorProcess.lines(1, of: child.standardOutput)
        try #require(first.first?.hasPrefix(ready) == true, "\(arguments): \(first); \(child.diagnostics())")
        child.signal(SIGTERM)
        let ended = await child.exit(within: limit)
        #expect(ended, "\(arguments) did not stop within \(limit) of SIGTERM: \(child.diagnostics())")
        #expect(child.terminationStatus == 0 && !child.endedBySignal, "\(arguments): \(child.diagnostics())")
        let rest = String(decoding: child.standardOutput.readDataToEndOfFile(), as: UTF8.self)
        #expect(rest.contains("\(SIGTERM)"), "\(arguments) said \(rest)")
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-signals-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func shutdownSignalsReturnsSIGTERMEvenWhenItComesAtOnce() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for _ in 0..<Self.rounds {
            try await Self.stopHelper(["shutdown-signals"], ready: "ready", in: directory)
        }
    }

    @Test func anEmbeddedPurchaseServerRunInsideATaskStopsOnSIGTERM() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for round in 0..<Self.rounds {
            try await Self.stopHelper(
                ["purchase-server", directory.appending(path: "ledger-\(round)").path],
                ready: "listening on http://",
                in: directory
            )
        }
    }

    @Test func iapServeStopsOnSIGTERM() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let root = try await emulator.saveRootCertificate()
        let catalog = try emulator.saveCatalog().path
        for round in 0..<Self.rounds {
            let arguments =
                [
                    "--port", "0", "--data", emulator.directory.appending(path: "ledger-\(round)").path, "--catalog",
                    catalog, "--ledger-only",
                ] + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
            let server = try await ServeProcess.start(arguments, directory: emulator.directory)
            defer { server.kill() }
            server.signal(SIGTERM)
            #expect(await server.exit(within: Self.limit), "iap serve did not stop within \(Self.limit) of SIGTERM")
            #expect(server.terminationStatus == 0, "\((try? server.standardError()) ?? "")")
        }
    }

    @Test func iapEmulateStopsOnSIGTERM() async throws {
        for _ in 0..<Self.rounds {
            let emulator = try await EmulatorProcess.start()
            defer {
                emulator.stop()
                try? FileManager.default.removeItem(at: emulator.directory)
            }
            emulator.signal(SIGTERM)
            #expect(await emulator.exit(within: Self.limit), "iap emulate did not stop within \(Self.limit) of SIGTERM")
            #expect(emulator.terminationStatus == 0, "\((try? emulator.standardError()) ?? "")")
        }
    }
}
