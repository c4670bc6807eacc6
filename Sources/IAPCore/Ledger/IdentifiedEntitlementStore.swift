/// A ledger that knows its identity: a random id, fixed once, that logs kept with the ledger anchor to.
///
/// The support audit is a hash chain whose first entry carries the SHA-256 of the ledger's identity, so an audit log
/// cannot be passed off as another ledger's, nor started afresh unnoticed once the ledger has one. Adopting the
/// protocol is optional: a store that does not can still be audited with an identity its owner chooses.
///
/// ## Implementation requirements
/// - The identity is fixed the first time it is asked for (or when the ledger is created) and never changes
///   afterwards, in this process or any other.
/// - Two ledgers never share one: at least 122 random bits.
///
/// `FileEntitlementStore` keeps it in its directory (`ledger-id`), `PostgresEntitlementStore` in a table of its
/// schema (`iap_ledger_identity`), `InMemoryEntitlementStore` in memory.
public protocol IdentifiedEntitlementStore: EntitlementStore {
    /// The ledger's identity: lowercase hexadecimal text, fixed once.
    ///
    /// - Returns: The identity.
    /// - Throws: ``IAPError`` with code `storageFailure` when it cannot be read or made, `storageCorrupted` when what
    ///   is stored is not an identity.
    func ledgerIdentity() async throws -> String
}

/// How the package's stores make a ledger identity.
package enum LedgerIdentifier {
    /// 128 random bits as 32 lowercase hexadecimal characters.
    package static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.encode((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// Whether `text` looks like an identity: 32 to 64 lowercase hexadecimal characters.
    package static func isValid(_ text: String) -> Bool {
        (32...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
