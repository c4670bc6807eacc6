#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
public import IAPServerAPI

/// The checks every ``ReconciliationCheckpointStore`` must pass.
///
/// The reconciler asks Apple only for what changed since a customer's checkpoint, so a store that loses a
/// checkpoint costs a full history read, and one that takes a customer back to older revisions after a newer run
/// saved (two instances finishing out of order) makes every later run read more than it needs. The suite checks the
/// protocol's contract: a checkpoint reads back as saved, never goes back, keys compare exactly, concurrent saves
/// keep the latest, and a store that outlives its process keeps them across a reopen. It imports neither XCTest nor
/// Testing; it returns a ``ConformanceReport``.
///
/// Each check gets its own store from `makeStore`, which must return a new, empty store every time. `reopen` hands
/// back the store as the next process would find it (close it and open the same storage again); its default hands
/// back the same instance, for stores that do not outlive their process.
///
/// ```swift
/// @Test func redisCheckpointsConform() async {
///     let database = RedisTestDatabase()
///     let report = await ReconciliationCheckpointStoreConformance(
///         makeStore: { try await RedisCheckpointStore(url: database.fresh()) },
///         reopen: { _ in try await RedisCheckpointStore(url: database.current()) }
///     ).run()
///     #expect(report.failures.isEmpty, "\(report)")
/// }
/// ```
public struct ReconciliationCheckpointStoreConformance: Sendable {
    /// A store under test, and how to open its storage again.
    struct Subject: Sendable {
        let store: any ReconciliationCheckpointStore
        let reopen: @Sendable (any ReconciliationCheckpointStore) async throws -> any ReconciliationCheckpointStore
    }

    private let makeStore: @Sendable () async throws -> any ReconciliationCheckpointStore
    private let reopen: @Sendable (any ReconciliationCheckpointStore) async throws -> any ReconciliationCheckpointStore

    /// Creates the suite for one backend.
    ///
    /// - Parameters:
    ///   - makeStore: Returns a new, empty store each time it is called.
    ///   - reopen: Returns the same storage opened again, as a restarted process would (closing the given store
    ///     first if it must); by default the same instance.
    public init(
        makeStore: @escaping @Sendable () async throws -> any ReconciliationCheckpointStore,
        reopen:
            @escaping @Sendable (any ReconciliationCheckpointStore) async throws -> any ReconciliationCheckpointStore =
            { $0 }
    ) {
        self.makeStore = makeStore
        self.reopen = reopen
    }

    /// The names of every check, in the order ``run()`` runs them.
    public static var checkNames: [String] {
        suite.checkNames
    }

    /// Runs every check, each against a fresh store.
    ///
    /// - Returns: The report; ``ConformanceReport/failures`` is empty when the backend conforms.
    public func run() async -> ConformanceReport {
        await Self.suite.run(making: subject)
    }

    /// Runs the check with the given name against a fresh store.
    ///
    /// - Parameter name: One of ``checkNames``.
    /// - Returns: A report of that one check, or a failure naming the known checks if there is none by that name.
    public func check(named name: String) async -> ConformanceReport {
        await Self.suite.check(named: name, making: subject)
    }

    private var subject: @Sendable () async throws -> Subject {
        { [makeStore, reopen] in Subject(store: try await makeStore(), reopen: reopen) }
    }

