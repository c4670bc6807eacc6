#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open POSIX file descriptor, closed when released.
///
/// The store keeps each descriptor on one serial queue at a time (the journal's, or the compaction's),
/// which is what makes the `@unchecked Sendable` safe: nothing mutates it concurrently.
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

package final class SystemFile: @unchecked Sendable {
    /// The descriptor, or -1 once closed.
    package private(set) var descriptor: Int32
    /// The path it was opened with, for error messages.
    package let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        if descriptor >= 0 {
            _ = posixClose(descriptor)
        }
    }

    /// Opens `path` with `flags` (`O_CLOEXEC` is added), creating it with mode 0644 when asked to.
    package static func open(_ path: String, flags: Int32) throws -> SystemFile {
        let descriptor = path.withCString { posixOpen($0, flags | O_CLOEXEC, 0o644) }
        guard descriptor >= 0 else {
            throw failure("open", path)
        }
        return SystemFile(descriptor: descriptor, path: path)
    }

    /// Takes an exclusive `flock` without waiting for another holder: `true` when taken, `false` when someone else
    /// holds it (any other failure throws).
    ///
    /// A lock released a moment ago can still look held for a few microseconds: while any thread of this process
    /// spawns a child, the child holds copies of every descriptor until its `exec` closes them (`O_CLOEXEC`), and a
    /// `flock` belongs to the open file, not the descriptor. So a refusal is tried again for up to 100 ms before
    /// it counts; a real holder (another open store, another process) still gets the answer "held" then.
    package func tryExclusiveLock() throws -> Bool {
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
    package func write(_ bytes: UnsafeRawBufferPointer) throws {
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
    package func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Reads up to `count` bytes into `buffer` at `offset`; returns how many were read (0 at the end).
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
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

    /// Flushes the file's data and metadata to the device.
    package func sync() throws {
        guard posixFsync(descriptor) == 0 else {
            throw Self.failure("fsync", path)
        }
    }

    /// Cuts the file to `length` bytes.
    package func truncate(to length: Int) throws {
        guard posixTruncate(descriptor, off_t(length)) == 0 else {
            throw Self.failure("truncate", path)
        }
    }

    /// The file's size in bytes.
    package func size() throws -> Int {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw Self.failure("stat", path)
        }
        return Int(status.st_size)
    }

    /// Closes the descriptor; later calls fail with `EBADF`. Closing twice does nothing.
    package func close() {
        if descriptor >= 0 {
            _ = posixClose(descriptor)
            descriptor = -1
        }
    }

    // MARK: Paths

    /// Flushes a directory's entries (after a create, rename or unlink in it) to the device.
    package static func syncDirectory(_ path: String) throws {
        let directory = try open(path, flags: O_RDONLY | O_DIRECTORY)
        try directory.sync()
    }

    /// Renames `source` to `destination`, replacing it.
    package static func rename(_ source: String, to destination: String) throws {
        let result = source.withCString { from in destination.withCString { to in posixRename(from, to) } }
        guard result == 0 else {
            throw failure("rename \(source) to", destination)
        }
    }

    /// Deletes `path`; a missing file is not an error.
    package static func remove(_ path: String) throws {
        guard path.withCString({ unlink($0) }) == 0 || errno == ENOENT else {
            throw failure("delete", path)
        }
    }

    /// Creates a directory and its parents, if missing.
    package static func createDirectory(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            var status = stat()
            if stat(prefix, &status) == 0 {
                continue
            }
            guard mkdir(prefix, 0o755) == 0 || errno == EEXIST else {
                throw failure("create directory", prefix)
            }
        }
    }

    /// The names in a directory, without `.` and `..`.
    package static func names(in path: String) throws -> [String] {
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
    package static func failure(_ operation: String, _ path: String) -> IAPError {
        let code = errno
        let reason = String(cString: strerror(code))
        return IAPError(.storageFailure, "\(operation) \(path) failed: \(reason) (errno \(code))")
    }
}
