import Foundation
import IAPCommandLine
import IAPCore
import IAPStorageFile

/// Opens the ledger a command other than `iap ledger` works on, from the same ledger options (`--data DIR` or
/// `--database URL [--schema NAME]`, see ``CommandLedger``) plus `[--catalog FILE]`.
struct LedgerAccess {
    /// The options that choose and configure the ledger, as a usage lists them.
    static let options: [CommandSpec.Option] = CommandLedger.options + [CommandLedger.catalogOption]

    /// The ledger.
    let ledger: CommandLedger
    /// The catalog: `--catalog`, else the one saved with the ledger, else none.
    let found: StaticProductCatalog?

    /// The store.
    var store: any ListableEntitlementStore { ledger.store }

    /// Where files that belong with a file ledger (an audit log, reconciliation checkpoints) go by default;
    /// `nil` for a database ledger.
    var directory: URL? {
        if case .directory(let url) = ledger.location {
            return url
        }
        return nil
    }

    /// Opens the ledger named by the options; it must exist.
    ///
    /// - Throws: `Arguments.UsageError` without a ledger option; ``IAPError`` `notFound` for a missing ledger, or
    ///   when it cannot be opened (`storageLocked` while another process holds a file ledger).
    init(_ arguments: Arguments) async throws {
        ledger = try await CommandLedger.open(arguments, access: .readWrite)
        do {
            found = try await ledger.catalog(arguments, save: false)
        } catch {
            await ledger.store.close()
            throw error
        }
    }

    /// The catalog a command that may deliver works with (see ``CatalogChoice``).
    ///
    /// - Parameters:
    ///   - grant: How the command grants; `nil` when it grants nothing.
    ///   - command: The command, for the message.
    /// - Returns: The choice.
    /// - Throws: A usage error for a grant path without a catalog.
    func catalog(for grant: GrantOptions.Path?, command: String) throws(Arguments.UsageError) -> CatalogChoice {
        try CatalogChoice.choose(found, grant: grant, command: command)
    }

    /// Closes the ledger.
    func close() async {
        await ledger.store.close()
    }
}
