#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPApp
import IAPCore

/// A ``PurchaseOutboxStorage`` in memory, for tests: keep one and hand it to a new coordinator to simulate an app
/// restart; ``failSaves(_:after:)`` simulates a full disk.
public final class InMemoryPurchaseOutboxStorage: PurchaseOutboxStorage {
    private struct State {
        var data: Data?
        var failingSaves = 0
        var successesBeforeFailing = 0
        var saves = 0
        var quarantined: [(location: String, data: Data)] = []
        var failingQuarantines = false
    }

    private let state: LockedValue<State>

    /// Creates a storage, empty or holding `data`.
    ///
    /// - Parameter data: The bytes to start with.
    public init(data: Data? = nil) {
        state = LockedValue(State(data: data))
    }

    /// The bytes saved last.
    public var data: Data? { state.withLock { $0.data } }

    /// How many saves succeeded.
    public var saveCount: Int { state.withLock { $0.saves } }

    /// The bytes moved aside by ``quarantine(at:)``, oldest first, each with the location it reported.
    public var quarantined: [(location: String, data: Data)] { state.withLock { $0.quarantined } }

    /// Makes ``quarantine(at:)`` fail with `storageFailure` (a read-only disk), leaving the bytes where they are,
    /// or succeed again.
    ///
    /// - Parameter failing: Whether moves fail.
    public func failQuarantines(_ failing: Bool) {
        state.withLock { $0.failingQuarantines = failing }
    }

    /// Makes `count` saves fail with `storageFailure`, leaving the saved bytes as they were, after `successes`
    /// more saves succeed: `failSaves(.max, after: 1)` is a process killed right after its next save.
    ///
    /// - Parameters:
    ///   - count: How many saves fail; 0 makes every save succeed again.
    ///   - successes: How many saves succeed first.
    public func failSaves(_ count: Int, after successes: Int = 0) {
        state.withLock { state in
            state.failingSaves = count
            state.successesBeforeFailing = successes
        }
    }

    /// Replaces the bytes, as a damaged file would.
    ///
    /// - Parameter data: The new bytes.
    public func overwrite(with data: Data?) {
        state.withLock { $0.data = data }
    }

    /// The bytes saved last.
    ///
    /// - Returns: The bytes, or `nil`.
    public func load() async throws -> Data? {
        state.withLock { $0.data }
    }

    /// Moves the bytes aside: ``quarantined`` keeps them, and ``load()`` finds nothing.
    ///
    /// - Parameter date: When, which names the location (`memory:quarantined-<milliseconds>`).
    /// - Returns: The location.
    /// - Throws: ``IAPError`` `storageFailure` when a failure was injected (``failQuarantines(_:)``).
    public func quarantine(at date: Date) async throws -> String {
        try state.withLock { state in
            guard !state.failingQuarantines else {
                throw IAPError(.storageFailure, "the disk is read-only (injected)")
            }
            let location = "memory:quarantined-\(date.millisecondsSince1970)-\(state.quarantined.count + 1)"
            state.quarantined.append((location, state.data ?? Data()))
            state.data = nil
            return location
        }
    }

    /// Replaces the bytes.
    ///
    /// - Parameter data: The new bytes.
    /// - Throws: ``IAPError`` `storageFailure` when a failure was injected.
    public func save(_ data: Data) async throws {
        try state.withLock { state in
            if state.successesBeforeFailing > 0 {
                state.successesBeforeFailing -= 1
            } else if state.failingSaves > 0 {
                state.failingSaves -= 1
                throw IAPError(.storageFailure, "the disk is full (injected)")
            }
            state.data = data
            state.saves += 1
        }
    }
}
