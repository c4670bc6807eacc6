/// The right to run a job under an ``ExclusiveRunLock``, held until ``release()``, until the lease is dropped, or
/// until its holder's process ends.
public protocol ExclusiveRunLease: AnyObject, Sendable {
    /// Whether the lease still holds the lock: `false` after ``release()`` or once the lock was lost (a database
    /// connection that dropped takes its lock with it).
    ///
    /// - Returns: Whether the holder may go on with the job.
    func isHeld() async -> Bool

    /// Releases the lock; the next ``ExclusiveRunLock/tryLock()`` can take it at once. Releasing twice does nothing.
    func release() async
}
