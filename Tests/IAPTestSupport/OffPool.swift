import Foundation
import IAPCore

/// Runs blocking work (a child process, a pipe read, a socket wait) on a thread of its own and waits for it
/// without holding a thread of the concurrency pool.
///
/// The pool has one thread per core (two on a small CI machine). A test that blocks one while its child process
/// runs leaves the other suites, which run in parallel, one thread or none: servers under test then answer late and
/// their timeouts fire. Every test helper that blocks goes through here.
package func offPool<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: work()) }
    }
}

/// ``offPool(_:)`` for work that throws.
package func offPool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result<Value, any Error> { try work() }) }
    }
}

/// ``offPool(_:)`` with a deadline: when `work` has not finished within `timeout`, `onTimeout()` is returned instead
/// (the work goes on on its thread; its result is dropped).
package func offPool<Value: Sendable>(
    timeout: Duration,
    onTimeout: @escaping @Sendable () -> Value,
    _ work: @escaping @Sendable () -> Value
) async -> Value {
    await withCheckedContinuation { continuation in
        let resumed = LockedValue(false)
        let finish: @Sendable (Value) -> Void = { value in
            let first = resumed.withLock { resumed in
                defer { resumed = true }
                return !resumed
            }
            if first {
                continuation.resume(returning: value)
            }
        }
        Thread.detachNewThread { finish(work()) }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { finish(onTimeout()) }
    }
}
