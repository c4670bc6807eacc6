#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// Where ``PurchaseCoordinator`` keeps its outbox: the purchases the server has not confirmed yet, with their
/// context, so that nothing is lost when the app is killed.
///
/// ``FilePurchaseOutboxStorage`` keeps it in one small file; `InMemoryPurchaseOutboxStorage`
/// (in `IAPInMemory`) in memory, for tests.
///
/// ## Implementation requirements
/// - ``save(_:)`` is atomic and durable: once it returns, a crash or a power loss leaves exactly the saved bytes;
///   when it throws or the process dies during it, the bytes saved before are still there, whole.
/// - ``load()`` returns exactly the bytes of the last completed ``save(_:)``, or `nil` when nothing was ever
///   saved. It never repairs or discards anything: the coordinator decides what damaged bytes mean.
/// - ``quarantine(at:)`` moves the saved bytes aside without changing or deleting them, and afterwards ``load()``
///   returns `nil`; when it throws, the bytes are where they were. The coordinator calls it for bytes it cannot
///   read (damaged, or written by a newer version of the app), so that purchases go on with an empty outbox.
/// - Failures throw ``IAPError`` with code `storageFailure`.
public protocol PurchaseOutboxStorage: Sendable {
    /// The bytes last saved.
    ///
    /// - Returns: The bytes, or `nil` when nothing was ever saved.
    /// - Throws: ``IAPError`` `storageFailure` when they cannot be read.
    func load() async throws -> Data?

    /// Replaces the saved bytes, atomically and durably.
    ///
    /// - Parameter data: The new bytes.
    /// - Throws: ``IAPError`` `storageFailure`; the previous bytes are then still in place.
    func save(_ data: Data) async throws

    /// Moves the saved bytes aside, kept as they are, so that the next ``load()`` finds nothing.
    ///
    /// - Parameter date: When, to name the place they go to.
    /// - Returns: Where the bytes are now (a path, a key), for diagnostics and support.
    /// - Throws: ``IAPError`` `storageFailure`; the bytes are then still where they were.
    func quarantine(at date: Date) async throws -> String
}
