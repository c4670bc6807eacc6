#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation

/// A secret a command reads from a file (`--grant-secret-file`, `--user-jwt-secret-file`, `--service-token-file`) or,
/// for `iap serve`, from an environment variable: the bytes without one trailing newline (`\n` or `\r\n`), so that
/// `echo SECRET > file` and an editor's final newline do not change the secret. A secret is never printed: messages
/// name the file or the variable, and at most the secret's length.
///
/// A secret file must be private: a regular file that its group or others may read or write (any of mode `0077`) is
/// refused with the `chmod 600` that fixes it; so are the password file (`--database-password-file`) and the API key
/// (`--auth-key`), read through ``contents(_:option:)``.
public enum SecretFile {
    /// The bytes of a private file.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - option: The option that named it, for messages (`--auth-key`).
    /// - Returns: Its bytes, as they are.
    /// - Throws: A usage error when it cannot be read, or when it is a regular file open to its group or others.
    public static func contents(_ path: String, option: String) throws(Arguments.UsageError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .init(message: "cannot read \(option) \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw .init(message: "cannot read \(option) \(path): \(String(cString: strerror(errno)))")
        }
        let mode = status.st_mode
        if mode & S_IFMT == S_IFREG, mode & 0o077 != 0 {
            throw .init(
                message: "\(option) \(path) holds a secret but its group or others may open it (mode "
                    + "\(String(mode & 0o777, radix: 8))): run chmod 600 \(path)"
            )
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { buffer in
                #if canImport(Glibc)
                    Glibc.read(descriptor, buffer.baseAddress, buffer.count)
                #else
                    Darwin.read(descriptor, buffer.baseAddress, buffer.count)
                #endif
            }
            if count < 0, errno == EINTR {
                continue
            }
            guard count >= 0 else {
                throw .init(message: "cannot read \(option) \(path): \(String(cString: strerror(errno)))")
            }
            guard count > 0 else { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= 1 << 20 else {
                throw .init(message: "\(option) \(path) is larger than 1 MiB: it is not a secret file")
            }
        }
    }

    /// Reads a secret file.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - option: The option that named it, for messages (`--grant-secret-file`).
    /// - Returns: The secret's bytes.
    /// - Throws: A usage error when the file cannot be read, is open to its group or others, or is empty.
    public static func read(_ path: String, option: String) throws(Arguments.UsageError) -> [UInt8] {
        let secret = trimmed(try contents(path, option: option))
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
    public static func environment(_ name: String) throws(Arguments.UsageError) -> [UInt8]? {
        guard let value = ProcessInfo.processInfo.environment[name] else { return nil }
        let secret = trimmed(Array(value.utf8))
        guard !secret.isEmpty else {
            throw .init(message: "the environment variable \(name) is set but empty")
        }
        return secret
    }

    /// A password file's password: its first line, without its `\n` or `\r\n` (`--database-password-file`).
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - option: The option that named it, for messages.
    /// - Returns: The password.
    /// - Throws: A usage error when the file cannot be read, is open to its group or others, or holds no password on
    ///   its first line.
    public static func password(_ path: String, option: String) throws(Arguments.UsageError) -> String {
        let bytes = try contents(path, option: option)
        let firstLine = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).first ?? []
        let line = firstLine.last == UInt8(ascii: "\r") ? firstLine.dropLast() : firstLine
        guard !line.isEmpty, let password = String(bytes: line, encoding: .utf8) else {
            throw .init(message: "the password file \(path) holds no password on its first line")
        }
        return password
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
