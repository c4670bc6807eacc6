#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The C calls under names that the methods below do not shadow.
private func posixClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
private func posixOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}
private func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
private func posixRead(_ descriptor: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, bytes, count)
}
private func posixFsync(_ descriptor: Int32) -> Int32 { fsync(descriptor) }
private func posixTruncate(_ descriptor: Int32, _ length: off_t) -> Int32 { ftruncate(descriptor, length) }
private func posixRename(_ source: UnsafePointer<CChar>, _ destination: UnsafePointer<CChar>) -> Int32 {
    rename(source, destination)
}

/// An open POSIX file descriptor, closed when released: how swift-iap reads and writes every file it keeps.
///
/// Everything created through it is private and nothing is reached through a symbolic link: files are created
/// with mode 0600 and directories 0700 whatever the umask, every open adds `O_NOFOLLOW` and checks that it opened
/// a regular file, and a link where a file belongs is ``IAPError/Code/unsafeFile``. The helpers
/// ``replaceContents(of:with:sync:)`` (an atomic, durable replace) and ``readContents(of:maximumSize:)`` cover
/// small files kept whole (a catalog, an outbox, a manifest).
///
/// The store keeps each descriptor on one serial queue at a time (the journal's, or the compaction's),
/// which is what makes the `@unchecked Sendable` safe: nothing mutates it concurrently.
public final class SystemFile: @unchecked Sendable {
    /// The descriptor, or -1 once closed.
    public private(set) var descriptor: Int32
    /// The path it was opened with, for error messages.
    public let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        if descriptor >= 0 {
            _ = posixClose(descriptor)
        }
    }

    /// The mode of every file swift-iap creates: read and write for its owner only.
    static let privateFileMode: mode_t = 0o600
    /// The mode of every directory swift-iap creates.
    static let privateDirectoryMode: mode_t = 0o700

    /// Opens `path` with `flags`, privately and never through a symbolic link.
    ///
    /// `O_CLOEXEC` and `O_NOFOLLOW` are added: a symbolic link where the file belongs is refused, and what it
    /// points to is left untouched. With `O_CREAT`, a file that does not exist yet is created with mode 0600,
    /// set again after creation so that no umask changes it; an existing file keeps its mode. What is opened must
    /// be a regular file (a directory with `O_DIRECTORY`): a FIFO or a device is refused without blocking.
    ///
    /// - Throws: ``IAPError`` with code `unsafeFile` for a symbolic link or another kind of file, `storageFailure`
    ///   citing `errno` otherwise.
    public static func open(_ path: String, flags: Int32) throws -> SystemFile {
        let wantsDirectory = flags & O_DIRECTORY != 0
        var created = false
        var descriptor: Int32 = -1
        for _ in 0..<3 where descriptor < 0 {
            if flags & O_CREAT != 0 {
                // Create it exclusively first, to know whether it is new: only a new file gets its mode set.
                descriptor = path.withCString {
                    posixOpen($0, (flags | O_EXCL | O_NOFOLLOW | O_CLOEXEC) & ~O_TRUNC, privateFileMode)
                }
                if descriptor >= 0 {
                    created = true
                    break
                }
                guard errno == EEXIST, flags & O_EXCL == 0 else {
                    throw openFailure(path)
                }
            }
            // It exists: open it as it is (truncated below, once it is known to be a regular file).
            let nonBlocking = wantsDirectory ? 0 : O_NONBLOCK
            descriptor = path.withCString {
                posixOpen($0, (flags | O_NOFOLLOW | O_CLOEXEC | nonBlocking) & ~(O_CREAT | O_TRUNC), 0)
            }
            guard descriptor >= 0 else {
                if errno == ENOENT, flags & O_CREAT != 0 {
                    continue  // removed between the two opens: create it after all
                }
                throw openFailure(path)
            }
        }
        guard descriptor >= 0 else {
            throw openFailure(path)
        }
        let file = SystemFile(descriptor: descriptor, path: path)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw failure("stat", path)
        }
        guard status.st_mode & S_IFMT == (wantsDirectory ? S_IFDIR : S_IFREG) else {
            throw IAPError(
                .unsafeFile,
                "\(path) is not a \(wantsDirectory ? "directory" : "regular file"); swift-iap keeps its data only in "
                    + "regular files and directories"
            )
        }
        let current = fcntl(descriptor, F_GETFL)
        if current >= 0, current & O_NONBLOCK != 0, flags & O_NONBLOCK == 0 {
            _ = fcntl(descriptor, F_SETFL, current & ~O_NONBLOCK)
        }
        if created {
            guard fchmod(descriptor, privateFileMode) == 0 else {
                throw failure("set the mode of", path)
            }
        } else if flags & O_TRUNC != 0 {
            try file.truncate(to: 0)
        }
        return file
    }

    /// The error for a failed `open`: `unsafeFile` for a symbolic link, `storageFailure` otherwise.
    private static func openFailure(_ path: String) -> IAPError {
        if errno == ELOOP {
            return IAPError(
                .unsafeFile,
                "\(path) is a symbolic link; swift-iap never follows links to the files it keeps (remove the link, or "
                    + "point the store at the real location)"
            )
        }
        return failure("open", path)
    }

    /// Takes an exclusive `flock` without waiting for another holder: `true` when taken, `false` when someone else
    /// holds it (any other failure throws).
    ///
    /// A lock released a moment ago can still look held for a few microseconds: while any thread of this process
    /// spawns a child, the child holds copies of every descriptor until its `exec` closes them (`O_CLOEXEC`), and a
    /// `flock` belongs to the open file, not the descriptor. So a refusal is tried again for up to 100 ms before
    /// it counts; a real holder (another open store, another process) still gets the answer "held" then.
    public func tryExclusiveLock() throws -> Bool {
        for attempt in 0..<50 {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                return true
            }
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw Self.failure("lock", path)
            }
            if attempt < 49 {
                usleep(2_000)
            }
        }
        return false
    }

    /// Writes all of `bytes`, retrying short writes and interruptions.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = posixWrite(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            if written < 0 {
                if errno == EINTR {
                    continue
                }
                throw Self.failure("write", path)
            }
            offset += written
        }
    }

    /// Writes all of `bytes`.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Reads up to `count` bytes into `buffer` at `offset`; returns how many were read (0 at the end).
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let count = posixRead(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR {
                    continue
                }
                throw Self.failure("read", path)
            }
            return count
        }
    }

    /// Reads up to `buffer.count` bytes at byte `offset` without moving the file position; returns how many were
    /// read (fewer only at the end of the file).
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = pread(
                descriptor,
                buffer.baseAddress.map { $0 + filled },
                buffer.count - filled,
                off_t(offset + filled)
            )
            if count < 0 {
                if errno == EINTR {
                    continue
                }
                throw Self.failure("read", path)
            }
            if count == 0 {
                break
            }
            filled += count
        }
        return filled
    }

    /// Flushes the file's data and metadata to the device.
    public func sync() throws {
        guard posixFsync(descriptor) == 0 else {
            throw Self.failure("fsync", path)
        }
    }

    /// Cuts the file to `length` bytes.
    public func truncate(to length: Int) throws {
        guard posixTruncate(descriptor, off_t(length)) == 0 else {
            throw Self.failure("truncate", path)
        }
    }

    /// The file's size in bytes.
    public func size() throws -> Int {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw Self.failure("stat", path)
        }
        return Int(status.st_size)
    }

    /// Whether the path it was opened with still names this open file: `false` once the file was deleted, or another
    /// file (or a link) was put in its place.
    public func isStillAtItsPath() throws -> Bool {
        var open = stat()
        guard fstat(descriptor, &open) == 0 else {
            throw Self.failure("stat", path)
        }
        var named = stat()
        guard lstat(path, &named) == 0 else {
            if errno == ENOENT || errno == ENOTDIR {
                return false
            }
            throw Self.failure("stat", path)
        }
        return open.st_dev == named.st_dev && open.st_ino == named.st_ino && open.st_nlink > 0
    }

    /// Closes the descriptor; later calls fail with `EBADF`. Closing twice does nothing.
    public func close() {
        if descriptor >= 0 {
            _ = posixClose(descriptor)
            descriptor = -1
        }
    }

    // MARK: Paths

    /// Flushes a directory's entries (after a create, rename or unlink in it) to the device.
    public static func syncDirectory(_ path: String) throws {
        let descriptor = path.withCString { posixOpen($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) }
        guard descriptor >= 0 else {
            throw failure("open", path)
        }
        let directory = SystemFile(descriptor: descriptor, path: path)
        try directory.sync()
    }

    /// Renames `source` to `destination`, replacing it.
    public static func rename(_ source: String, to destination: String) throws {
        let result = source.withCString { from in destination.withCString { to in posixRename(from, to) } }
        guard result == 0 else {
            throw failure("rename \(source) to", destination)
        }
    }

    /// Deletes `path`; a missing file is not an error.
    public static func remove(_ path: String) throws {
        guard path.withCString({ unlink($0) }) == 0 || errno == ENOENT else {
            throw failure("delete", path)
        }
    }

    /// Creates a directory and its parents, if missing, each with mode 0700 whatever the umask.
    ///
    /// Directories that exist already are kept as they are (a directory named by the operator may be a link to
    /// another disk); each directory created here is checked to be one after it was made.
    ///
    /// - Throws: ``IAPError`` with code `unsafeFile` when a path component is a file, or a directory created here
    ///   turns out to be something else; `storageFailure` citing `errno` otherwise.
    public static func createDirectory(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            var status = stat()
            if stat(prefix, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFDIR else {
                    throw IAPError(.unsafeFile, "\(prefix) is not a directory")
                }
                continue
            }
            guard mkdir(prefix, privateDirectoryMode) == 0 else {
                if errno == EEXIST {
                    continue
                }
                throw failure("create directory", prefix)
            }
            // Made here: it must be a directory (not a link swapped in), private whatever the umask.
            guard lstat(prefix, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
                throw IAPError(.unsafeFile, "\(prefix) was replaced by something other than a directory")
            }
            guard chmod(prefix, privateDirectoryMode) == 0 else {
                throw failure("set the mode of", prefix)
            }
        }
    }

    /// Whether something exists at `path` (a link counts, whatever it points to).
    public static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// Refuses a symbolic link (or anything but a regular file) at `path`; nothing there is fine.
    ///
    /// - Throws: ``IAPError`` with code `unsafeFile`.
    public static func refuseLink(at path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            return
        }
        if status.st_mode & S_IFMT == S_IFLNK {
            throw IAPError(
                .unsafeFile,
                "\(path) is a symbolic link; swift-iap never follows links to the files it keeps"
            )
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw IAPError(.unsafeFile, "\(path) is not a regular file")
        }
    }

    /// Replaces the file at `path` with `bytes`, atomically and privately.
    ///
    /// Writes `<path>.tmp` (created anew, mode 0600, never through a link), flushes it, renames it over `path`,
    /// and flushes the directory: a crash leaves the old file or the new one, whole. A link at `path` is refused.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - bytes: Its new contents.
    ///   - sync: Whether to flush the file and the directory to the device.
    /// - Throws: ``IAPError`` with code `unsafeFile` for a link, `storageFailure` otherwise; the old file is then
    ///   untouched.
    public static func replaceContents(of path: String, with bytes: [UInt8], sync: Bool = true) throws {
        try refuseLink(at: path)
        let temporary = path + ".tmp"
        try remove(temporary)
        let file = try open(temporary, flags: O_WRONLY | O_CREAT | O_EXCL)
        do {
            try file.write(bytes)
            if sync {
                try file.sync()
            }
            file.close()
            try rename(temporary, to: path)
        } catch {
            file.close()
            try? remove(temporary)
            throw error
        }
        if sync {
            try syncDirectory(directory(of: path))
        }
    }

    /// Reads from the current offset to the end of the file.
    ///
    /// - Parameter maximumSize: The largest size accepted.
    /// - Returns: The bytes.
    /// - Throws: ``IAPError`` `.storageFailure` when it cannot be read or is larger than `maximumSize`.
    public func readToEnd(maximumSize: Int) throws -> [UInt8] {
        let size = try size()
        guard size <= maximumSize else {
            throw IAPError(.storageFailure, "\(path) is \(size) bytes, more than \(maximumSize)")
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let count = try bytes.withUnsafeMutableBytes { raw in
                try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]))
            }
            if count == 0 { break }
            filled += count
        }
        return Array(bytes[..<filled])
    }

    /// Reads the whole file at `path`, never through a link.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - maximumSize: The largest size read; a larger file throws `storageCorrupted`.
    /// - Returns: Its bytes, or `nil` when nothing is there.
    /// - Throws: ``IAPError`` with code `unsafeFile` for a link, `storageCorrupted` for a file that is too large,
    ///   `storageFailure` otherwise.
    public static func readContents(of path: String, maximumSize: Int) throws -> [UInt8]? {
        guard exists(path) else {
            return nil
        }
        let file = try open(path, flags: O_RDONLY)
        defer { file.close() }
        let size = try file.size()
        guard size <= maximumSize else {
            throw IAPError(.storageCorrupted, "\(path) is \(size) bytes, more than the \(maximumSize) it may hold")
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
        return Array(bytes.prefix(filled))
    }

    /// The directory part of a path: `.` for a bare name, `/` for a file at the root.
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// The names in a directory, without `.` and `..`.
    public static func names(in path: String) throws -> [String] {
        guard let stream = opendir(path) else {
            throw failure("list", path)
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." {
                names.append(name)
            }
        }
        return names
    }

    /// An ``IAPError`` with code `storageFailure` for the failed `operation` on `path`, citing `errno`.
    public static func failure(_ operation: String, _ path: String) -> IAPError {
        let code = errno
        let reason = String(cString: strerror(code))
        return IAPError(.storageFailure, "\(operation) \(path) failed: \(reason) (errno \(code))")
    }
}
