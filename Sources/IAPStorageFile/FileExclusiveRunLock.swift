#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
public import IAPCore

/// An ``ExclusiveRunLock`` on a file: `flock(LOCK_EX | LOCK_NB)` on `DIRECTORY/NAME.lock`.
///
/// The lock belongs to the open file, so it holds against other processes and against a second ``tryLock()`` in this
/// one alike, and the kernel drops it when the holder's process ends, however it ends. The file itself stays (it is
/// private, 0600, and empty); deleting it while nobody holds the lock is harmless. Put it next to the store it guards,
/// such as a file ledger's directory, so that every process that opens that store finds the same lock.
///
/// A lock that was released a moment ago may still look held for up to 0.1 s (a child process being spawned holds
/// copies of the descriptors until its `exec`): ``tryLock()`` tries again for that long before it answers `nil`.
public final class FileExclusiveRunLock: ExclusiveRunLock {
    /// What the lock guards: the file's name without `.lock`.
    public let name: String
    /// The lock file.
    public let path: String

    /// Creates the lock of `name` in `directory`; nothing is opened until ``tryLock()``.
    ///
    /// - Parameters:
    ///   - name: What the lock guards, such as `"reconcile"`: letters, digits, `.`, `_` and `-`, not starting with
    ///     `.`, at most 64 characters.
    ///   - directory: An existing directory, such as the file ledger's.
    /// - Throws: ``IAPError`` `invalidArgument` for a name that is not a plain file name.
    public init(name: String, directory: String) throws {
        let plain = name.utf8.allSatisfy {
            ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z"))
                || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                || [UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-")].contains($0)
        }
        guard plain, (1...64).contains(name.utf8.count), !name.hasPrefix(".") else {
            throw IAPError(
                .invalidArgument,
                "the lock name \"\(name)\" is not a plain file name (letters, digits, . _ -; at most 64; not starting "
                    + "with .)"
            )
        }
        self.name = name
        path = (directory.hasSuffix("/") ? directory : directory + "/") + name + ".lock"
    }

    /// Takes the lock if no process holds it.
    ///
    /// - Returns: The lease, or `nil` while another holder has the lock.
    /// - Throws: ``IAPError`` `unsafeFile` for a symbolic link in the lock file's place, `storageFailure` when it
    ///   cannot be created or opened (a missing directory).
    public func tryLock() async throws -> (any ExclusiveRunLease)? {
        let file = try SystemFile.open(path, flags: O_RDWR | O_CREAT)
        guard try file.tryExclusiveLock() else {
            file.close()
            return nil
        }
        return Lease(file: file)
    }

    /// One grant of the lock: the open, locked file; closing it releases the lock.
    private final class Lease: ExclusiveRunLease {
        private let file: LockedValue<SystemFile?>

        init(file: SystemFile) {
            self.file = LockedValue(file)
        }

        func isHeld() async -> Bool {
            file.withLock { $0 != nil }
        }

        func release() async {
            let open = file.withLock { file in
                defer { file = nil }
                return file
            }
            open?.close()
        }
    }
}
