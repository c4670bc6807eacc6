/// A lock that lets one holder at a time run a job, such as the scheduled reconciliation, among every process that
/// shares a store: the fleet's "only one of us does this now".
///
/// A scheduler calls ``tryLock()`` (or ``runExclusively(isolation:_:)``) each time the job is due; the one instance
/// that gets a lease runs the job, every other one skips this turn. Nobody waits for the lock, and nobody has to
/// clear it by hand: it belongs to its holder's process and goes when the holder does.
///
/// ## Implementation requirements
/// - **One holder at a time** per lock among every instance that shares the store: of any number of concurrent
///   ``tryLock()`` calls, from any process, at most one gets a lease; the others get `nil` at once, until that
///   lease is released. A second ``tryLock()`` in the process that holds the lock gets `nil` too.
/// - **Never outlives its holder**: a lease whose process exits or crashes, however it ends, is released without
///   anyone's help; so is a lease that is dropped without ``ExclusiveRunLease/release()``.
/// - ``ExclusiveRunLease/isHeld()`` answers `false` once the lease is released or lost (for a database, when the
///   connection that holds it dropped), so that a long job can check it between steps and stop.
/// - Safe to call from many tasks at once.
///
/// `PostgresAdvisoryLock` (in `IAPStoragePostgres`, a session-level advisory lock on a connection of its own),
/// `FileExclusiveRunLock` (in `IAPStorageFile`, `flock` on a file) and `InMemoryExclusiveRunLock` (in `IAPInMemory`,
/// one process) implement it.
public protocol ExclusiveRunLock: Sendable {
    /// What the lock guards, such as `"reconcile"`.
    var name: String { get }

    /// Takes the lock if nobody holds it; never waits for it.
    ///
    /// - Returns: A lease that holds the lock until it is released or dropped, or `nil` when another holder has it.
    /// - Throws: ``IAPError`` when the lock cannot be asked for (`storageUnavailable` for a database that cannot be
    ///   reached, `storageFailure`); nothing is held then.
    func tryLock() async throws -> (any ExclusiveRunLease)?
}

extension ExclusiveRunLock {
    /// Runs `body` holding the lock, if nobody else holds it; answers `nil` at once, without running it, when
    /// another holder does.
    ///
    /// The lease is released when `body` returns or throws. A long `body` checks
    /// ``ExclusiveRunLease/isHeld()`` between steps and stops once it answers `false`.
    ///
    /// ```swift
    /// if try await lock.runExclusively({ _ in try await reconciler.reconcileLedger() }) == nil {
    ///     // another instance is reconciling: skip this turn
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - isolation: The caller's actor, which `body` runs on.
    ///   - body: The job, given the lease.
    /// - Returns: What `body` returned, or `nil` when the lock was held elsewhere.
    /// - Throws: What ``tryLock()`` or `body` threw.
    public func runExclusively<Value: Sendable>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (any ExclusiveRunLease) async throws -> Value
    ) async throws -> Value? {
        guard let lease = try await tryLock() else {
            return nil
        }
        let value: Value
        do {
            value = try await body(lease)
        } catch {
            await lease.release()
            throw error
        }
        await lease.release()
        return value
    }
}
