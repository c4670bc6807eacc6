public import IAPCore

/// The checks every ``ExclusiveRunLock`` must pass.
///
/// A scheduler in each instance of a fleet asks the lock before a job; if two instances could both hold it, the job
/// runs twice at once (two reconcilers pacing Apple's API independently); if a lease could outlive its holder, the job
/// stops for good. The suite checks the protocol's contract: of concurrent tries, from two instances, one wins; the
/// holder refuses everyone, itself included; a release frees the lock at once and a stale release frees nothing; a
/// dropped lease frees the lock; locks of different names are independent; ``ExclusiveRunLock/runExclusively(isolation:_:)``
/// releases after its body. It imports neither XCTest nor Testing; it returns a ``ConformanceReport``.
///
/// `openLock` opens the lock of a name as another instance of the fleet would: a new object on the same shared
/// storage (the same database and schema, the same directory). Each check uses names of its own, so one storage can
/// serve the whole run, but no one else may use those names (`conformance-` followed by the check's name) meanwhile.
///
/// ```swift
/// @Test func redisLocksConform() async {
///     let redis = RedisTestDatabase()
///     let report = await ExclusiveRunLockConformance { name in
///         try RedisLock(name: name, url: redis.url)
///     }.run()
///     #expect(report.failures.isEmpty, "\(report)")
/// }
/// ```
public struct ExclusiveRunLockConformance: Sendable {
    /// How a check opens locks.
    struct Subject: Sendable {
        let open: @Sendable (String) async throws -> any ExclusiveRunLock
    }

    private let openLock: @Sendable (String) async throws -> any ExclusiveRunLock

    /// Creates the suite for one implementation.
    ///
    /// - Parameter openLock: Opens the lock of a name as a new instance would, on the storage the fleet shares.
    public init(openLock: @escaping @Sendable (_ name: String) async throws -> any ExclusiveRunLock) {
        self.openLock = openLock
    }

    /// The names of every check, in the order ``run()`` runs them.
    public static var checkNames: [String] {
        suite.checkNames
    }

    /// Runs every check.
    ///
    /// - Returns: The report; ``ConformanceReport/failures`` is empty when the implementation conforms.
    public func run() async -> ConformanceReport {
        await Self.suite.run(making: subject)
    }

    /// Runs the check with the given name.
    ///
    /// - Parameter name: One of ``checkNames``.
    /// - Returns: A report of that one check, or a failure naming the known checks if there is none by that name.
    public func check(named name: String) async -> ConformanceReport {
        await Self.suite.check(named: name, making: subject)
    }

    private var subject: @Sendable () async throws -> Subject {
        { [openLock] in Subject(open: openLock) }
    }

    private static let suite = ConformanceSuite<Subject>(
        name: "ExclusiveRunLock",
        noun: "lock",
        checks: [
            .init(
                name: "oneOfConcurrentTriesWins",
                requirement: "of 10 concurrent tryLock calls on each of two instances of one lock, exactly one gets "
                    + "a lease",
                body: oneOfConcurrentTriesWins
            ),
            .init(
                name: "theHolderRefusesEveryone",
                requirement: "while a lease holds the lock, tryLock answers nil on the holder's instance and on "
                    + "another, and runExclusively answers nil without running its body",
                body: theHolderRefusesEveryone
            ),
            .init(
                name: "releaseFreesTheLockAtOnce",
                requirement: "after release, the lease's isHeld is false and another instance's tryLock gets the "
                    + "lock at once",
                body: releaseFreesTheLockAtOnce
            ),
            .init(
                name: "aStaleReleaseFreesNothing",
                requirement: "releasing a released lease again, once another lease holds the lock, leaves that "
                    + "lease holding it",
                body: aStaleReleaseFreesNothing
            ),
            .init(
                name: "aDroppedLeaseFreesTheLock",
                requirement: "a lease dropped without release frees the lock (within 5 s)",
                body: aDroppedLeaseFreesTheLock
            ),
            .init(
                name: "namesAreIndependent",
                requirement: "a lease on one name does not hold a lock of another name",
                body: namesAreIndependent
            ),
            .init(
                name: "runExclusivelyReleasesAfterItsBody",
                requirement: "runExclusively returns its body's value, or rethrows its error, and frees the lock "
                    + "either way",
                body: runExclusivelyReleasesAfterItsBody
            ),
        ]
    )

    // MARK: Checks

    private typealias Fixtures = ConformanceFixtures

    private struct BodyFailure: Error {}

    /// Two instances of the lock of a check's name.
    private static func pair(_ subject: Subject, _ check: String) async throws -> (
        any ExclusiveRunLock, any ExclusiveRunLock
    ) {
        let name = "conformance-" + check
        return (try await subject.open(name), try await subject.open(name))
    }

