import IAPConformance
import IAPCore
import IAPInMemory
import Testing

/// A lock with one deliberate flaw, to prove that the lock suite is not vacuous.
final class FlawedRunLock: ExclusiveRunLock {
    enum Flaw: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// `tryLock` checks, yields, then takes.
        case nonAtomic
        /// The holder's own instance grants a second lease.
        case reentrant
        /// A release frees the lock whoever holds it.
        case releaseFreesAnyHolder
        /// A dropped lease keeps the lock.
        case dropKeepsTheLock
        /// Every name shares one lock.
        case oneLockForEveryName

        var testDescription: String { rawValue }

        var expectedFailures: Set<String> {
            switch self {
            case .nonAtomic: ["oneOfConcurrentTriesWins"]
            case .reentrant: ["oneOfConcurrentTriesWins", "theHolderRefusesEveryone"]
            case .releaseFreesAnyHolder: ["aStaleReleaseFreesNothing"]
            case .dropKeepsTheLock: ["aDroppedLeaseFreesTheLock"]
            case .oneLockForEveryName: ["namesAreIndependent"]
            }
        }
    }

    /// The state every instance of one name shares: the holder's grant number and instance.
    final class Shared: Sendable {
        let holder = LockedValue<(grant: Int, instance: ObjectIdentifier)?>(nil)
        let grants = LockedValue(0)
        /// How many tries have asked whether the lock is free (the non-atomic flaw's gap waits on it).
        let asked = LockedValue(0)
    }

    final class Lease: ExclusiveRunLease {
        let shared: Shared
        let grant: Int
        let flaw: Flaw

        init(shared: Shared, grant: Int, flaw: Flaw) {
            self.shared = shared
            self.grant = grant
            self.flaw = flaw
        }

        deinit {
            if flaw != .dropKeepsTheLock {
                shared.holder.withLock { if $0?.grant == grant { $0 = nil } }
            }
        }

        func isHeld() -> Bool {
            shared.holder.withLock { $0?.grant == grant }
        }

        func release() {
            shared.holder.withLock { if $0?.grant == grant || flaw == .releaseFreesAnyHolder { $0 = nil } }
        }
    }

    let name: String
    let flaw: Flaw
    let shared: Shared

    init(name: String, flaw: Flaw, shared: Shared) {
        self.name = name
        self.flaw = flaw
        self.shared = shared
    }

    func tryLock() async -> (any ExclusiveRunLease)? {
        let me = ObjectIdentifier(self)
        guard flaw == .nonAtomic else {
            // Every other flaw asks and takes in one atomic step, so only its own flaw can fail a check.
            let grant: Int? = shared.holder.withLock { holder in
                guard holder == nil || (flaw == .reentrant && holder?.instance == me) else {
                    return nil
                }
                let grant = shared.grants.withLock {
                    $0 += 1
                    return $0
                }
                holder = (grant, me)
                return grant
            }
            return grant.map { Lease(shared: shared, grant: $0, flaw: flaw) }
        }
        guard shared.holder.withLock({ $0 == nil }) else {
            return nil
        }
        // The gap between asking and taking, held open until another try has asked too (or 300 ms passed): the race
        // is then certain whenever tries run concurrently, however the machine schedules them.
        let asked = shared.asked.withLock {
            $0 += 1
            return $0
        }
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(300))
        while shared.asked.withLock({ $0 }) == asked, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        let grant = shared.grants.withLock {
            $0 += 1
            return $0
        }
        shared.holder.withLock { $0 = (grant, me) }
        return Lease(shared: shared, grant: grant, flaw: flaw)
    }
}

/// Opens locks (or their state) by name: every call with one name gets the same one, as instances of a fleet share a
/// database.
final class LockRegistry<Lock: Sendable>: Sendable {
    private let locks = LockedValue<[String: Lock]>([:])
    private let make: @Sendable (String) -> Lock

    init(_ make: @escaping @Sendable (String) -> Lock) {
        self.make = make
    }

    func open(_ name: String) -> Lock {
        locks.withLock { locks in
            if let lock = locks[name] {
                return lock
            }
            let lock = make(name)
            locks[name] = lock
            return lock
        }
    }
}

@Suite("ExclusiveRunLock and its conformance suite")
struct ExclusiveRunLockTests {
    @Test func theInMemoryLockConforms() async {
        let registry = LockRegistry { InMemoryExclusiveRunLock(name: $0) }
        let report = await ExclusiveRunLockConformance { registry.open($0) }.run()
        #expect(report.succeeded, "\(report)")
        #expect(report.passed == ExclusiveRunLockConformance.checkNames)
    }

    @Test(arguments: FlawedRunLock.Flaw.allCases)
    func theSuiteCatchesAFlawedLock(flaw: FlawedRunLock.Flaw) async {
        let states = LockRegistry { _ in FlawedRunLock.Shared() }
        // Two instances of one name are two objects on one shared state.
        let report = await ExclusiveRunLockConformance { name in
            FlawedRunLock(name: name, flaw: flaw, shared: states.open(flaw == .oneLockForEveryName ? "" : name))
        }.run()
        #expect(Set(report.failedChecks) == flaw.expectedFailures, "\(report)")
        #expect(report.passed.count + report.failures.count == ExclusiveRunLockConformance.checkNames.count)
    }

    @Test func aJobNoticesWhenItsLockIsTakenAwayAndAnotherInstanceTakesOver() async throws {
        let lock = InMemoryExclusiveRunLock(name: "reconcile")
        let steps = try await lock.runExclusively { lease in
            var steps = 0
            while await lease.isHeld(), steps < 10 {
                steps += 1
                if steps == 3 {
                    // The database dropped the holder's connection.
                    lock.dropHolder()
                }
            }
            let takeover = try await lock.runExclusively { _ in "taken over" }
            #expect(takeover == "taken over")
            return steps
        }
        #expect(steps == 3)
        #expect(lock.grants == 2)
        #expect(!lock.isLocked)
    }

    @Test func runExclusivelySkipsATurnWhileAnotherHolderRuns() async throws {
        let lock = InMemoryExclusiveRunLock(name: "reconcile")
        let lease = try #require(await lock.tryLock())
        let ran = LockedValue(0)
        let skipped = try await lock.runExclusively { _ in
            ran.withLock { $0 += 1 }
            return true
        }
        #expect(skipped == nil)
        #expect(ran.withLock { $0 } == 0)
        await lease.release()
        #expect(
            try await lock.runExclusively { _ in
                ran.withLock { $0 += 1 }
                return true
            } == true
        )
        #expect(ran.withLock { $0 } == 1)
    }
}
