import IAPCore

/// How a ``PostgresTransactionalFulfillmentStore`` lets concurrent deliveries share one commit.
///
/// Every delivery of transactional fulfillment is a transaction, and every commit waits for PostgreSQL to flush
/// the write-ahead log to disk. With group commit, the deliveries that wait for the database at the same moment
/// are written in one transaction, each in its own `SAVEPOINT`, and committed together: one WAL flush for the
/// group. A delivery that fails (its id taken, a revision changed, its grant threw, its statement failed) is
/// rolled back to its savepoint and gets its own answer; the others go on. Every caller returns only after the
/// commit that holds its write succeeded, so a delivery is as durable as without grouping. If the commit itself
/// fails, every delivery of the group fails with it and none of them is kept.
///
/// What it costs: the deliveries of a group wait for each other (one slow grant delays its group), and what a
/// grant leaves in the transaction beyond its rows lasts until the group commits (`SET LOCAL`, advisory
/// transaction locks, constraints deferred to the commit, which then fail the whole group). See
/// `Documentation/Postgres.md`.
public struct PostgresGroupCommit: Sendable, Hashable {
    /// The most deliveries one transaction holds (2 to 64). PostgreSQL keeps up to 64 subtransactions of one
    /// transaction in shared memory; more would slow every other session's snapshots.
    public var maximumDeliveries: Int
    /// How many group transactions may be open at once (1 up to the store's pool size), or `nil` for half the
    /// pool: while one group waits for its commit, the others run their statements.
    public var concurrentGroups: Int?

    /// Creates a group commit configuration.
    ///
    /// - Parameters:
    ///   - maximumDeliveries: The most deliveries in one transaction.
    ///   - concurrentGroups: How many groups may be open at once; `nil` for half the store's pool.
    public init(maximumDeliveries: Int = 32, concurrentGroups: Int? = nil) {
        self.maximumDeliveries = maximumDeliveries
        self.concurrentGroups = concurrentGroups
    }

    /// How many groups may be open at once with a pool of `poolSize` connections.
    func groups(poolSize: Int) -> Int {
        concurrentGroups ?? max(1, poolSize / 2)
    }

    /// Checks the limits against the store's pool.
    func validate(poolSize: Int) throws {
        guard (2...64).contains(maximumDeliveries) else {
            throw IAPError(
                .invalidConfiguration,
                "a group commit holds from 2 to 64 deliveries, got \(maximumDeliveries)"
            )
        }
        let groups = groups(poolSize: poolSize)
        guard (1...poolSize).contains(groups) else {
            throw IAPError(
                .invalidConfiguration,
                "a group commit runs from 1 group to as many as the pool has connections (\(poolSize)), got \(groups)"
            )
        }
    }
}

/// The transaction one delivery runs in: a transaction of its own, or a savepoint in its group's transaction.
///
/// The first statement of a delivery travels with what opens it (`BEGIN`, and for a group the release of the
/// previous delivery's savepoint and the new savepoint) in one round trip.
final class PostgresDeliveryTransaction {
    /// The savepoint each delivery of a group runs under (released before the next delivery sets it again).
    private static let savepoint: StaticString = "SAVEPOINT iap_delivery"

    let connection: PostgresConnection
    /// Whether deliveries share the transaction, each under a savepoint.
    let grouped: Bool
    /// Whether a delivery alone runs its statement without `BEGIN` (a write of one statement, which commits on its
    /// own); only when not ``grouped``.
    let autocommit: Bool
    /// Whether a delivery's savepoint is set and not released.
    private var savepointSet = false
    /// Whether the current delivery opened itself (its savepoint set, in a group): only then can it be undone alone.
    private var currentOpened = false

    init(_ connection: PostgresConnection, grouped: Bool, autocommit: Bool = false) {
        self.connection = connection
        self.grouped = grouped
        self.autocommit = autocommit && !grouped
    }

    /// Starts the next delivery: nothing of it is written yet.
    func next() {
        currentOpened = false
    }

    /// Opens the next delivery and runs its first statement, in one round trip.
    ///
    /// - Parameters:
    ///   - statement: The delivery's first statement (its insert or compare-and-set).
    ///   - parameters: The statement's parameters.
    /// - Returns: The statement's result.
    /// - Throws: ``IAPError`` as `PostgresConnection.execute(_:_:)`; ``undo()`` then.
    func open(with statement: PostgresStatement, _ parameters: [String?]) throws -> PostgresResult {
        var commands: [StaticString] = []
        currentOpened = true
        if !connection.isInTransaction, !autocommit {
            commands.append("BEGIN")
            savepointSet = false
        }
        if grouped {
            if savepointSet {
                commands.append("RELEASE SAVEPOINT iap_delivery")
            }
            commands.append(Self.savepoint)
            savepointSet = true
        }
        return try connection.execute(after: commands, statement, parameters)
    }

