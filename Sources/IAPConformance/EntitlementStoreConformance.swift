public import IAPCore

/// The checks every ``EntitlementStore`` backend must pass.
///
/// The delivery pipeline's exactly-once guarantee is only as good as the store under it, so a backend
/// proves itself by passing this suite: swift-iap's own in-memory and file stores, and any store an
/// integrator writes over PostgreSQL, Redis or anything else. The suite imports neither XCTest nor
/// Testing; it returns a ``ConformanceReport`` that any test framework can assert on.
///
/// Each check gets its own store from `makeStore`, which must return a new, empty store every time (for a
/// database, a fresh schema or a truncated table). The checks only use the public ``EntitlementStore``
/// API, write whole-millisecond dates, and run one after another; some of them call the store from
/// hundreds of tasks at once.
///
/// ```swift
/// @Test func redisStoreConforms() async {
///     let report = await EntitlementStoreConformance {
///         try await RedisEntitlementStore(connection: .fresh())
///     }.run()
///     #expect(report.failures.isEmpty, "\(report)")
/// }
/// ```
///
/// To rerun one failing check, pass its name to ``check(named:)``; ``checkNames`` lists them all.
public struct EntitlementStoreConformance: Sendable {
    private let makeStore: @Sendable () async throws -> any EntitlementStore

    /// Creates the suite for one backend.
    ///
    /// - Parameter makeStore: Returns a new, empty store each time it is called.
    public init(makeStore: @escaping @Sendable () async throws -> any EntitlementStore) {
        self.makeStore = makeStore
    }

    /// The names of every check, in the order ``run()`` runs them.
    public static var checkNames: [String] {
        checks.map(\.name)
    }

    /// Runs every check, each against a fresh store.
    ///
    /// - Returns: The report; ``ConformanceReport/failures`` is empty when the backend conforms.
    public func run() async -> ConformanceReport {
        await run(Self.checks)
    }

    /// Runs the check with the given name against a fresh store.
    ///
    /// - Parameter name: One of ``checkNames``.
    /// - Returns: A report of that one check, or a failure naming the known checks if there is none by that name.
    public func check(named name: String) async -> ConformanceReport {
        guard let check = Self.checks.first(where: { $0.name == name }) else {
            let failure = ConformanceReport.Failure(
                check: name,
                requirement: "a check of that name exists",
                message: "there is no check named \"\(name)\"; the checks are: "
                    + Self.checkNames.joined(separator: ", ")
            )
            return ConformanceReport(suite: Self.suiteName, failures: [failure])
        }
        return await run([check])
    }

    private static let suiteName = "EntitlementStore"

    private func run(_ checks: [ConformanceCheck]) async -> ConformanceReport {
        var report = ConformanceReport(suite: Self.suiteName)
        for check in checks {
            if let problems = await problems(running: check) {
                report.failures.append(
                    ConformanceReport.Failure(
                        check: check.name,
                        requirement: check.requirement,
                        message: problems
                    )
                )
            } else {
                report.passed.append(check.name)
            }
        }
        return report
    }

    /// Runs one check against a fresh store; returns what went wrong, or `nil` if it passed.
    private func problems(running check: ConformanceCheck) async -> String? {
        let store: any EntitlementStore
        do {
            store = try await makeStore()
        } catch {
            return "makeStore threw \(error); the check could not run"
        }
        do {
            let statistics = try await store.statistics()
            if statistics.transactions != 0 || statistics.users != 0 {
                return "makeStore returned a store that already holds \(statistics.transactions) transactions of "
                    + "\(statistics.users) users; every check needs a new, empty store"
            }
            try await check.body(store)
            return nil
        } catch let violation as ConformanceViolation {
            return violation.description
        } catch let error as IAPError {
            return "the store threw IAPError(.\(error.code)): \(error.message), on input the contract accepts"
        } catch {
            return "the store threw \(type(of: error)): \(error); a store must throw only IAPError"
        }
    }

    /// Every check, in the order ``run()`` runs them.
    static let checks: [ConformanceCheck] =
        transactionChecks + signedTransactionChecks + historyChecks + deliveryChecks + keyedChecks + integrityChecks
}
