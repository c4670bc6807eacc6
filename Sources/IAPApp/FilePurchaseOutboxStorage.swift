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
import IAPCore

/// A ``PurchaseOutboxStorage`` in one small file, replaced atomically on every save.
///
/// A save writes the new bytes to `<path>.tmp`, flushes them to the device (`fsync`), renames the temporary file
/// over `<path>` and flushes the directory. A crash at any point leaves either the old file or the new one, whole;
/// a leftover temporary file is ignored and overwritten by the next save. Saves made at the same time in one process
/// run one after the other; two processes must not share the file.
///
/// A file the coordinator cannot read is renamed to `<path>.quarantined-<milliseconds since 1970>` (never
/// overwriting an earlier one) and kept there for support; the next save starts a new file at `<path>`.
///
/// ```swift
/// let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
/// let outbox = FilePurchaseOutboxStorage(path: support.appendingPathComponent("purchase-outbox.json").path)
/// ```
public struct FilePurchaseOutboxStorage: PurchaseOutboxStorage {
    /// The file's path.
    public let path: String

    /// The largest file read; an outbox holds a few kilobytes.
    public static let maximumSize = 16 * 1024 * 1024

    /// Creates a storage in a file; its directory is created at the first save.
    ///
    /// - Parameter path: The file's path.
    public init(path: String) {
        self.path = path
    }

    /// Reads the file.
    ///
    /// - Returns: Its bytes, or `nil` when it does not exist.
    /// - Throws: ``IAPError`` `storageFailure` when it cannot be read, `storageCorrupted` when it is larger than
    ///   ``maximumSize``.
    public func load() async throws -> Data? {
        var status = stat()
        if stat(path, &status) != 0, errno == ENOENT {
            return nil
        }
        let file = try SystemFile.open(path, flags: O_RDONLY)
        defer { file.close() }
        let size = try file.size()
        guard size <= Self.maximumSize else {
            throw IAPError(.storageCorrupted, "the purchase outbox \(path) is \(size) bytes, more than an outbox holds")
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let count = try bytes.withUnsafeMutableBytes { buffer in
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            }
            if count == 0 {
                break
            }
            filled += count
        }
        return Data(bytes.prefix(filled))
    }

    /// Replaces the file atomically and durably.
    ///
    /// - Parameter data: The new bytes.
    /// - Throws: ``IAPError`` `storageFailure`; the previous file is then untouched.
    public func save(_ data: Data) async throws {
        // Two saves sharing `<path>.tmp` at once would rename a file the other is still writing.
        try Self.saveLock.withLock { _ in try replace(with: data) }
    }

    /// Moves the file aside to `<path>.quarantined-<milliseconds>`, unchanged, and flushes the directory.
    ///
    /// - Parameter date: When; its milliseconds since 1970 name the moved file (a counter is added when that name is
    ///   taken).
    /// - Returns: The moved file's path.
    /// - Throws: ``IAPError`` `storageFailure` when the file cannot be renamed; it is then where it was.
    public func quarantine(at date: Date) async throws -> String {
        try Self.saveLock.withLock { _ in
            let base = path + ".quarantined-\(date.millisecondsSince1970)"
            var target = base
            var counter = 1
            var status = stat()
            while stat(target, &status) == 0 {
                counter += 1
                target = base + "-\(counter)"
            }
            try SystemFile.rename(path, to: target)
            try SystemFile.syncDirectory(Self.directory(of: path))
            return target
        }
    }

    /// Serializes the saves and moves of this process: saves all write through the same temporary file.
    private static let saveLock = LockedValue(())

    private func replace(with data: Data) throws {
        let directory = Self.directory(of: path)
        try SystemFile.createDirectory(directory)
        let temporary = path + ".tmp"
        let file = try SystemFile.open(temporary, flags: O_WRONLY | O_CREAT | O_TRUNC)
        do {
            try file.write([UInt8](data))
            try file.sync()
            file.close()
        } catch {
            file.close()
            try? SystemFile.remove(temporary)
            throw error
        }
        try SystemFile.rename(temporary, to: path)
        try SystemFile.syncDirectory(directory)
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }
}
