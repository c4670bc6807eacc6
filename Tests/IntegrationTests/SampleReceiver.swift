import Foundation
import IAPCore

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
    private let process: Process

    /// Starts the sample on `port` with the grant secret file, and waits for its `listening on` line.
    init(_ language: Language, port: UInt16, secretFile: URL, walletFile: URL) throws {
        guard let interpreter = language.interpreter else {
            throw IAPError(.internalError, "\(language.rawValue) is not installed")
        }
        let process = Process()
        process.executableURL = interpreter
        process.arguments = [language.receiver.path]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "GRANT_SECRET_FILE": secretFile.path, "PORT": String(port), "WALLET_FILE": walletFile.path,
        ]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let lines = EmulatorProcess.lines(1, of: output.fileHandleForReading)
        guard lines.first == "listening on http://127.0.0.1:\(port)" else {
            process.terminate()
            process.waitUntilExit()
            throw IAPError(.internalError, "the \(language.rawValue) receiver did not start: \(lines)")
        }
        self.process = process
        self.walletFile = walletFile
        url = URL(string: "http://127.0.0.1:\(port)/iap/deliveries")!
    }

    /// Kills the receiver (SIGKILL: a child of the test runner may inherit SIGTERM blocked) and waits for it.
    func stop() {
        if process.isRunning {
            _ = kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
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
    static func derive(_ language: Language, userId: String, namespace: UUID) throws -> String {
        guard let interpreter = language.interpreter else {
            throw IAPError(.internalError, "\(language.rawValue) is not installed")
        }
        let process = Process()
        process.executableURL = interpreter
        process.arguments = [language.derivation.path, namespace.uuidString, userId]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
