import Dispatch
public import IAPCore

/// An ``ExclusiveRunLock`` for a fleet on one PostgreSQL database: a session-level advisory lock
/// (`pg_try_advisory_lock`) held on a connection of its own.
///
/// ``tryLock()`` opens a new connection (never one of the ledger's pooled connections, which go back to the pool
/// and would take the lock with them) and asks for the lock on it without waiting. The lease keeps that
/// connection open and idle for as long as it holds the lock; ``ExclusiveRunLease/release()`` unlocks and closes
/// it. PostgreSQL itself ends the lock with the session: when the holder's process exits or is killed, its
/// connection closes and the lock is free at once; when its machine vanishes, the server's TCP keepalives, set on
/// the lock's session (probes after 30 s of silence, every 10 s, 3 of them), end the session. A lease dropped
/// without `release()` closes its connection too.
///
/// **The key.** Advisory locks are per database and keyed by a `bigint`. The key of a lock named `NAME` in the
/// schema `SCHEMA` is the first 64 bits of the MD5 digest of the text `swift-iap lock SCHEMA NAME`, read as a
/// signed big-endian integer, computed by the server:
/// `('x' || left(md5('swift-iap lock SCHEMA NAME'), 16))::bit(64)::bigint`. So two ledgers in one database (one
/// schema each) have their own locks, and an operator finds the holder of one in `pg_locks` (see
/// `Documentation/Postgres.md`).
///
/// ```swift
/// let lock = try ledger.exclusiveRunLock(named: "reconcile")
/// if try await lock.runExclusively({ _ in try await reconciler.reconcileLedger() }) == nil {
///     // another instance is reconciling: skip this turn
/// }
/// ```
public final class PostgresAdvisoryLock: ExclusiveRunLock {
    /// What the lock guards.
    public let name: String
    /// The server and schema: the lock's connection is opened with the same settings as the ledger's.
    public let configuration: PostgresEntitlementStore.Configuration
    /// The text whose MD5 digest gives the key: `swift-iap lock <schema> <name>`.
    public var keyText: String {
        "swift-iap lock \(configuration.schema) \(name)"
    }

    private let queue = DispatchQueue(label: "IAPStoragePostgres.advisoryLock", attributes: .concurrent)

    /// Creates the lock; nothing is opened until ``tryLock()``.
    ///
    /// - Parameters:
    ///   - name: What the lock guards, such as `"reconcile"`: 1 to 200 bytes of UTF-8 without a NUL character.
    ///   - configuration: The server and schema of the ledger the fleet shares.
    /// - Throws: ``IAPError`` `invalidArgument` for a bad name, `invalidConfiguration` for a bad configuration.
    public init(name: String, configuration: PostgresEntitlementStore.Configuration) throws {
        guard (1...200).contains(name.utf8.count), !name.utf8.contains(0) else {
            throw IAPError(
                .invalidArgument,
                "an advisory lock name has 1 to 200 bytes and no NUL character; got \(name.utf8.count) bytes"
            )
        }
        try configuration.validate()
        self.name = name
        self.configuration = configuration
    }

    /// Takes the lock if no session holds it, on a new connection.
    ///
    /// - Returns: The lease, which holds the connection, or `nil` while another session holds the lock (this
    ///   process's other leases included).
    /// - Throws: ``IAPError`` `storageUnavailable` when the server cannot be reached, `storageAuthenticationFailed`,
    ///   `storageFailure`; nothing is held then.
    public func tryLock() async throws -> (any ExclusiveRunLease)? {
        let configuration = configuration
        let text = keyText
        let taken = try await Self.blocking(on: queue) { () throws -> (PostgresConnection, Int64)? in
            let connection = try configuration.connect()
            try connection.execute(.lockConnectionSettings)
            let row = try connection.execute(.tryAdvisoryLock, [text])
            guard row.string(0, 0) == "t" else {
                return nil
            }
            return (connection, try row.int64(0, 1))
        }
        return taken.map { Lease(connection: $0.0, key: $0.1) }
    }

    /// Runs blocking libpq work off the cooperative thread pool.
    fileprivate static func blocking<Value: Sendable>(
        on queue: DispatchQueue,
        _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result(catching: work))
            }
        }
    }

    /// One grant of the lock: the connection whose session holds it.
    private final class Lease: ExclusiveRunLease {
        /// The connection while the lease holds it; `nil` once released or lost.
        private let connection: LockedValue<PostgresConnection?>
        private let key: Int64
        /// One call at a time on the connection.
        private let queue = DispatchQueue(label: "IAPStoragePostgres.advisoryLease")

        init(connection: PostgresConnection, key: Int64) {
            self.connection = LockedValue(connection)
            self.key = key
        }

        func isHeld() async -> Bool {
            let key = key
            let connection = connection
            let held = try? await PostgresAdvisoryLock.blocking(on: queue) { () -> Bool in
                guard let open = connection.withLock({ $0 }) else {
                    return false
                }
                do {
                    return try open.execute(.holdsAdvisoryLock, [String(key)]).int64(0, 0) == 1
                } catch {
                    // A connection that dropped took the lock with it; one that answers with an error cannot
                    // prove it still holds it.
                    connection.withLock { $0 = nil }
                    return false
                }
            }
            return held ?? false
        }

        func release() async {
            let key = key
            let connection = connection
            _ = try? await PostgresAdvisoryLock.blocking(on: queue) {
                let open = connection.withLock { held in
                    defer { held = nil }
                    return held
                }
                // Unlock before closing: the server ends a closed session a moment later, and the next tryLock,
                // here or elsewhere, should find the lock free at once. Closing (when `open` goes) ends the
                // session, and with it the lock, even if the unlock failed.
                _ = try? open?.execute(.advisoryUnlock, [String(key)])
            }
        }
    }
}