    /// Undoes what the current delivery wrote: back to its savepoint in a group, the whole transaction otherwise.
    ///
    /// - Returns: Whether the transaction can go on with the next delivery (a group's, after a rollback to the
    ///   savepoint); `false` when it was rolled back or lost.
    func undo() -> Bool {
        if grouped, !currentOpened {
            // It failed before it opened: it wrote nothing, and the savepoint is the previous delivery's. The group
            // goes on unless a statement it read with failed the transaction, which then goes whole.
            guard connection.isIdle || connection.isInTransaction else {
                connection.rollback()
                savepointSet = false
                return false
            }
            return true
        }
        guard grouped, savepointSet, connection.isOpen, !connection.isIdle else {
            connection.rollback()
            savepointSet = false
            return false
        }
        do {
            try connection.execute(sql: "ROLLBACK TO SAVEPOINT iap_delivery")
            return true
        } catch {
            connection.rollback()
            savepointSet = false
            return false
        }
    }
}

/// Gathers concurrent deliveries into shared transactions: group commit on the client's side.
///
/// A delivery is queued; up to ``PostgresGroupCommit/concurrentGroups`` lanes each take what is queued (up to
/// ``PostgresGroupCommit/maximumDeliveries``), run it on a pooled connection in one transaction, commit, and
/// answer every delivery of the group; then they take the next group. A delivery queued while every lane is busy
/// waits for the next group, which is how groups form.
final class PostgresGroupCommitter: Sendable {
    /// One queued delivery: its work, and how its caller is answered.
    struct Item: Sendable {
        /// The order deliveries run in within a group (the user, then the transaction id), so that groups take
        /// the locks of rows keyed by them in the same order and rarely wait for each other in a cycle.
        let order: String
        /// Runs the delivery in the open transaction (after ``PostgresDeliveryTransaction/open(with:_:)``, which
        /// it calls) and keeps its answer.
        let run: @Sendable (PostgresDeliveryTransaction) throws -> Void
        /// Answers the caller: with the kept answer (`nil`), or with an error.
        let finish: @Sendable ((any Error)?) -> Void
    }

    private struct State {
        var queue: [Item] = []
        var lanes = 0
        /// The groups of more than one delivery run so far (for tests that look whether groups form).
        var sharedGroups = 0
    }

    private let pool: PostgresConnectionPool
    private let maximumDeliveries: Int
    private let groups: Int
    /// Whether a group of one runs without a transaction of its own (each delivery is one statement).
    private let autocommitAlone: Bool
    private let state = LockedValue(State())

    /// Creates a committer.
    ///
    /// - Parameters:
    ///   - pool: The connections the groups run on.
    ///   - configuration: The sizes of groups.
    ///   - poolSize: The pool's size.
    ///   - autocommitAlone: Whether a delivery alone in its group runs without `BEGIN` and `COMMIT`: for writes of
    ///     one statement (the ledger's inserts and compare-and-sets), which commit on their own.
    init(
        pool: PostgresConnectionPool,
        configuration: PostgresGroupCommit,
        poolSize: Int,
        autocommitAlone: Bool = false
    ) {
        self.pool = pool
        maximumDeliveries = configuration.maximumDeliveries
        groups = configuration.groups(poolSize: poolSize)
        self.autocommitAlone = autocommitAlone
    }

    /// The deliveries queued and not yet taken by a group (for tests that build a group).
    var queued: Int {
        state.withLock { $0.queue.count }
    }

    /// How many groups of more than one delivery ran.
    var sharedGroups: Int {
        state.withLock { $0.sharedGroups }
    }

    /// Runs a delivery in the next group and returns its answer once the group committed.
    ///
    /// - Parameters:
    ///   - order: Its place in a group (see ``Item/order``).
    ///   - body: The delivery: opens itself on the transaction and runs its statements; throws to be undone.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw, or the commit's error (nothing of the group was kept then).
    func submit<Value: Sendable>(
        order: String,
        _ body: @escaping @Sendable (PostgresDeliveryTransaction) throws -> Value
    ) async throws -> Value {
        let answer = LockedValue<Value?>(nil)
        return try await withCheckedThrowingContinuation { continuation in
            let item = Item(
                order: order,
                run: { transaction in
                    let value = try body(transaction)
                    answer.withLock { $0 = value }
                },
                finish: { error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let value = answer.withLock({ $0 }) {
                        continuation.resume(returning: value)
                    } else {
                        continuation.resume(throwing: IAPError(.internalError, "a grouped delivery has no answer"))
                    }
                }
            )
            let startLane = state.withLock { state -> Bool in
                state.queue.append(item)
                guard state.lanes < groups else {
                    return false
                }
                state.lanes += 1
                return true
            }
            if startLane {
                Task { await self.lane() }
            }
        }
    }

