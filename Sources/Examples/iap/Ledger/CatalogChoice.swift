import IAPCommandLine
import IAPCore

/// The catalog a command that delivers works with, and what it does with a product the catalog does not know.
///
/// - A catalog (`--catalog FILE`, or the one saved with the ledger): a purchase of a product it does not know is
///   recorded and parked (``UnknownProductPolicy/park``) until the catalog names it, never granted by guess.
/// - No catalog, `--ledger-only`: the ledger is the entitlement source, so purchases are recorded and delivered as
///   their signed transactions describe them (``UnknownProductPolicy/signedType``), with one `note:` line on standard
///   error.
/// - No catalog and a grant path (`--grant-url`): refused, before anything is recorded: the webhook would be told
///   what to grant by guess.
struct CatalogChoice {
    /// The catalog the pipeline asks; replaceable (`iap serve` reloads it on `SIGHUP`).
    let catalog: ReloadableProductCatalog
    /// What a product the catalog does not know gets.
    let unknownProducts: UnknownProductPolicy

    /// The note printed when the ledger-only road runs without a catalog.
    static let ledgerOnlyNote =
        "note: no catalog (--catalog FILE, or one saved with the ledger): --ledger-only records and delivers each "
        + "purchase as its signed transaction's type says (a consumable counts its quantity, one unit each); give "
        + "--catalog FILE to deliver by your catalog ('iap ledger check' reports this too)"

    /// Chooses from what the command found.
    ///
    /// - Parameters:
    ///   - found: `--catalog` or the catalog saved with the ledger, or `nil`.
    ///   - grant: How the command grants; `nil` for a command run that grants nothing.
    ///   - command: The command, for the message (`iap serve`).
    /// - Returns: The choice.
    /// - Throws: A usage error for a grant path without a catalog, naming how to give one.
    static func choose(
        _ found: StaticProductCatalog?,
        grant: GrantOptions.Path?,
        command: String
    ) throws(Arguments.UsageError) -> CatalogChoice {
        if let found {
            return CatalogChoice(catalog: ReloadableProductCatalog(found), unknownProducts: .park)
        }
        let empty = StaticProductCatalog.empty
        switch grant {
        case .webhook?:
            throw .init(
                message: "\(command) grants through --grant-url and needs a catalog first, so that no purchase is "
                    + "granted by guess: give --catalog FILE (a swift-iap JSON catalog or an Xcode .storekit file; it "
                    + "is saved with the ledger for later commands)"
            )
        case .ledgerOnly?:
            Output.error(ledgerOnlyNote)
            return CatalogChoice(catalog: ReloadableProductCatalog(empty), unknownProducts: .signedType)
        case nil:
            return CatalogChoice(catalog: ReloadableProductCatalog(empty), unknownProducts: .park)
        }
    }
}
