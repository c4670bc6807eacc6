#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// Where ``PurchaseCoordinator`` keeps its outbox: the purchases the server has not confirmed yet, with their
/// context, so that nothing is lost when the app is killed.
///
/// `FilePurchaseOutboxStorage` (in `IAPStorageFile`) keeps it in one small file; `InMemoryPurchaseOutboxStorage`
/// (in `IAPTesting`) in memory, for tests.
///
/// ## Implementation requirements
/// - ``save(_:)`` is atomic and durable: once it returns, a crash or a power loss leaves exactly the saved bytes;
///   when it throws or the process dies during it, the bytes saved before are still there, whole.
/// - ``load()`` returns exactly the bytes of the last completed ``save(_:)``, or `nil` when nothing was ever
///   saved. It never repairs or discards anything: the coordinator decides what damaged bytes mean.
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
}
