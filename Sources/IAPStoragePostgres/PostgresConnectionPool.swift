import Dispatch
import IAPCore

/// A small pool of libpq connections, and the threads their blocking calls run on.
///
/// At most `size` connections are open; a call that finds none idle opens one if there is room, else waits
/// for one to come back. libpq blocks its thread for every round trip, so each call runs on the pool's
/// dispatch queue while the calling task is suspended: the Swift cooperative thread pool (one thread per
/// core) never waits on the network. The queue's threads are bounded by `size`, as each holds a connection.
///
/// A connection that the server closed while it sat idle is noticed before use and replaced. A connection
/// lost during a call is dropped; the call fails with `storageUnavailable`, except a read, which is tried
/// once more on a new connection (a write is not: whether it was applied is unknown).
final class PostgresConnectionPool: Sendable {
    private enum Lease: Sendable {
        case connection(PostgresConnection)
        case slot
    }

    private struct State {
        var idle: [PostgresConnection] = []
        var open = 0
        var waiters: [CheckedContinuation<Lease?, Never>] = []
        var closed = false
    }

    private let size: Int
    private let connect: @Sendable () throws -> PostgresConnection
    private let state = LockedValue(State())
    private let queue = DispatchQueue(label: "IAPStoragePostgres.connections", attributes: .concurrent)

    init(size: Int, connect: @escaping @Sendable () throws -> PostgresConnection) {
        self.size = max(1, size)
        self.connect = connect
    }

    /// Runs `body` with a connection, on the pool's queue.
    ///
    /// - Parameters:
    ///   - retryingOnLostConnection: Whether to run `body` again, once, on a new connection when the connection
    ///     was lost during the first run; only for calls that change nothing.
    ///   - body: The blocking work.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw, `storageUnavailable` when no connection can be opened, `storageFailure` after
    ///   ``close()``.
    func run<Value: Sendable>(
        retryingOnLostConnection: Bool = false,
        _ body: @escaping @Sendable (PostgresConnection) throws -> Value
    ) async throws -> Value {
        var attempt = 1
        while true {
            let lease = try await acquire()
            let (result, keep): (Result<Value, any Error>, PostgresConnection?) = await blocking { [connect] in
                let connection: PostgresConnection
                do {
                    if case .connection(let idle) = lease, idle.isHealthy {
                        connection = idle
                    } else {
                        connection = try connect()
                    }
                } catch {
                    return (.failure(error), nil)
                }
                do {
                    return (.success(try body(connection)), connection)
                } catch {
                    return (.failure(error), connection.isReusable ? connection : nil)
                }
            }
            release(keep)
            switch result {
            case .success(let value):
                return value
            case .failure(let error):
                let lost = (error as? IAPError)?.code == .storageUnavailable && keep == nil
                if retryingOnLostConnection, lost, attempt == 1, case .connection = lease {
                    attempt += 1
                    continue
                }
                throw error
            }
        }
    }

    /// Closes the idle connections and refuses new calls; calls under way finish and close theirs.
    func close() {
        let waiters = state.withLock { state -> [CheckedContinuation<Lease?, Never>] in
            state.closed = true
            state.open -= state.idle.count
            // Dropping a connection closes it (PQfinish).
            state.idle = []
            let waiters = state.waiters
            state.waiters = []
            return waiters
        }
        for waiter in waiters {
            waiter.resume(returning: nil)
        }
    }

    // MARK: Leases

    private func acquire() async throws -> Lease {
        enum Step {
            case lease(Lease)
            case wait
            case closed
        }
        let step = state.withLock { state -> Step in
            if state.closed {
                return .closed
            }
            if let connection = state.idle.popLast() {
                return .lease(.connection(connection))
            }
            if state.open < size {
                state.open += 1
                return .lease(.slot)
            }
            return .wait
        }
        switch step {
        case .lease(let lease):
            return lease
        case .closed:
            throw IAPError(.storageFailure, "the PostgreSQL store was closed")
        case .wait:
            let lease = await withCheckedContinuation { continuation in
                // Looked at again under the same lock as the wait is queued: a connection given back since the first
                // look went to the idle list, and no later release would wake this call.
                let ready = state.withLock { state -> Lease?? in
                    if state.closed {
                        return .some(nil)
                    }
                    if let connection = state.idle.popLast() {
                        return .some(.connection(connection))
                    }
                    if state.open < size {
                        state.open += 1
                        return .some(.slot)
                    }
                    state.waiters.append(continuation)
                    return .none
                }
                if let ready {
                    continuation.resume(returning: ready)
                }
            }
            guard let lease else {
                throw IAPError(.storageFailure, "the PostgreSQL store was closed")
            }
            return lease
        }
    }

    /// Gives a connection back (or, with `nil`, its slot), to a waiting call first.
    private func release(_ connection: PostgresConnection?) {
        let waiter = state.withLock { state -> CheckedContinuation<Lease?, Never>? in
            if !state.waiters.isEmpty {
                return state.waiters.removeFirst()
            }
            if let connection, !state.closed {
                state.idle.append(connection)
            } else {
                state.open -= 1
            }
            return nil
        }
        waiter?.resume(returning: connection.map(Lease.connection) ?? .slot)
    }

    private func blocking<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: work())
            }
        }
    }
}
