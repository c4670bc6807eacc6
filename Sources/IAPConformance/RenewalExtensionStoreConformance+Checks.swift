#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPServerAPI

extension RenewalExtensionStoreConformance {
    private typealias Fixtures = ConformanceFixtures

    static let subscription = "2000000000000001"

    /// A new request as the extender makes it, requested `day` days after the fixture epoch.
    static func request(
        _ identifier: String,
        for original: String = subscription,
        day: Int64,
        days: Int32 = 10,
        reason: Int32 = 1
    ) -> RenewalExtensionRecord {
        RenewalExtensionRecord(
            requestIdentifier: identifier,
            originalTransactionId: original,
            extendByDays: days,
            reasonCode: reason,
            requestedAt: Fixtures.date(day * 86_400)
        )
    }

    /// The record with Apple's answer.
    static func completed(
        _ record: RenewalExtensionRecord,
        _ state: RenewalExtensionRecord.State,
        day: Int64
    ) -> RenewalExtensionRecord {
        var completed = record
        completed.state = state
        completed.completedAt = Fixtures.date(day * 86_400 + 5)
        if state == .succeeded {
            completed.effectiveDate = Fixtures.date((day + 40) * 86_400)
            completed.webOrderLineItemId = "9990000\(day)"
        } else {
            completed.error = "apiError: Subscription extensions are not allowed."
        }
        return completed
    }

    static func describe(_ outcome: RenewalExtensionBeginOutcome) -> String {
        switch outcome {
        case .started(let record):
            ".started(\(describe(record)))"
        case .existing(let record):
            ".existing(\(describe(record)))"
        case .limitReached(let records):
            ".limitReached(\(describe(records)))"
        }
    }

    static func describe(_ record: RenewalExtensionRecord?) -> String {
        guard let record else {
            return "nil"
        }
        return "\(record.requestIdentifier) of \(record.originalTransactionId): \(record.extendByDays) days, reason "
            + "\(record.reasonCode), \(record.state.rawValue), requested at \(record.requestedAt.millisecondsSince1970)"
    }

    static func describe(_ records: [RenewalExtensionRecord]) -> String {
        "[" + records.map(\.requestIdentifier).joined(separator: ", ") + "]"
    }

    /// Begins a request that must start, and returns it as started.
    @discardableResult
    static func beginNew(
        _ record: RenewalExtensionRecord,
        in store: any RenewalExtensionStore,
        limit: Int = 2,
        since: Date = .distantPast
    ) async throws -> RenewalExtensionRecord {
        let outcome = try await store.begin(record, limit: limit, since: since)
        guard case .started(let started) = outcome else {
            throw ConformanceViolation(
                "begin of new request \(describe(record)) with limit \(limit) returned \(describe(outcome)); "
                    + "expected .started"
            )
        }
        try Fixtures.require(
            started == record,
            "begin returned .started(\(describe(started))), which differs from the request begun (\(describe(record)))"
        )
        return started
    }

    /// Requires the record of `expected`'s identifier to equal it.
    static func requireStored(
        _ expected: RenewalExtensionRecord,
        in store: any RenewalExtensionStore,
        _ context: String
    ) async throws {
        let found = try await store.record(requestIdentifier: expected.requestIdentifier)
        try Fixtures.require(
            found == expected,
            "\(context): request \(expected.requestIdentifier) reads \(describe(found)); expected \(describe(expected))"
                + (found.map { $0.state == expected.state ? " (some field differs)" : "" } ?? "")
        )
    }

    /// Requires the records of a subscription to equal `expected`, in order.
    static func requireRecords(
        _ expected: [RenewalExtensionRecord],
        of original: String = subscription,
        in store: any RenewalExtensionStore,
        _ context: String
    ) async throws {
        let found = try await store.records(originalTransactionId: original)
        try Fixtures.require(
            found == expected,
            "\(context): records(originalTransactionId: \"\(original)\") is \(describe(found)); expected "
                + describe(expected) + (describe(found) == describe(expected) ? " (some field differs)" : "")
        )
    }

    // MARK: Checks

    @Sendable
    static func unknownIdentifierHasNoRecord(_ subject: Subject) async throws {
        let found = try await subject.store.record(requestIdentifier: "never-begun")
        try Fixtures.require(found == nil, "an identifier never begun reads \(describe(found))")
        try await requireRecords([], in: subject.store, "on an empty store")
    }

    @Sendable
    static func beginStoresTheRequest(_ subject: Subject) async throws {
        let first = try await beginNew(request("outage-1", day: 0, days: 30, reason: 3), in: subject.store)
        try await requireStored(first, in: subject.store, "after begin")
        try await requireRecords([first], in: subject.store, "after begin")
    }

