import Foundation

/// A secret a command reads from a file (`--grant-secret-file`, `--user-jwt-secret-file`, `--service-token-file`) or,
/// for `iap serve`, from an environment variable: the bytes without one trailing newline (`\n` or `\r\n`), so that
/// `echo SECRET > file` and an editor's final newline do not change the secret. A secret is never printed: messages
/// name the file or the variable, and at most the secret's length.
enum SecretFile {
    /// Reads a secret file.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - option: The option that named it, for messages (`--grant-secret-file`).
    /// - Returns: The secret's bytes.
    /// - Throws: A usage error when the file cannot be read or is empty.
    static func read(_ path: String, option: String) throws(Arguments.UsageError) -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw .init(message: "cannot read \(option) \(path): \(error.localizedDescription)")
        }
        let secret = trimmed(bytes)
        guard !secret.isEmpty else {
            throw .init(message: "\(option) \(path) is empty")
        }
        return secret
    }

    /// The secret in an environment variable, or `nil` when it is not set.
    ///
    /// - Parameter name: The variable.
    /// - Returns: Its bytes without a trailing newline.
    /// - Throws: A usage error when it is set but empty.
    static func environment(_ name: String) throws(Arguments.UsageError) -> [UInt8]? {
        guard let value = ProcessInfo.processInfo.environment[name] else { return nil }
        let secret = trimmed(Array(value.utf8))
        guard !secret.isEmpty else {
            throw .init(message: "the environment variable \(name) is set but empty")
        }
        return secret
    }

    /// The bytes without one trailing `\n` or `\r\n`.
    static func trimmed(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        if bytes.last == UInt8(ascii: "\n") {
            bytes.removeLast()
            if bytes.last == UInt8(ascii: "\r") {
                bytes.removeLast()
            }
        }
        return bytes
    }
}
