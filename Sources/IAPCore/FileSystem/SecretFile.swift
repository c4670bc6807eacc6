#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A secret read from a file (a webhook's signing secret, the user tokens' secret, a service token) or from an
/// environment variable, with the rules `iap serve` applies, for every program that embeds swift-iap.
///
/// - The file must be private: a regular file its group or others may open (any bit of mode `0077`) is refused, with
///   the `chmod 600` that fixes it.
/// - One trailing newline (`\n` or `\r\n`) is not part of the secret, so that `openssl rand -hex 32 > FILE`,
///   `echo SECRET > FILE` and an editor's final newline do not change it; nothing else is trimmed.
/// - An empty secret, or a file over 1 MiB, is refused.
/// - A secret is never printed: every message names the file or the variable, and at most the secret's length.
///
/// ```swift
/// let grantSecret = try SecretFile.read(URL(filePath: "/etc/iap/grant.secret"))
/// ```
public enum SecretFile {
    /// The largest secret file read.
    public static let maximumSize = 1 << 20

    /// Reads a secret file: its bytes without one trailing newline.
    ///
    /// - Parameter file: The file.
    /// - Returns: The secret's bytes.
    /// - Throws: ``IAPError`` `invalidConfiguration` when the file cannot be read, is open to its group or others,
    ///   is larger than 1 MiB, or holds no secret.
    public static func read(_ file: URL) throws(IAPError) -> [UInt8] {
        try read(atPath: file.path, describedAs: "the secret file")
    }

    /// Reads a secret file: its bytes without one trailing newline.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - name: What the file is, for messages (`--grant-secret-file`, "the grant secret file").
    /// - Returns: The secret's bytes.
    /// - Throws: ``IAPError`` `invalidConfiguration` when the file cannot be read, is open to its group or others,
    ///   is larger than 1 MiB, or holds no secret.
    public static func read(atPath path: String, describedAs name: String) throws(IAPError) -> [UInt8] {
        let secret = trimmed(try contents(atPath: path, describedAs: name))
        guard !secret.isEmpty else {
            throw IAPError(.invalidConfiguration, "\(name) \(path) is empty")
        }
        return secret
    }

    /// The bytes of a private file, as they are (a private key in PEM, a password file).
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - name: What the file is, for messages.
    /// - Returns: Its bytes.
    /// - Throws: ``IAPError`` `invalidConfiguration` when it cannot be read, is a regular file open to its group or
    ///   others, or is larger than 1 MiB.
    public static func contents(atPath path: String, describedAs name: String) throws(IAPError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw IAPError(.invalidConfiguration, "cannot read \(name) \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw IAPError(.invalidConfiguration, "cannot read \(name) \(path): \(String(cString: strerror(errno)))")
        }
        let mode = status.st_mode
        if mode & S_IFMT == S_IFREG, mode & 0o077 != 0 {
            throw IAPError(
                .invalidConfiguration,
                "\(name) \(path) holds a secret but its group or others may open it (mode "
                    + "\(String(mode & 0o777, radix: 8))): run chmod 600 \(path)"
            )
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { buffer in
                #if canImport(Glibc)
                    Glibc.read(descriptor, buffer.baseAddress, buffer.count)
                #elseif canImport(Musl)
                    Musl.read(descriptor, buffer.baseAddress, buffer.count)
                #else
                    Darwin.read(descriptor, buffer.baseAddress, buffer.count)
                #endif
            }
            if count < 0, errno == EINTR {
                continue
            }
            guard count >= 0 else {
                throw IAPError(
                    .invalidConfiguration,
                    "cannot read \(name) \(path): \(String(cString: strerror(errno)))"
                )
            }
            guard count > 0 else { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= maximumSize else {
                throw IAPError(.invalidConfiguration, "\(name) \(path) is larger than 1 MiB: it is not a secret file")
            }
        }
    }

    /// The secret in an environment variable, without one trailing newline, or `nil` when it is not set.
    ///
    /// - Parameter name: The variable.
    /// - Returns: Its bytes.
    /// - Throws: ``IAPError`` `invalidConfiguration` when it is set but empty.
    public static func environment(_ name: String) throws(IAPError) -> [UInt8]? {
        guard let value = ProcessInfo.processInfo.environment[name] else { return nil }
        let secret = trimmed(Array(value.utf8))
        guard !secret.isEmpty else {
            throw IAPError(.invalidConfiguration, "the environment variable \(name) is set but empty")
        }
        return secret
    }

    /// A password file's password: its first line, without its `\n` or `\r\n`.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - name: What the file is, for messages.
    /// - Returns: The password.
    /// - Throws: ``IAPError`` `invalidConfiguration` when the file cannot be read, is open to its group or others,
    ///   or holds no password on its first line.
    public static func password(atPath path: String, describedAs name: String) throws(IAPError) -> String {
        let bytes = try contents(atPath: path, describedAs: name)
        let firstLine = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).first ?? []
        let line = firstLine.last == UInt8(ascii: "\r") ? firstLine.dropLast() : firstLine
        guard !line.isEmpty, let password = String(bytes: line, encoding: .utf8) else {
            throw IAPError(.invalidConfiguration, "the password file \(path) holds no password on its first line")
        }
        return password
    }

    /// The bytes without one trailing `\n` or `\r\n`.
    ///
    /// - Parameter bytes: What a file or a variable holds.
    /// - Returns: The secret.
    public static func trimmed(_ bytes: [UInt8]) -> [UInt8] {
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