    @Sendable
    static func existingIdentifierWins(_ subject: Subject) async throws {
        let store = subject.store
        let first = try await beginNew(request("a", day: 0), in: store)
        try await beginNew(request("b", day: 1), in: store)
        let attempts: [(String, RenewalExtensionRecord, Int)] = [
            ("the same request again", request("a", day: 0), 2),
            ("other days and reason", request("a", day: 3, days: 90, reason: 0), 5),
            ("another subscription", request("a", for: "2000000000000002", day: 3), 5),
            ("the same request with the subscription at its limit", request("a", day: 4), 2),
        ]
        var problems: [String] = []
        for (what, attempt, limit) in attempts {
            let outcome = try await store.begin(attempt, limit: limit, since: .distantPast)
            if outcome != .existing(first) {
                problems.append(
                    "begin of known identifier a with \(what) returned \(describe(outcome)); expected "
                        + ".existing(\(describe(first)))"
                )
            }
        }
        let other = try await store.records(originalTransactionId: "2000000000000002")
        if !other.isEmpty {
            problems.append("begin of known identifier a for another subscription stored \(describe(other)) there")
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
        try await requireStored(first, in: store, "after begins of a known identifier")
    }

    @Sendable
    static func limitCountsLiveRequestsInTheWindow(_ subject: Subject) async throws {
        let store = subject.store
        let windowStart = Fixtures.date(10 * 86_400)
        // Day 10 is the window's start itself, which is outside it; a refused request never counts.
        let atStart = try await beginNew(request("at-start", day: 10), in: store, limit: 5)
        let refused = completed(try await beginNew(request("refused", day: 11), in: store, limit: 5), .failed, day: 11)
        try await store.complete(refused)
        let live = try await beginNew(request("live", day: 12), in: store, since: windowStart)
        let extended = completed(
            try await beginNew(request("extended", day: 13), in: store, since: windowStart),
            .succeeded,
            day: 13
        )
        try await store.complete(extended)

        let third = request("third", day: 14)
        let outcome = try await store.begin(third, limit: 2, since: windowStart)
        try Fixtures.require(
            outcome == .limitReached([live, extended]),
            "with live and extended in the window (at-start at its start, refused failed), begin with limit 2 "
                + "returned \(describe(outcome)); expected .limitReached([live, extended])"
        )
        let stored = try await store.record(requestIdentifier: "third")
        try Fixtures.require(stored == nil, "a request refused for the limit was stored: \(describe(stored))")
        try await requireRecords([atStart, refused, live, extended], in: store, "after the refusal")

        // A window that starts later leaves a slot free.
        try await beginNew(third, in: store, since: Fixtures.date(12 * 86_400))
    }

    @Sendable
    static func completeReplacesTheRecord(_ subject: Subject) async throws {
        let store = subject.store
        let succeeded = completed(try await beginNew(request("ok", day: 0), in: store), .succeeded, day: 0)
        try await store.complete(succeeded)
        try await requireStored(succeeded, in: store, "after complete with Apple's extension")
        let failed = completed(try await beginNew(request("no", day: 1), in: store), .failed, day: 1)
        try await store.complete(failed)
        try await requireStored(failed, in: store, "after complete with Apple's refusal")
        try await requireRecords([succeeded, failed], in: store, "after two completions")

        let unknown = completed(request("unknown", day: 2), .succeeded, day: 2)
        if let problem = await Fixtures.errorProblem(
            .notFound,
            "complete of an identifier never begun",
            {
                try await store.complete(unknown)
            }
        ) {
            throw ConformanceViolation(problem)
        }
        let stored = try await store.record(requestIdentifier: "unknown")
        try Fixtures.require(stored == nil, "a refused complete stored \(describe(stored))")
    }

    @Sendable
    static func recordsListInBeginOrder(_ subject: Subject) async throws {
        let store = subject.store
        let m = try await beginNew(request("m", day: 5), in: store, limit: 10)
        let b = try await beginNew(request("b", day: 3), in: store, limit: 10)
        try await beginNew(request("x", for: "2000000000000002", day: 4), in: store)
        let z = try await beginNew(request("z", day: 4), in: store, limit: 10)
        let done = completed(b, .succeeded, day: 6)
        try await store.complete(done)
        try await requireRecords([m, done, z], in: store, "begun m (day 5), b (day 3), z (day 4), then b completed")
    }

    @Sendable
    static func keysCompareExactly(_ subject: Subject) async throws {
        let store = subject.store
        let identifiers = ["req-1", "Req-1", "req-1 ", " req-1"]
        var records: [RenewalExtensionRecord] = []
        for identifier in identifiers {
            records.append(try await beginNew(request(identifier, day: 0), in: store, limit: 10))
        }
        for record in records {
            try await requireStored(record, in: store, "with identifiers differing in case and white space")
        }
        let spaced = try await beginNew(request("req-2", for: subscription + " ", day: 0), in: store)
        try await requireRecords(records, in: store, "with a subscription key differing by a space")
        try await requireRecords([spaced], of: subscription + " ", in: store, "the subscription key with a space")
    }
}