    /// Takes groups and commits them until the queue is empty.
    private func lane() async {
        while let group = take() {
            if group.count > 1 {
                state.withLock { $0.sharedGroups += 1 }
            }
            do {
                let autocommit = autocommitAlone
                let again = try await pool.run { connection in
                    Self.commit(group, on: connection, autocommitAlone: autocommit)
                }
                if !again.isEmpty {
                    state.withLock { $0.queue.insert(contentsOf: again, at: 0) }
                }
            } catch {
                // No connection could be had: nothing ran.
                for item in group {
                    item.finish(error)
                }
            }
        }
    }

    /// The next group, or `nil` (and the lane ends) when nothing is queued.
    private func take() -> [Item]? {
        state.withLock { state -> [Item]? in
            guard !state.queue.isEmpty else {
                state.lanes -= 1
                return nil
            }
            let count = min(state.queue.count, maximumDeliveries)
            let group = Array(state.queue.prefix(count))
            state.queue.removeFirst(count)
            return group
        }
    }

    /// Runs one delivery in a transaction of its own on `connection`, and commits it.
    ///
    /// - Parameters:
    ///   - connection: The connection.
    ///   - body: The delivery, as for ``submit(order:_:)``.
    /// - Returns: What `body` returned, once committed.
    /// - Throws: What `body` threw, or the commit's error.
    static func commitAlone<Value: Sendable>(
        on connection: PostgresConnection,
        _ body: @escaping @Sendable (PostgresDeliveryTransaction) throws -> Value
    ) throws -> Value {
        let answer = LockedValue<Result<Value, any Error>?>(nil)
        let item = Item(
            order: "",
            run: { transaction in
                let value = try body(transaction)
                answer.withLock { $0 = .success(value) }
            },
            finish: { error in
                if let error {
                    answer.withLock { $0 = .failure(error) }
                }
            }
        )
        _ = commit([item], on: connection)
        guard let result = answer.withLock({ $0 }) else {
            throw IAPError(.internalError, "a delivery has no answer")
        }
        return try result.get()
    }

    /// Runs deliveries in one transaction on `connection` and commits it; answers every delivery it settled.
    ///
    /// A group of one runs as a transaction of its own, without a savepoint (or, with `autocommitAlone`, as its
    /// statement alone).
    ///
    /// - Returns: The deliveries to run again in a later group: those not yet committed when the transaction was
    ///   lost before its commit (nothing of them was kept).
    static func commit(_ items: [Item], on connection: PostgresConnection, autocommitAlone: Bool = false) -> [Item] {
        let items = items.count > 1 ? items.sorted { $0.order < $1.order } : items
        let transaction = PostgresDeliveryTransaction(connection, grouped: items.count > 1, autocommit: autocommitAlone)
        var written: [Item] = []
        for (index, item) in items.enumerated() {
            transaction.next()
            do {
                try item.run(transaction)
                written.append(item)
            } catch {
                item.finish(error)
                if !transaction.undo() {
                    // The transaction is gone (a single delivery's, or a group's whose connection was lost): what
                    // the others wrote was not kept, and they run again.
                    return transaction.grouped ? written + items[(index + 1)...] : []
                }
            }
        }
        let outcome: (any Error)?
        if connection.isIdle {
            // No transaction is open: the deliveries that succeeded only read (an id taken, a revision changed).
            outcome = nil
        } else if !connection.isInTransaction {
            connection.rollback()
            outcome = IAPError(
                .storageFailure,
                "the transaction failed before its commit, and nothing of it was kept",
                isRetryable: true
            )
        } else {
            do {
                try connection.commit()
                outcome = nil
            } catch {
                connection.rollback()
                outcome = commitFailure(error, deliveries: items.count)
            }
        }
        for item in written {
            item.finish(outcome)
        }
        return []
    }

    /// What every delivery of a transaction whose commit failed is told: nothing of it was kept, so it is retried;
    /// a lost connection stays `storageUnavailable` (whether the commit landed is unknown).
    private static func commitFailure(_ error: any Error, deliveries: Int) -> any Error {
        guard let error = error as? IAPError else {
            return error
        }
        guard error.code != .storageUnavailable else {
            return error
        }
        return IAPError(
            .fulfillmentFailed,
            "the transaction of \(deliveries == 1 ? "this delivery" : "a group of \(deliveries) deliveries") "
                + "could not commit, and nothing of it was kept: \(error.message)",
            underlying: error,
            isRetryable: true
        )
    }
}
