/// A ledger that can list every entry it holds, say from which entry on it keeps signed transactions, and be closed:
/// what a tool that checks, exports or re-verifies a whole ledger needs beyond ``EntitlementStore``.
///
/// ``LedgerInvariants`` and ``LedgerReverification`` read a ledger through it, and a ledger site (`LedgerSite` in
/// `IAPServerAPI`) hands one out.
///
/// ## Implementation requirements
/// - ``allEntries()`` returns every entry once, by ascending ``LedgerEntry/sequence``, as of one moment.
/// - ``firstSignedSequence()`` never changes once entries exist: an entry at that sequence or later was recorded
///   with its signed transaction (``EntitlementStore/signedTransaction(transactionId:)`` finds it); earlier ones may
///   predate the store keeping them.
/// - After ``close()``, every call throws ``IAPError`` `storageFailure`; closing twice is harmless.
///
/// `FileEntitlementStore` (in `IAPStorageFile`), `PostgresEntitlementStore` (in `IAPStoragePostgres`) and
/// `InMemoryEntitlementStore` (in `IAPInMemory`) implement it.
public protocol ListableEntitlementStore: IdentifiedEntitlementStore {
    /// Every entry, by ascending sequence.
    ///
    /// - Returns: The entries.
    /// - Throws: ``IAPError`` when the store cannot be read.
    func allEntries() async throws -> [LedgerEntry]

    /// The first entry sequence that is recorded with its signed transaction; earlier entries predate the store
    /// keeping them.
    ///
    /// - Returns: The sequence (1 when the store always kept them).
    /// - Throws: ``IAPError`` when the store cannot be read.
    func firstSignedSequence() async throws -> Int64

    /// Releases what the store holds (files, locks, connections); later calls throw.
    func close() async
}