    private static let suite = ConformanceSuite<Subject>(
        name: "ReconciliationCheckpointStore",
        noun: "store",
        checks: [
            .init(
                name: "unknownCustomerHasNoCheckpoint",
                requirement: "checkpoint(customerKey:) of a customer never saved is nil",
                body: unknownCustomerHasNoCheckpoint
            ),
            .init(
                name: "savedCheckpointReadsBack",
                requirement: "a saved checkpoint reads back with the same revisions (nil ones included) and date",
                body: savedCheckpointReadsBack
            ),
            .init(
                name: "sameOrLaterReplaces",
                requirement: "a checkpoint reconciled at the same millisecond as the stored one, or later, replaces "
                    + "it, revisions set to nil included",
                body: sameOrLaterReplaces
            ),
            .init(
                name: "earlierIsIgnored",
                requirement: "a checkpoint reconciled earlier than the stored one is ignored: the call succeeds and "
                    + "the stored one stays (a checkpoint never goes back)",
                body: earlierIsIgnored
            ),
            .init(
                name: "emptyKeyIsRefused",
                requirement: "saveCheckpoint with an empty customerKey throws IAPError(.invalidArgument) and stores "
                    + "nothing",
                body: emptyKeyIsRefused
            ),
            .init(
                name: "keysCompareExactly",
                requirement: "customer keys that differ in case or white space are different customers",
                body: keysCompareExactly
            ),
            .init(
                name: "concurrentSavesKeepTheLatest",
                requirement:
                    "of 100 concurrent saves for one customer, in shuffled order (the latest first), the latest reconciledAt "
                    + "is the one stored; 100 concurrent saves for 100 customers are all stored",
                body: concurrentSavesKeepTheLatest
            ),
            .init(
                name: "checkpointsSurviveReopen",
                requirement: "saved checkpoints read back the same from the storage opened again, and still never "
                    + "go back",
                body: checkpointsSurviveReopen
            ),
        ]
    )

    // MARK: Checks

    private typealias Fixtures = ConformanceFixtures

    private static func checkpoint(
        _ key: String,
        _ history: String?,
        _ refund: String?,
        second: Int64
    ) -> ReconciliationCheckpoint {
        ReconciliationCheckpoint(
            customerKey: key,
            historyRevision: history,
            refundRevision: refund,
            reconciledAt: Fixtures.date(second)
        )
    }

    private static func describe(_ checkpoint: ReconciliationCheckpoint?) -> String {
        guard let checkpoint else {
            return "nil"
        }
        return "(\(checkpoint.customerKey): history \(checkpoint.historyRevision ?? "nil"), refunds "
            + "\(checkpoint.refundRevision ?? "nil"), reconciledAt \(checkpoint.reconciledAt.millisecondsSince1970))"
    }

    /// Requires the stored checkpoint of `expected`'s customer to equal `expected`.
    private static func requireStored(
        _ expected: ReconciliationCheckpoint,
        in store: any ReconciliationCheckpointStore,
        _ context: String
    ) async throws {
        let found = try await store.checkpoint(customerKey: expected.customerKey)
        try Fixtures.require(
            found == expected,
            "\(context): the checkpoint of \"\(expected.customerKey)\" reads \(describe(found)); expected "
                + describe(expected)
        )
    }

    @Sendable
    private static func unknownCustomerHasNoCheckpoint(_ subject: Subject) async throws {
        let found = try await subject.store.checkpoint(customerKey: "2000000000000001")
        try Fixtures.require(found == nil, "a customer never saved has the checkpoint \(describe(found))")
    }

    @Sendable
    private static func savedCheckpointReadsBack(_ subject: Subject) async throws {
        let full = checkpoint("2000000000000001", "rev-history-1", "rev-refund-1", second: 60)
        try await subject.store.saveCheckpoint(full)
        try await requireStored(full, in: subject.store, "after one save")
        let bare = checkpoint("2000000000000002", nil, nil, second: 61)
        try await subject.store.saveCheckpoint(bare)
        try await requireStored(bare, in: subject.store, "a checkpoint without revisions")
        try await requireStored(full, in: subject.store, "after another customer's save")
    }

    @Sendable
    private static func sameOrLaterReplaces(_ subject: Subject) async throws {
        let key = "2000000000000001"
        try await subject.store.saveCheckpoint(checkpoint(key, "h1", "r1", second: 100))
        let same = checkpoint(key, "h2", "r2", second: 100)
        try await subject.store.saveCheckpoint(same)
        try await requireStored(same, in: subject.store, "a save at the same millisecond")
        let later = checkpoint(key, nil, "r3", second: 101)
        try await subject.store.saveCheckpoint(later)
        try await requireStored(later, in: subject.store, "a later save with no history revision")
    }

