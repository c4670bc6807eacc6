import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI
import IAPStorageFile
import IAPStoragePostgres

/// The ledger a command works on, from its options: a directory (`--data DIR`, a ``FileLedgerSite``) or a PostgreSQL
/// database (`--database URL [--schema NAME]`, a ``PostgresLedgerSite``), exactly one of the two. Every command reads
/// and writes through the `LedgerSite` and `EntitlementStore` contracts, so its output is the same on both.
enum CommandLedger {
    enum Location {
        case directory(URL)
        case database(PostgresEntitlementStore.Configuration)
    }

    /// The options every ledger command accepts to name its ledger, as its usage lists them.
    static let options: [CommandSpec.Option] = [
        .value("data", "DIR", "the file ledger in directory DIR"),
        .value(
            "database",
            "URL",
            "a PostgreSQL ledger (postgres://user@host/db), which several processes may share; keep the password "
                + "out of it: every local user can read a command line (/proc/PID/cmdline)"
        ),
        .value("schema", "NAME", "the PostgreSQL schema of the ledger (default public; with --database only)"),
        passwordFileOption,
    ]

    /// Where a PostgreSQL password comes from, if not from `PGPASSWORD` or `~/.pgpass` (`PGPASSFILE`).
    static let passwordFileOption = CommandSpec.Option.value(
        "database-password-file",
        "FILE",
        "read the PostgreSQL password from FILE (its first line; mode 0600), rather than from the URL; PGPASSWORD "
            + "and ~/.pgpass (PGPASSFILE) work too"
    )

    /// The option that names a catalog, for the commands that read one.
    static let catalogOption = CommandSpec.Option.value(
        "catalog",
        "FILE",
        "a swift-iap JSON catalog or an Xcode .storekit file (default: the one saved with the ledger)"
    )

    /// `--bundle-id ID` of the reading commands: on a ledger of several apps, only that app's purchases.
    static let appOption = CommandSpec.Option.value(
        "bundle-id",
        "ID",
        "on a ledger of several apps (iap serve --app), only the purchases of this app; give its --catalog"
    )

    /// The `--bundle-id` of a reading command, checked: `nil` for every purchase.
    static func bundleId(_ parsed: Arguments) throws(Arguments.UsageError) -> String? {
        guard let text = try parsed.value("bundle-id") else { return nil }
        guard (1...255).contains(text.utf8.count), !text.utf8.contains(where: { $0 < 0x21 || $0 > 0x7E }) else {
            throw .init(message: "--bundle-id must be a bundle id such as com.example.app, not '\(text.prefix(80))'")
        }
        return text
    }

    /// How a usage line writes the ledger options.
    static let synopsis = "(--data DIR | --database URL [--schema NAME] [--database-password-file FILE])"

    /// Where the ledger is, from `--data` or `--database`, or from a positional `LEDGER` (a directory, or a
    /// `postgres://` URL) for the commands that take one.
    static func location(_ arguments: Arguments, ledger: String? = nil) throws -> Location {
        var directory = try arguments.value("data")
        var url = try arguments.value("database")
        let schema = try arguments.value("schema")
        let passwordFile = try arguments.value("database-password-file")
        if let ledger {
            guard directory == nil, url == nil else {
                throw Arguments.UsageError(message: "give the ledger once: LEDGER, --data DIR or --database URL")
            }
            if ledger.hasPrefix("postgres://") || ledger.hasPrefix("postgresql://") {
                url = ledger
            } else {
                directory = ledger
            }
        }
        guard passwordFile == nil || url != nil else {
            throw Arguments.UsageError(message: "--database-password-file goes with --database")
        }
        switch (directory, url) {
        case (let path?, nil):
            guard schema == nil else {
                throw Arguments.UsageError(message: "--schema goes with --database, not --data")
            }
            return .directory(URL(fileURLWithPath: path, isDirectory: true))
        case (nil, let url?):
            guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                throw Arguments.UsageError(message: "--database takes a postgres:// or postgresql:// URL")
            }
            return .database(.init(url: url, schema: schema ?? "public", password: try passwordFile.map(readPassword)))
        case (nil, nil):
            throw Arguments.UsageError(message: "one of --data DIR or --database URL is required")
        case (_?, _?):
            throw Arguments.UsageError(message: "give --data DIR or --database URL, not both")
        }
    }

    /// The password in a file: its first line, without the line break.
    static func readPassword(from path: String) throws -> String {
        let data = Data(try SecretOption.contents(path, option: "--database-password-file"))
        let firstLine = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).first ?? Data()
        let line = firstLine.last == UInt8(ascii: "\r") ? firstLine.dropLast() : firstLine
        guard !line.isEmpty, let password = String(data: Data(line), encoding: .utf8) else {
            throw Arguments.UsageError(message: "the password file \(path) holds no password on its first line")
        }
        return password
    }

    /// Opens the ledger (the one `ledger` names, a directory or a URL, when given instead of the options) and what is
    /// kept beside it.
    ///
    /// - Throws: `Arguments.UsageError` for bad ledger options; ``IAPError`` `notFound` for a ledger that does not
    ///   exist (unless `create`), or as the store throws.
    static func open(
        _ arguments: Arguments,
        ledger: String? = nil,
        access: LedgerAccess = .readOnly,
        options: FileEntitlementStore.Options = .init()
    ) async throws -> any LedgerSite {
        switch try location(arguments, ledger: ledger) {
        case .directory(let directory):
            return try FileLedgerSite(directory: directory, access: access, options: options)
        case .database(var configuration):
            configuration.createIfMissing = access == .create
            do {
                return try await PostgresLedgerSite(configuration: configuration)
            } catch let error as IAPError where error.code == .invalidConfiguration {
                throw Arguments.UsageError(message: error.message)
            }
        }
    }
}

extension LedgerSite {
    /// The catalog: `--catalog` (saved with the ledger when `save`), else the saved one, else none.
    ///
    /// `--catalog` is a swift-iap catalog, an Xcode `.storekit` file, or a swift-iap catalog that names a `.storekit`
    /// file and gives its consumables their pack sizes; what loading it warns of goes to standard error. The saved
    /// copy is the catalog as loaded, in the swift-iap format, so it needs no other file.
    func catalog(_ arguments: Arguments, save: Bool) async throws -> StaticProductCatalog? {
        if let path = try arguments.value("catalog") {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw Arguments.UsageError(message: "cannot read the catalog \(path)")
            }
            let catalog = try StaticProductCatalog(contentsOf: URL(fileURLWithPath: path))
            for warning in catalog.warnings {
                Output.error("note: \(path): \(warning)")
            }
            if save {
                try await saveCatalog(try catalog.jsonRepresentation())
            }
            return catalog
        }
        if let saved = try await savedCatalog() {
            return try StaticProductCatalog(jsonData: saved)
        }
        return nil
    }
}
