#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
public import IAPServerAPI

/// The checks every ``RenewalExtensionStore`` must pass.
///
/// Apple allows two renewal-date extensions of a subscription within 365 days, and recognises a repeated request
/// identifier; the ``RenewalDateExtender`` keeps both promises only if its store decides atomically. The suite checks
/// the protocol's contract: a request reads back as begun and as completed, an existing identifier wins over
/// everything (across subscriptions too), the limit counts only live requests inside the window, records list in
/// the order they were begun, keys compare exactly, concurrent begins of one identifier start it once and concurrent
/// begins for one subscription never pass the limit, and a store that outlives its process keeps all of it across a
/// reopen. It imports neither XCTest nor Testing; it returns a ``ConformanceReport``.
///
/// Each check gets its own store from `makeStore`, which must return a new, empty store every time. `reopen` hands
/// back the store as the next process would find it (close it and open the same storage again); its default hands
/// back the same instance, for stores that do not outlive their process.
///
/// ```swift
/// @Test func redisExtensionsConform() async {
///     let database = RedisTestDatabase()
///     let report = await RenewalExtensionStoreConformance(
///         makeStore: { try await RedisExtensionStore(url: database.fresh()) },
///         reopen: { _ in try await RedisExtensionStore(url: database.current()) }
///     ).run()
///     #expect(report.failures.isEmpty, "\(report)")
/// }
/// ```
public struct RenewalExtensionStoreConformance: Sendable {
    /// A store under test, and how to open its storage again.
    struct Subject: Sendable {
        let store: any RenewalExtensionStore
        let reopen: @Sendable (any RenewalExtensionStore) async throws -> any RenewalExtensionStore
    }

    private let makeStore: @Sendable () async throws -> any RenewalExtensionStore
    private let reopen: @Sendable (any RenewalExtensionStore) async throws -> any RenewalExtensionStore

    /// Creates the suite for one backend.
    ///
    /// - Parameters:
    ///   - makeStore: Returns a new, empty store each time it is called.
    ///   - reopen: Returns the same storage opened again, as a restarted process would (closing the given store
    ///     first if it must); by default the same instance.
    public init(
        makeStore: @escaping @Sendable () async throws -> any RenewalExtensionStore,
        reopen: @escaping @Sendable (any RenewalExtensionStore) async throws -> any RenewalExtensionStore = { $0 }
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
        name: "RenewalExtensionStore",
        noun: "store",
        checks: [
            .init(
                name: "unknownIdentifierHasNoRecord",
                requirement: "record(requestIdentifier:) of an identifier never begun is nil, and "
                    + "records(originalTransactionId:) of a subscription never extended is empty",
                body: unknownIdentifierHasNoRecord
            ),
            .init(
                name: "beginStoresTheRequest",
                requirement: "begin of a new identifier under the limit returns .started with the record, which "
                    + "then reads back the same by identifier and by subscription",
                body: beginStoresTheRequest
            ),
            .init(
                name: "existingIdentifierWins",
                requirement: "begin of a known identifier returns .existing with the stored record and stores "
                    + "nothing, whatever its parameters, its subscription, or the subscription's limit",
                body: existingIdentifierWins
            ),
            .init(
                name: "limitCountsLiveRequestsInTheWindow",
                requirement: "begin returns .limitReached with the live records, oldest first, when the subscription "
                    + "has `limit` requested or succeeded records requested after `since`; failed ones and those at "
                    + "or before `since` do not count; nothing is stored then",
                body: limitCountsLiveRequestsInTheWindow
            ),
            .init(
                name: "completeReplacesTheRecord",
                requirement: "complete replaces the record of its identifier, Apple's answer and all; complete of "
                    + "an unknown identifier throws IAPError(.notFound) and stores nothing",
                body: completeReplacesTheRecord
            ),
            .init(
                name: "recordsListInBeginOrder",
                requirement: "records(originalTransactionId:) lists only that subscription's records, in the order "
                    + "they were begun (not by date or identifier), and completing one does not move it",
                body: recordsListInBeginOrder
            ),
            .init(
                name: "keysCompareExactly",
                requirement: "request identifiers and original transaction ids that differ in case or white space "
                    + "are different keys",
                body: keysCompareExactly
            ),
            .init(
                name: "concurrentBeginsOfOneIdentifier",
                requirement: "of 50 concurrent begins of one identifier exactly one returns .started, and every "
                    + "other .existing with that record",
                body: concurrentBeginsOfOneIdentifier
            ),
            .init(
                name: "concurrentBeginsOfOneIdentifierOnManySubscriptions",
                requirement: "of 20 concurrent begins of one identifier, each for another subscription, exactly "
                    + "one returns .started and the others .existing with it; one record is stored in all",
                body: concurrentBeginsOfOneIdentifierOnManySubscriptions
            ),
            .init(
                name: "concurrentBeginsKeepTheLimit",
                requirement: "of 50 concurrent begins of new identifiers for one subscription with limit 2, exactly "
                    + "2 return .started and the other 48 .limitReached; 2 records are stored",
                body: concurrentBeginsKeepTheLimit
            ),
            .init(
                name: "recordsSurviveReopen",
                requirement: "records read back the same from the storage opened again, in the same order, and "
                    + "still count toward the limit",
                body: recordsSurviveReopen
            ),
        ]
    )
}
