#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

extension FileEntitlementStore: IdentifiedEntitlementStore {
    /// The ledger's identity: `ledger-id` in its directory, made the first time it is asked for and fixed from then
    /// on (see ``IdentifiedEntitlementStore``).
    ///
    /// - Returns: 32 lowercase hexadecimal characters.
    /// - Throws: ``IAPError`` `storageCorrupted` when the file holds something else, `storageFailure` when it cannot
    ///   be read or written.
    public nonisolated func ledgerIdentity() throws -> String {
        try FileLedgerIdentity.establish(directory: Self.path(of: directory))
    }

    /// The identity of the file ledger in a directory, read without opening the store and without writing.
    ///
    /// - Parameter directory: The ledger's directory.
    /// - Returns: The identity, or `nil` when the ledger has none yet.
    /// - Throws: ``IAPError`` as ``ledgerIdentity()``.
    public static func ledgerIdentity(in directory: URL) throws -> String? {
        try FileLedgerIdentity.read(directory: path(of: directory))
    }
}
