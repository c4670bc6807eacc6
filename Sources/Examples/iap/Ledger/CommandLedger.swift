import Foundation
import IAPCommandLine
import IAPCore
import IAPStorageFile
import IAPStoragePostgres

/// The ledger an `iap ledger` command works on: a directory (`--data DIR`, the file store) or a PostgreSQL
/// database (`--database URL [--schema NAME]`), exactly one of the two. Every command reads and writes
/// through the `EntitlementStore` contract, so its output is the same on both.
struct CommandLedger {
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

    /// How a usage line writes the ledger options.
    static let synopsis = "(--data DIR | --database URL [--schema NAME] [--database-password-file FILE])"

    let location: Location
    let store: any ListableEntitlementStore

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
        let data = Data(try SecretFile.contents(path, option: "--database-password-file"))
        let firstLine = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).first ?? Data()
        let line = firstLine.last == UInt8(ascii: "\r") ? firstLine.dropLast() : firstLine
        guard !line.isEmpty, let password = String(data: Data(line), encoding: .utf8) else {
            throw Arguments.UsageError(message: "the password file \(path) holds no password on its first line")
        }
        return password
    }

    /// How a command opens its ledger.
    enum Access {
        /// To read: nothing is created, locked or repaired; a ledger that does not exist is `notFound`. A file
        /// ledger may be held by another process meanwhile.
        case readOnly
        /// To write a ledger that must exist.
        case readWrite
        /// To write, creating the ledger when there is none (`ingest`).
        case create
    }

    /// Opens the ledger (the one `ledger` names, a directory or a URL, when given instead of the options).
    ///
    /// - Throws: `Arguments.UsageError` for bad ledger options; ``IAPError`` `notFound` for a ledger that does not
    ///   exist (unless `create`), or as the store throws.
    static func open(
        _ arguments: Arguments,
        ledger: String? = nil,
        access: Access = .readOnly,
        options: FileEntitlementStore.Options = .init()
    ) async throws -> CommandLedger {
        let location = try location(arguments, ledger: ledger)
        switch location {
        case .directory(let directory):
            var options = options
            options.access = access == .readOnly ? .readOnly : .readWrite
            options.createIfMissing = access == .create
            return CommandLedger(
                location: location,
                store: try FileEntitlementStore(directory: directory, options: options)
            )
        case .database(var configuration):
            configuration.createIfMissing = access == .create
            do {
                return CommandLedger(
                    location: location,
                    store: try await PostgresEntitlementStore(configuration: configuration)
                )
            } catch let error as IAPError where error.code == .invalidConfiguration {
                throw Arguments.UsageError(message: error.message)
            }
        }
    }

    /// Where the ledger is, for people (never the password of a URL).
    var name: String {
        switch location {
        case .directory(let directory): directory.path
        case .database(let configuration): "PostgreSQL schema \(configuration.schema)"
        }
    }

    /// The catalog saved with the ledger: `DIR/catalog.json`, or the `iap_catalog` table.
    func savedCatalog() async throws -> Data? {
        switch location {
        case .directory(let directory):
            let saved = directory.appendingPathComponent("catalog.json").path
            return try SystemFile.readContents(of: saved, maximumSize: 64 << 20).map { Data($0) }
        case .database:
            return try await (store as? PostgresEntitlementStore)?.savedCatalog()
        }
    }

    /// Saves a catalog with the ledger, for later commands and other instances: a private file replaced atomically.
    func saveCatalog(_ data: Data) async throws {
        switch location {
        case .directory(let directory):
            try SystemFile.replaceContents(
                of: directory.appendingPathComponent("catalog.json").path,
                with: [UInt8](data)
            )
        case .database:
            try await (store as? PostgresEntitlementStore)?.saveCatalog(data)
        }
    }

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

    /// Whether several processes may deliver from this ledger at once (so a delivery claim must outlive
    /// the call that takes it).
    var isShared: Bool {
        if case .database = location {
            return true
        }
        return false
    }
}

/// A store that can list every entry, name its identity and be closed: what `iap ledger` and `iap support` need
/// beyond the contract.
protocol ListableEntitlementStore: IdentifiedEntitlementStore {
    func allEntries() async throws -> [LedgerEntry]
    func close() async
    /// The first entry sequence expected to have its signed transaction (earlier ones predate them).
    func firstSignedSequence() async throws -> Int64
}

extension FileEntitlementStore: ListableEntitlementStore {
    func firstSignedSequence() async throws -> Int64 {
        signedTransactionsFromSequence
    }
}

extension PostgresEntitlementStore: ListableEntitlementStore {
    func firstSignedSequence() async throws -> Int64 {
        try await signedTransactionsFromSequence()
    }
}
