#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import IAPCore

/// The identity of a file ledger: `ledger-id` in its directory, one line of 32 hexadecimal characters, written once
/// and never rewritten.
///
/// It is made the first time it is asked for: written whole to a private temporary file, flushed, then linked to its
/// name, which fails if another process linked one first (that one is then read). So a reader never sees half an
/// identity and two writers never make two. The file is created 0600 and never opened through a symbolic link.
enum FileLedgerIdentity {
    /// The file's name in the ledger's directory.
    static let fileName = "ledger-id"

    /// The identity of the ledger in `directory`, or `nil` when it has none yet; writes nothing.
    ///
    /// - Throws: ``IAPError`` `storageCorrupted` when the file does not hold an identity, `storageFailure` when it
    ///   cannot be read (a symbolic link in its place included).
    static func read(directory: String) throws -> String? {
        let path = directory + "/" + fileName
        guard try exists(path) else { return nil }
        // A symbolic link in its place fails here (ELOOP).
        let file = try SystemFile.open(path, flags: O_RDONLY | O_NOFOLLOW)
        var bytes = [UInt8](repeating: 0, count: 128)
        let count = try bytes.withUnsafeMutableBytes { try file.read(into: $0) }
        file.close()
        let text = String(decoding: bytes.prefix(count), as: UTF8.self)
        let identity = text.hasSuffix("\n") ? String(text.dropLast()) : text
        guard LedgerIdentifier.isValid(identity) else {
            throw IAPError(.storageCorrupted, "\(path) does not hold a ledger identity (32 hexadecimal characters)")
        }
        return identity
    }

    /// Whether something (a file, a symbolic link) has the name `path`.
    static func exists(_ path: String) throws -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            guard errno == ENOENT else {
                throw SystemFile.failure("stat", path)
            }
            return false
        }
        return true
    }

    /// The identity of the ledger in `directory`, made now if it has none.
    ///
    /// - Throws: ``IAPError`` as ``read(directory:)``, or `storageFailure` when it cannot be written.
    static func establish(directory: String) throws -> String {
        if let identity = try read(directory: directory) {
            return identity
        }
        let identity = LedgerIdentifier.random()
        let path = directory + "/" + fileName
        let temporary = path + "." + LedgerIdentifier.random().prefix(8) + ".tmp"
        let file = try SystemFile.open(temporary, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)
        defer { try? SystemFile.remove(temporary) }
        guard fchmod(file.descriptor, 0o600) == 0 else {
            throw SystemFile.failure("chmod", temporary)
        }
        try file.write(Array((identity + "\n").utf8))
        try file.sync()
        file.close()
        let linked = temporary.withCString { from in path.withCString { to in link(from, to) } }
        guard linked == 0 else {
            guard errno == EEXIST, let winner = try read(directory: directory) else {
                throw SystemFile.failure("link \(temporary) to", path)
            }
            return winner
        }
        try SystemFile.syncDirectory(directory)
        return identity
    }
}
