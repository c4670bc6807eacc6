import Foundation
import IAPCore
import IAPTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A sample webhook receiver of `Documentation/Receivers` (Python or Node) as a child process on a loopback port, its
/// wallet in a JSON file the test reads.
///
/// Call ``stop()`` in a `defer`: a test must never leave a receiver running.
final class SampleReceiver: Sendable {
    /// A language the samples are written in.
    enum Language: String, Sendable {
        case python = "python3"
        case node = "node"

        /// The sample's file.
        var receiver: URL {
            SampleReceiver.directory.appending(path: self == .python ? "webhook_receiver.py" : "webhook-receiver.js")
        }

        /// The file of the appAccountToken derivation.
        var derivation: URL {
            SampleReceiver.directory.appending(path: self == .python ? "app_account_token.py" : "app-account-token.js")
        }

        /// The interpreter, when it is installed.
        var interpreter: URL? {
            let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            return paths.map { URL(filePath: String($0)).appending(path: rawValue) }
                .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        }
    }

    /// `Documentation/Receivers` of this checkout.
    static let directory = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Documentation/Receivers")

    let url: URL
    let walletFile: URL
    private let process: ChildProcess

    /// Starts the sample on `port` with the grant secret file, and waits for its `listening on` line.
    init(_ language: Language, port: UInt16, secretFile: URL, walletFile: URL) async throws {
        guard let interpreter = language.interpreter else {
            throw IAPError(.internalError, "\(language.rawValue) is not installed")
        }
        let logFile = walletFile.deletingLastPathComponent().appending(path: "receiver-\(UUID().uuidString).log")
        let process = try ChildProcess(
            executable: interpreter,
            arguments: [language.receiver.path],
            logFile: logFile,
            environment: ProcessInfo.processInfo.environment.merging([
                "GRANT_SECRET_FILE": secretFile.path, "PORT": String(port), "WALLET_FILE": walletFile.path,
            ]) { $1 }
        )
        let lines = await EmulatorProcess.lines(1, of: process.standardOutput)
        guard lines.first == "listening on http://127.0.0.1:\(port)" else {
            process.kill()
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            throw IAPError(.internalError, "the \(language.rawValue) receiver did not start: \(lines); \(log)")
        }
        self.process = process
        self.walletFile = walletFile
        url = URL(string: "http://127.0.0.1:\(port)/iap/deliveries")!
    }

    /// Kills the receiver (it keeps nothing worth a graceful stop) and waits for it.
    func stop(sourceLocation: SourceLocation = #_sourceLocation) {
        process.kill(sourceLocation: sourceLocation)
    }

    /// The wallet as the receiver saved it: `applied` (key to type), `cancelled` (grant keys), `balances` (user to
    /// product to units).
    func wallet() throws -> [String: Any] {
        guard FileManager.default.fileExists(atPath: walletFile.path) else { return [:] }
        return try JSONSerialization.jsonObject(with: Data(contentsOf: walletFile)) as? [String: Any] ?? [:]
    }

    /// A user's units of a product in the wallet (0 when none).
    func balance(_ user: String, _ product: String) throws -> Int {
        ((try wallet()["balances"] as? [String: Any])?[user] as? [String: Any])?[product] as? Int ?? 0
    }

    /// Runs the sample's derivation of the appAccountToken of `userId` in `namespace`.
    static func derive(_ language: Language, userId: String, namespace: UUID) async throws -> String {
        guard let interpreter = language.interpreter else {
            throw IAPError(.internalError, "\(language.rawValue) is not installed")
        }
        let run = try await ChildProcess.run(interpreter, [language.derivation.path, namespace.uuidString, userId])
        return String(decoding: run.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
