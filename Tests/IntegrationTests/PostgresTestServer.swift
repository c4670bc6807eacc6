import Foundation
import IAPCore

/// The PostgreSQL server the tests run against: `IAP_TEST_POSTGRES_URL` (`Scripts/postgres-server.sh start`
/// prints one); without it, one the tests start themselves with that script (see `startedServer()`). When neither
/// is possible the suites are skipped, except under CI (`CI` set), where they fail.
enum PostgresTestServer {
    static let url =
        ProcessInfo.processInfo.environment["IAP_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
        ?? startedServer()

    static var isRequired: Bool {
        let ci = ProcessInfo.processInfo.environment["CI"] ?? ""
        return !ci.isEmpty && ci != "false" && ci != "0"
    }

    /// Starts a throw-away server with `Scripts/postgres-server.sh` on its own port when none is given and this is
    /// not CI, so that `swift test` covers PostgreSQL wherever the `postgresql` package is installed; a watcher
    /// stops the server when this test process ends. `nil` when the script cannot start one (the suites are
    /// skipped then), or when `IAP_TEST_POSTGRES_AUTOSTART=0`.
    static func startedServer() -> String? {
        let environment = ProcessInfo.processInfo.environment
        guard !isRequired, environment["IAP_TEST_POSTGRES_AUTOSTART"] != "0" else { return nil }
        let script = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Scripts/postgres-server.sh")
        guard FileManager.default.isExecutableFile(atPath: script.path) else { return nil }
        let process = Process()
        process.executableURL = script
        process.arguments = ["start", "--stop-after", String(ProcessInfo.processInfo.processIdentifier)]
        var childEnvironment = environment
        childEnvironment["IAP_POSTGRES_PORT"] = environment["IAP_POSTGRES_PORT"] ?? "54349"
        process.environment = childEnvironment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let url = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return process.terminationStatus == 0 && url.hasPrefix("postgres") ? url : nil
    }

    /// Whether the suites run: a server is given, or CI requires one (and the tests then fail without it).
    static let isConfigured = url != nil || isRequired

    static func requireURL() throws -> String {
        guard let url else {
            throw IAPError(
                .invalidConfiguration,
                "CI is set but IAP_TEST_POSTGRES_URL is not: the PostgreSQL tests need a server (Scripts/postgres-server.sh)"
            )
        }
        return url
    }

    /// A schema name no other test uses.
    static func freshSchema() -> String {
        "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }
}
