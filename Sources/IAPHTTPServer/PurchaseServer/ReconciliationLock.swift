import IAPCore

/// Lets one instance of a fleet at a time run the scheduled reconciliation: every instance drains the retry queue
/// (claims on the ledger keep those apart), but a reconciliation asks Apple for every customer, and two instances
/// doing it at once would only spend Apple's rate limit twice.
///
/// A ledger in PostgreSQL shares one lock among the instances on it (a PostgreSQL advisory lock); a file ledger is
/// opened by one process at a time, so ``InProcessReconciliationLock`` suffices.
///
/// ## Implementation requirements
/// - ``runIfAvailable(_:)`` never waits for another holder: it runs the work while holding the lock, or returns `nil`
///   at once when someone else holds it.
/// - The lock is released when the work ends, throws or is cancelled, and when the process dies.
/// - Safe to call from many tasks at once.
public protocol ReconciliationLock: Sendable {
    /// Runs `work` while holding the lock, or returns `nil` at once when another holder has it.
    ///
    /// - Parameter work: The reconciliation.
    /// - Returns: What `work` returned, or `nil` when the lock was held elsewhere.
    /// - Throws: What `work` throws, or ``IAPError`` when the lock itself fails (its store is unavailable).
    func runIfAvailable<Result: Sendable>(_ work: @Sendable () async throws -> Result) async throws -> Result?
}

/// A ``ReconciliationLock`` within one process: for a ledger only one process opens (a file ledger).
public final class InProcessReconciliationLock: ReconciliationLock {
    private let held = LockedValue(false)

    /// Creates an unheld lock.
    public init() {}

    public func runIfAvailable<Result: Sendable>(_ work: @Sendable () async throws -> Result) async throws -> Result? {
        let taken = held.withLock { held -> Bool in
            guard !held else { return false }
            held = true
            return true
        }
        guard taken else { return nil }
        defer { held.withLock { $0 = false } }
        return try await work()
    }
}
