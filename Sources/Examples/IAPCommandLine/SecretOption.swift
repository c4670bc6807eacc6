import IAPCore

/// A secret a command reads from a file (`--grant-secret-file`, `--user-jwt-secret-file`, `--service-token-file`) or,
/// for `iap serve`, from an environment variable, with the rules of `SecretFile` (IAPCore), the reader embedders use
/// too: a private file, one trailing newline (`\n` or `\r\n`) not part of the secret, nothing empty, never printed.
/// Its errors are usage errors that name the option; the password file (`--database-password-file`) and the API key
/// (`--auth-key`) are read through ``contents(_:option:)``.
public enum SecretOption {
    /// The bytes of a private file.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - option: The option that named it, for messages (`--auth-key`).
    /// - Returns: Its bytes, as they are.
    /// - Throws: A usage error when it cannot be read, or when it is a regular file open to its group or others.
    public static func contents(_ path: String, option: String) throws(Arguments.UsageError) -> [UInt8] {
        do {
            return try SecretFile.contents(atPath: path, describedAs: option)
        } catch {
            throw .init(message: error.message)
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
        do {
            return try SecretFile.read(atPath: path, describedAs: option)
        } catch {
            throw .init(message: error.message)
        }
    }

    /// The secret in an environment variable, or `nil` when it is not set.
    ///
    /// - Parameter name: The variable.
    /// - Returns: Its bytes without a trailing newline.
    /// - Throws: A usage error when it is set but empty.
    public static func environment(_ name: String) throws(Arguments.UsageError) -> [UInt8]? {
        do {
            return try SecretFile.environment(name)
        } catch {
            throw .init(message: error.message)
        }
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
        do {
            return try SecretFile.password(atPath: path, describedAs: option)
        } catch {
            throw .init(message: error.message)
        }
    }
}
