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
/// a leftover temporary file is removed and replaced by the next save. Saves made at the same time in one process
/// run one after the other; two processes must not share the file. The file is private (mode 0600, its directory
/// 0700 when created here, whatever the umask) and never reached through a symbolic link: a link at `<path>` or
/// `<path>.tmp` is refused with ``IAPError/Code/unsafeFile`` and what it points to is left untouched.
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
    ///   ``maximumSize``, `unsafeFile` when it is a symbolic link.
    public func load() async throws -> Data? {
        try SystemFile.readContents(of: path, maximumSize: Self.maximumSize).map { Data($0) }
    }

    /// Replaces the file atomically and durably.
    ///
    /// - Parameter data: The new bytes.
    /// - Throws: ``IAPError`` `storageFailure`, or `unsafeFile` for a symbolic link; the previous file is then
    ///   untouched.
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
            while SystemFile.exists(target) {
                counter += 1
                target = base + "-\(counter)"
            }
            try SystemFile.rename(path, to: target)
            try SystemFile.syncDirectory(SystemFile.directory(of: path))
            return target
        }
    }

    /// Serializes the saves and moves of this process: saves all write through the same temporary file.
    private static let saveLock = LockedValue(())

    private func replace(with data: Data) throws {
        try SystemFile.createDirectory(SystemFile.directory(of: path))
        try SystemFile.replaceContents(of: path, with: [UInt8](data))
    }
}
