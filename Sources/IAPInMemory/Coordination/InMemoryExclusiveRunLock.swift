public import IAPCore

/// An ``ExclusiveRunLock`` in memory: one holder at a time among the tasks that share this instance.
///
/// For tests of schedulers written against the protocol, and for a process that is the only one of its kind.
/// ``dropHolder()`` takes the lock away from its holder, as a database does when the holder's connection drops, so a
/// test can check that a job notices (its lease's ``ExclusiveRunLease/isHeld()`` turns `false`) and that another
/// instance takes over.
public final class InMemoryExclusiveRunLock: ExclusiveRunLock {
    private struct State {
        var holder: UInt64?
        var issued: UInt64 = 0
        var grants = 0
    }

    /// What the lock guards.
    public let name: String
    private let state = LockedValue(State())

    /// Creates an unheld lock.
    ///
    /// - Parameter name: What it guards, such as `"reconcile"`.
    public init(name: String) {
        self.name = name
    }

    /// Takes the lock if nobody holds it.
    ///
    /// - Returns: The lease, or `nil` while another lease holds the lock.
    public func tryLock() async -> (any ExclusiveRunLease)? {
        let granted = state.withLock { state -> UInt64? in
            guard state.holder == nil else {
                return nil
            }
            state.issued += 1
            state.grants += 1
            state.holder = state.issued
            return state.issued
        }
        return granted.map { Lease(lock: self, id: $0) }
    }

    /// Whether a lease holds the lock now.
    public var isLocked: Bool {
        state.withLock { $0.holder != nil }
    }

    /// How many leases were granted so far.
    public var grants: Int {
        state.withLock { $0.grants }
    }

    /// Takes the lock away from its holder, whose lease answers `isHeld() == false` from now on; the next
    /// ``tryLock()`` gets it.
    public func dropHolder() {
        state.withLock { $0.holder = nil }
    }

    fileprivate func holds(_ id: UInt64) -> Bool {
        state.withLock { $0.holder == id }
    }

    fileprivate func release(_ id: UInt64) {
        state.withLock { state in
            if state.holder == id {
                state.holder = nil
            }
        }
    }

    /// One grant of the lock; dropping it releases the lock.
    private final class Lease: ExclusiveRunLease {
        private let lock: InMemoryExclusiveRunLock
        private let id: UInt64

        init(lock: InMemoryExclusiveRunLock, id: UInt64) {
            self.lock = lock
            self.id = id
        }

        deinit {
            lock.release(id)
        }

        func isHeld() async -> Bool {
            lock.holds(id)
        }

        func release() async {
            lock.release(id)
        }
    }
}
