#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Bionic)
    import Bionic
#endif

/// A value that many threads share, guarded by a POSIX mutex: the package's own lock, on every platform it supports.
///
/// The standard library's `Mutex` (module `Synchronization`) needs iOS 18 and macOS 15; this type works from the
/// package's floor (iOS 16, macOS 13) and on Linux. It has the same shape, so a stored `let` of it reads and changes
/// its value only inside ``withLock(_:)``:
///
/// ```swift
/// let count = LockedValue(0)
/// count.withLock { $0 += 1 }
/// ```
///
/// The lock is not recursive: calling ``withLock(_:)`` again from inside its closure deadlocks. Keep the closures
/// short and never `await` in them (they are synchronous).
public final class LockedValue<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates a lock around a value.
    ///
    /// - Parameter value: The initial value; it is handed over to the lock.
    public init(_ value: sending Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // A default mutex (not recursive, not error checking) cannot fail to initialize but for lack of memory,
        // which `allocate` already survived.
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    ///
    /// - Parameter body: Reads or changes the value.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws; the lock is released either way.
    public func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
