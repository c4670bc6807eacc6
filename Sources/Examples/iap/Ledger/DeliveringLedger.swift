import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI

/// The ledger a command other than `iap ledger` delivers from, opened from the same ledger options (`--data DIR` or
/// `--database URL [--schema NAME]`, see ``CommandLedger``) plus `[--catalog FILE]`, with its catalog.
struct DeliveringLedger {
    /// The options that choose and configure the ledger, as a usage lists them.
    static let options: [CommandSpec.Option] = CommandLedger.options + [CommandLedger.catalogOption]

    /// The ledger and what is kept beside it.
    let site: any LedgerSite
    /// The catalog: `--catalog`, else the one saved with the ledger, else none.
    let found: StaticProductCatalog?

    /// The store.
    var store: any ListableEntitlementStore { site.store }

    /// Opens the ledger named by the options; it must exist.
    ///
    /// - Throws: `Arguments.UsageError` without a ledger option; ``IAPError`` `notFound` for a missing ledger, or
    ///   when it cannot be opened (`storageLocked` while another process holds a file ledger).
    init(_ arguments: Arguments) async throws {
        site = try await CommandLedger.open(arguments, access: .readWrite)
        do {
            found = try await site.catalog(arguments, save: false)
        } catch {
            await site.close()
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

    /// Closes the ledger and everything opened beside it.
    func close() async {
        await site.close()
    }
}
