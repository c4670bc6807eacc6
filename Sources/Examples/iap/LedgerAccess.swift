import Foundation
import IAPCore
import IAPStorageFile

/// Opens the ledger a command works on, from its ledger options: the one place that knows which backends exist.
///
/// Today that is `--data DIR` (a `FileEntitlementStore`) with `[--catalog FILE]`; another backend adds its option
/// here and every command that opens a ledger through it gains it.
struct LedgerAccess {
    /// The options that choose and configure the ledger.
    static let valuedOptions: Set<String> = ["data", "catalog"]

    /// The ledger.
    let store: FileEntitlementStore
    /// The catalog: `--catalog`, else the one saved with the ledger, else every product a non-consumable.
    let catalog: any ProductCatalog
    /// Where files that belong with the ledger (an audit log, reconciliation checkpoints) go by default.
    let directory: URL

    /// Opens the ledger named by the options; it must exist.
    ///
    /// - Throws: `Arguments.UsageError` without `--data`; ``IAPError`` `notFound` for a missing ledger, or when it
    ///   cannot be opened (`storageLocked` while another process holds it).
    init(_ arguments: Arguments) throws {
        directory = try LedgerCommand.dataDirectory(arguments)
        store = try FileEntitlementStore(directory: directory)
        catalog = try LedgerCommand.catalog(arguments, directory: directory, save: false) ?? NonConsumableCatalog()
    }

    /// Closes the ledger.
    func close() async {
        await store.close()
    }
}