    @Sendable
    private static func earlierIsIgnored(_ subject: Subject) async throws {
        let key = "2000000000000001"
        let newer = checkpoint(key, "h-new", "r-new", second: 200)
        try await subject.store.saveCheckpoint(newer)
        try await subject.store.saveCheckpoint(checkpoint(key, "h-old", "r-old", second: 199))
        try await requireStored(newer, in: subject.store, "a save reconciled 1 s before the stored one")
        let justBefore = ReconciliationCheckpoint(
            customerKey: key,
            historyRevision: "h-old",
            refundRevision: nil,
            reconciledAt: Date(millisecondsSince1970: newer.reconciledAt.millisecondsSince1970 - 1)
        )
        try await subject.store.saveCheckpoint(justBefore)
        try await requireStored(newer, in: subject.store, "a save reconciled 1 ms before the stored one")
    }

    @Sendable
    private static func emptyKeyIsRefused(_ subject: Subject) async throws {
        try await Fixtures.requireInvalidArgument("saveCheckpoint with customerKey \"\"") {
            try await subject.store.saveCheckpoint(checkpoint("", "h", nil, second: 1))
        }
        let found = try await subject.store.checkpoint(customerKey: "")
        try Fixtures.require(found == nil, "after a refused save, the empty key reads \(describe(found))")
    }

    @Sendable
    private static func keysCompareExactly(_ subject: Subject) async throws {
        let keys = ["customer-a", "Customer-A", "customer-a ", " customer-a"]
        for (index, key) in keys.enumerated() {
            try await subject.store.saveCheckpoint(checkpoint(key, "h\(index)", nil, second: Int64(index)))
        }
        var problems: [String] = []
        for (index, key) in keys.enumerated() {
            let found = try await subject.store.checkpoint(customerKey: key)
            if found != checkpoint(key, "h\(index)", nil, second: Int64(index)) {
                problems.append("\"\(key)\" reads \(describe(found)); expected its own checkpoint (h\(index))")
            }
        }
        if !problems.isEmpty {
            throw ConformanceViolation(problems: problems)
        }
    }

    @Sendable
    private static func concurrentSavesKeepTheLatest(_ subject: Subject) async throws {
        let store = subject.store
        let key = "2000000000000001"
        var generator = SystemRandomNumberGenerator()
        // Shuffled, the latest sent first: a store where the last write wins keeps an older one however the tasks
        // are scheduled (tasks mostly start in the order they are added), so the check never passes it by chance.
        let seconds = [100] + Array(Int64(1)...99).shuffled(using: &generator)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for second in seconds {
                group.addTask { try await store.saveCheckpoint(checkpoint(key, "h\(second)", nil, second: second)) }
                group.addTask {
                    try await store.saveCheckpoint(checkpoint("customer-\(second)", "h", nil, second: second))
                }
            }
            try await group.waitForAll()
        }
        try await requireStored(checkpoint(key, "h100", nil, second: 100), in: store, "after 100 concurrent saves")
        var missing: [String] = []
        for second in Int64(1)...100 {
            let expected = checkpoint("customer-\(second)", "h", nil, second: second)
            if try await store.checkpoint(customerKey: expected.customerKey) != expected {
                missing.append(expected.customerKey)
            }
        }
        try Fixtures.require(
            missing.isEmpty,
            "of 100 customers saved concurrently, \(missing.count) do not read back: \(missing.prefix(5).joined(separator: ", "))"
        )
    }

    @Sendable
    private static func checkpointsSurviveReopen(_ subject: Subject) async throws {
        let saved = [
            checkpoint("2000000000000001", "h1", "r1", second: 300),
            checkpoint("2000000000000002", nil, "r2", second: 301),
            checkpoint("2000000000000003", "h3", nil, second: 302),
        ]
        for checkpoint in saved {
            try await subject.store.saveCheckpoint(checkpoint)
        }
        let reopened = try await subject.reopen(subject.store)
        for checkpoint in saved {
            try await requireStored(checkpoint, in: reopened, "after reopening")
        }
        try await reopened.saveCheckpoint(checkpoint("2000000000000001", "h0", nil, second: 299))
        try await requireStored(saved[0], in: reopened, "an earlier save after reopening")
    }
}