    /// Tries the lock until it is granted, for at most 5 s; `nil` if it never was.
    private static func tryLockWithin5Seconds(_ lock: any ExclusiveRunLock) async throws -> (any ExclusiveRunLease)? {
        for _ in 0..<250 {
            if let lease = try await lock.tryLock() {
                return lease
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    @Sendable
    static func oneOfConcurrentTriesWins(_ subject: Subject) async throws {
        let (first, second) = try await pair(subject, "oneOfConcurrentTriesWins")
        let leases = try await withThrowingTaskGroup(of: (any ExclusiveRunLease)?.self) { group in
            for index in 0..<20 {
                let lock = index.isMultiple(of: 2) ? first : second
                group.addTask { try await lock.tryLock() }
            }
            var leases: [any ExclusiveRunLease] = []
            for try await lease in group {
                if let lease {
                    leases.append(lease)
                }
            }
            return leases
        }
        let held = await leases.first?.isHeld() ?? false
        for lease in leases {
            await lease.release()
        }
        try Fixtures.require(
            leases.count == 1,
            "of 20 concurrent tryLock calls on two instances, \(leases.count) got a lease; exactly one must (ask and "
                + "take the lock in one atomic step)"
        )
        try Fixtures.require(held, "the one lease granted answered isHeld() == false before it was released")
    }

    @Sendable
    static func theHolderRefusesEveryone(_ subject: Subject) async throws {
        let (holder, other) = try await pair(subject, "theHolderRefusesEveryone")
        guard let lease = try await holder.tryLock() else {
            throw ConformanceViolation("tryLock on a lock nobody holds answered nil")
        }
        let again = try await holder.tryLock()
        let elsewhere = try await other.tryLock()
        let ran = LockedValue(false)
        let exclusive = try await other.runExclusively { _ in
            ran.withLock { $0 = true }
            return true
        }
        let stillHeld = await lease.isHeld()
        await again?.release()
        await elsewhere?.release()
        await lease.release()
        var problems: [String] = []
        if again != nil {
            problems.append("a second tryLock on the holder's instance got a lease; it must answer nil")
        }
        if elsewhere != nil {
            problems.append("tryLock on another instance got a lease while the lock was held; it must answer nil")
        }
        if exclusive != nil || ran.withLock({ $0 }) {
            problems.append("runExclusively on another instance ran its body while the lock was held")
        }
        if !stillHeld {
            problems.append("the lease answered isHeld() == false while it held the lock")
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    static func releaseFreesTheLockAtOnce(_ subject: Subject) async throws {
        let (first, second) = try await pair(subject, "releaseFreesTheLockAtOnce")
        guard let lease = try await first.tryLock() else {
            throw ConformanceViolation("tryLock on a lock nobody holds answered nil")
        }
        await lease.release()
        let held = await lease.isHeld()
        let next = try await second.tryLock()
        await next?.release()
        try Fixtures.require(!held, "a released lease answered isHeld() == true")
        try Fixtures.require(
            next != nil,
            "after release, tryLock on another instance answered nil; it must get the lock"
        )
    }

    @Sendable
    static func aStaleReleaseFreesNothing(_ subject: Subject) async throws {
        let (first, second) = try await pair(subject, "aStaleReleaseFreesNothing")
        guard let stale = try await first.tryLock() else {
            throw ConformanceViolation("tryLock on a lock nobody holds answered nil")
        }
        await stale.release()
        guard let current = try await second.tryLock() else {
            throw ConformanceViolation("after release, tryLock on another instance answered nil")
        }
        await stale.release()
        let intruder = try await first.tryLock()
        let held = await current.isHeld()
        await intruder?.release()
        await current.release()
        try Fixtures.require(
            intruder == nil && held,
            "releasing a lease a second time freed the lock another lease held since (a release must free only "
                + "its own grant)"
        )
    }

    @Sendable
    static func aDroppedLeaseFreesTheLock(_ subject: Subject) async throws {
        let (first, second) = try await pair(subject, "aDroppedLeaseFreesTheLock")
        var lease = try await first.tryLock()
        try Fixtures.require(lease != nil, "tryLock on a lock nobody holds answered nil")
        lease = nil
        let next = try await tryLockWithin5Seconds(second)
        await next?.release()
        try Fixtures.require(
            next != nil,
            "5 s after a lease was dropped without release, another instance still could not take the lock; a lease "
                + "must release its lock when it goes"
        )
    }

    @Sendable
    static func namesAreIndependent(_ subject: Subject) async throws {
        let one = try await subject.open("conformance-namesAreIndependent-1")
        let two = try await subject.open("conformance-namesAreIndependent-2")
        guard let lease = try await one.tryLock() else {
            throw ConformanceViolation("tryLock on a lock nobody holds answered nil")
        }
        let other = try await two.tryLock()
        await other?.release()
        await lease.release()
        try Fixtures.require(other != nil, "a lease on one name kept tryLock of another name from getting a lease")
    }

    @Sendable
    static func runExclusivelyReleasesAfterItsBody(_ subject: Subject) async throws {
        let (first, second) = try await pair(subject, "runExclusivelyReleasesAfterItsBody")
        let value = try await first.runExclusively { lease in await lease.isHeld() ? 42 : -1 }
        try Fixtures.require(
            value == 42,
            "runExclusively on a free lock answered \(value.map(String.init) ?? "nil"); it must run its body, "
                + "holding the lock, and return its value"
        )
        let afterValue = try await second.tryLock()
        await afterValue?.release()
        try Fixtures.require(afterValue != nil, "after runExclusively returned, the lock was still held")
        do {
            _ = try await first.runExclusively { _ -> Int in throw BodyFailure() }
            throw ConformanceViolation("runExclusively did not rethrow the error of its body")
        } catch is BodyFailure {
        }
        let afterError = try await second.tryLock()
        await afterError?.release()
        try Fixtures.require(afterError != nil, "after runExclusively's body threw, the lock was still held")
    }
}
