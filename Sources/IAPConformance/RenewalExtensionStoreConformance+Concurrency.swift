#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPServerAPI

extension RenewalExtensionStoreConformance {
    private typealias Fixtures = ConformanceFixtures

    /// Begins every request at once, each from its own task; returns the outcomes in the order of `requests`.
    private static func beginAtOnce(
        _ requests: [RenewalExtensionRecord],
        in store: any RenewalExtensionStore,
        limit: Int
    ) async throws -> [RenewalExtensionBeginOutcome] {
        try await withThrowingTaskGroup(of: (Int, RenewalExtensionBeginOutcome).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask { (index, try await store.begin(request, limit: limit, since: .distantPast)) }
            }
            var outcomes = [RenewalExtensionBeginOutcome?](repeating: nil, count: requests.count)
            for try await (index, outcome) in group {
                outcomes[index] = outcome
            }
            return outcomes.compactMap { $0 }
        }
    }

    /// The one `.started` record among outcomes of one identifier, after checking that every other is `.existing`
    /// with it.
    private static func requireStartedOnce(
        _ outcomes: [RenewalExtensionBeginOutcome],
        _ what: String
    ) throws -> RenewalExtensionRecord {
        let started = outcomes.compactMap { outcome -> RenewalExtensionRecord? in
            if case .started(let record) = outcome { record } else { nil }
        }
        guard started.count == 1, let winner = started.first else {
            throw ConformanceViolation(
                "of \(outcomes.count) concurrent begins of \(what), \(started.count) returned .started; exactly one "
                    + "must (check for the identifier and insert it in one atomic step)"
            )
        }
        let others = outcomes.filter { $0 != .started(winner) && $0 != .existing(winner) }
        try Fixtures.require(
            others.isEmpty,
            "of the other begins of \(what), \(others.count) did not return .existing(\(describe(winner))), such as "
                + (others.first.map(describe) ?? "")
        )
        return winner
    }

    @Sendable
    static func concurrentBeginsOfOneIdentifier(_ subject: Subject) async throws {
        let request = request("same", day: 0)
        let outcomes = try await beginAtOnce(Array(repeating: request, count: 50), in: subject.store, limit: 1_000)
        let winner = try requireStartedOnce(outcomes, "one identifier")
        try await requireRecords([winner], in: subject.store, "after 50 concurrent begins of one identifier")
    }

    @Sendable
    static func concurrentBeginsOfOneIdentifierOnManySubscriptions(_ subject: Subject) async throws {
        let originals = (1...20).map { "20000000000001\($0 + 10)" }
        let outcomes = try await beginAtOnce(
            originals.map { request("shared", for: $0, day: 0) },
            in: subject.store,
            limit: 2
        )
        let winner = try requireStartedOnce(outcomes, "one identifier for 20 subscriptions")
        var stored: [RenewalExtensionRecord] = []
        for original in originals {
            stored += try await subject.store.records(originalTransactionId: original)
        }
        try Fixtures.require(
            stored == [winner],
            "after 20 concurrent begins of identifier shared, each for another subscription, the subscriptions hold "
                + "\(stored.count) records (\(stored.map(\.originalTransactionId).joined(separator: ", "))); "
                + "expected only \(describe(winner))"
        )
    }

    @Sendable
    static func concurrentBeginsKeepTheLimit(_ subject: Subject) async throws {
        let requests = (0..<50).map { request("request-\($0)", day: 0) }
        let outcomes = try await beginAtOnce(requests, in: subject.store, limit: 2)
        var started: [String] = []
        var refused = 0
        var problems: [String] = []
        for outcome in outcomes {
            switch outcome {
            case .started(let record):
                started.append(record.requestIdentifier)
            case .limitReached(let live):
                refused += 1
                if live.count != 2 {
                    problems.append("a .limitReached carried \(live.count) live records, not the 2 that filled it")
                }
            case .existing(let record):
                problems.append("a new identifier returned .existing(\(describe(record)))")
            }
        }
        if started.count != 2 || refused != 48 {
            problems.insert(
                "of 50 concurrent begins for one subscription with limit 2, \(started.count) returned .started and "
                    + "\(refused) .limitReached; expected 2 and 48 (decide and insert in one step, per subscription)",
                at: 0
            )
        }
        let stored = try await subject.store.records(originalTransactionId: subscription)
        if Set(stored.map(\.requestIdentifier)) != Set(started) || stored.count != started.count {
            problems.append("the subscription holds \(describe(stored)); the started ones were \(started)")
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: Array(Set(problems)).sorted())
        }
    }

    @Sendable
    static func recordsSurviveReopen(_ subject: Subject) async throws {
        let first = completed(try await beginNew(request("a", day: 0), in: subject.store), .succeeded, day: 0)
        try await subject.store.complete(first)
        let second = try await beginNew(request("b", day: 1), in: subject.store)
        let other = completed(
            try await beginNew(request("c", for: "2000000000000002", day: 2), in: subject.store),
            .failed,
            day: 2
        )
        try await subject.store.complete(other)

        let reopened = try await subject.reopen(subject.store)
        try await requireRecords([first, second], in: reopened, "after reopening")
        try await requireRecords([other], of: "2000000000000002", in: reopened, "after reopening")
        try await requireStored(second, in: reopened, "after reopening")
        let third = try await reopened.begin(request("d", day: 3), limit: 2, since: .distantPast)
        try Fixtures.require(
            third == .limitReached([first, second]),
            "after reopening, a third request within the window returned \(describe(third)); expected "
                + ".limitReached([a, b])"
        )
        let again = try await reopened.begin(request("a", day: 0), limit: 2, since: .distantPast)
        try Fixtures.require(
            again == .existing(first),
            "after reopening, begin of known identifier a returned \(describe(again)); expected .existing(a)"
        )
    }
}
