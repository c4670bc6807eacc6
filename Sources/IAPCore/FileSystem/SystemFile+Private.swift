#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The C calls under names that SystemFile's own methods do not shadow.
private func posixOpenPrivate(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}
private func posixClosePrivate(_ descriptor: Int32) -> Int32 { close(descriptor) }

/// Private files: what the project creates on disk is readable by its owner only (files 0600, directories 0700,
/// whatever the umask), and is never opened through a symbolic link.
extension SystemFile {
    /// The mode of a private file.
    static let privateFileMode: mode_t = 0o600
    /// The mode of a private directory.
    static let privateDirectoryMode: mode_t = 0o700

    /// Creates a directory and its missing parents, each created one 0700; a directory that exists is used as it is.
    ///
    /// - Parameter path: The directory.
    /// - Throws: ``IAPError`` `.storageFailure` when a component cannot be created, or when `path` itself is a
    ///   symbolic link or not a directory.
    package static func createPrivateDirectory(_ path: String) throws {
        var existing = stat()
        if stat(path, &existing) != 0 {
            let slash = path.lastIndex(of: "/")
            if let slash, slash > path.startIndex {
                try createPrivateDirectory(String(path[..<slash]))
            }
            guard mkdir(path, privateDirectoryMode) == 0 || errno == EEXIST else {
                throw failure("create directory", path)
            }
            // mkdir's mode went through the umask, which may have left out more than group and others.
            _ = chmod(path, privateDirectoryMode)
        }
        var status = stat()
        guard lstat(path, &status) == 0 else { throw failure("inspect", path) }
        guard status.st_mode & S_IFMT != S_IFLNK else {
            throw IAPError(.storageFailure, "\(path) is a symbolic link; refusing to follow it")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw IAPError(.storageFailure, "\(path) is not a directory")
        }
    }

    /// Opens a private file without following a symbolic link; with `O_CREAT` in `flags`, creates it 0600 first.
    ///
    /// A file that exists with more permissions (made by an older version) is narrowed to 0600.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - flags: `open(2)` flags such as `O_RDWR | O_CREAT | O_APPEND`; `O_NOFOLLOW` and `O_CLOEXEC` are added.
    /// - Returns: The open file.
    /// - Throws: ``IAPError`` `.storageFailure` when the file cannot be opened, is a symbolic link or is not a
    ///   regular file.
    package static func openPrivate(_ path: String, flags: Int32) throws -> SystemFile {
        if flags & O_CREAT != 0 {
            let created = path.withCString {
                posixOpenPrivate($0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, privateFileMode)
            }
            if created >= 0 {
                _ = fchmod(created, privateFileMode)
                _ = posixClosePrivate(created)
            } else if errno != EEXIST {
                throw refusal("create", path)
            }
        }
        var link = stat()
        if lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
            throw IAPError(.storageFailure, "\(path) is a symbolic link; refusing to follow it")
        }
        let file: SystemFile
        do {
            file = try open(path, flags: (flags & ~(O_CREAT | O_EXCL)) | O_NOFOLLOW)
        } catch {
            throw errno == ELOOP ? refusal("open", path) : error
        }
        var status = stat()
        guard fstat(file.descriptor, &status) == 0 else { throw failure("inspect", path) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw IAPError(.storageFailure, "\(path) is not a regular file")
        }
        if status.st_mode & 0o077 != 0 {
            guard fchmod(file.descriptor, privateFileMode) == 0 else { throw failure("chmod", path) }
        }
        return file
    }

    /// Reads a whole private file without following a symbolic link.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - maximumSize: The largest size accepted.
    /// - Returns: Its bytes.
    /// - Throws: ``IAPError`` `.storageFailure` when it cannot be read, is a symbolic link, or is larger than
    ///   `maximumSize`.
    package static func readPrivateFile(_ path: String, maximumSize: Int) throws -> [UInt8] {
        try openPrivate(path, flags: O_RDONLY).readToEnd(maximumSize: maximumSize)
    }

    /// Reads from the current offset to the end of the file.
    ///
    /// - Parameter maximumSize: The largest size accepted.
    /// - Returns: The bytes.
    /// - Throws: ``IAPError`` `.storageFailure` when it cannot be read or is larger than `maximumSize`.
    package func readToEnd(maximumSize: Int) throws -> [UInt8] {
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

    /// Writes a private file whole: a new 0600 file next to it, flushed, then renamed over it, so a reader sees
    /// the old content or the new, never a part, and a symbolic link in its place is replaced, not followed.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - bytes: Its new content.
    /// - Throws: ``IAPError`` `.storageFailure`.
    package static func writePrivateFileAtomically(_ path: String, _ bytes: [UInt8]) throws {
        var random = SystemRandomNumberGenerator()
        let temporary = "\(path).tmp-\(String(random.next() as UInt64, radix: 16))"
        let created = temporary.withCString {
            posixOpenPrivate($0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, privateFileMode)
        }
        guard created >= 0 else { throw failure("create", temporary) }
        _ = fchmod(created, privateFileMode)
        _ = posixClosePrivate(created)
        do {
            let file = try open(temporary, flags: O_WRONLY | O_NOFOLLOW)
            try file.write(bytes)
            try file.sync()
            file.close()
            try rename(temporary, to: path)
        } catch {
            try? remove(temporary)
            throw error
        }
        let slash = path.lastIndex(of: "/")
        try syncDirectory(slash.map { String(path[..<$0]) }.flatMap { $0.isEmpty ? "/" : $0 } ?? ".")
    }

    /// A failure that names a symbolic link when `errno` says the last component was one.
    private static func refusal(_ operation: String, _ path: String) -> IAPError {
        if errno == ELOOP {
            return IAPError(.storageFailure, "\(path) is a symbolic link; refusing to follow it")
        }
        return failure(operation, path)
    }
}
