import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto

/// One app of `iap serve --app ...` (repeatable), or one object of the configuration file's `apps` array.
///
/// On the command line: `--app 'bundle-id=ID environment=LIST [app-apple-id=N] catalog=FILE [root=FILE.der]...
/// [api-url=URL]'`
/// (words separated by spaces, each `key=value`, the keys of the one-app options), or the same as a JSON object:
/// `{"bundleId": "…", "appAppleId": N, "environments": ["Sandbox", …], "catalog": "PATH", "roots": ["PATH.der", …],
/// "apiUrl": "URL"}`
/// (`environments` may also be one comma-separated string; `bundle-id`, `environment`, `app-apple-id` and `root`
/// name the same keys).
struct ServeApp: Equatable {
    var bundleId: String
    var environments: [AppStoreEnvironment]
    var appAppleId: Int64?
    var catalog: String?
    var roots: [String]
    /// `api-url=URL`: this app's App Store Server API at another address than `--api-url` (an emulator per app).
    var apiURL: String?

    /// The keys of one app, for messages.
    static let keysSynopsis =
        "bundle-id=ID environment=LIST [app-apple-id=N] catalog=FILE [root=FILE.der]... [api-url=URL]"

    /// The most apps one server takes.
    static let maximumApps = 64

    /// Parses one `--app` value.
    ///
    /// - Throws: A usage error naming what is wrong.
    static func parse(_ text: String) throws(Arguments.UsageError) -> ServeApp {
        var fields: [String: [String]] = [:]
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("{") {
            fields = try jsonFields(trimmed)
        } else {
            for word in trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
                    throw .init(
                        message: "--app takes key=value words (bundle-id=ID environment=LIST ...), not '\(word)'"
                    )
                }
                let key = String(word[..<equals])
                fields[try canonical(key), default: []].append(String(word[word.index(after: equals)...]))
            }
        }
        return try make(fields)
    }

    /// The fields of a JSON object, by canonical key.
    private static func jsonFields(_ text: String) throws(Arguments.UsageError) -> [String: [String]] {
        guard let object = try? JSONDecoder().decode([String: ServeConfigFile.Value].self, from: Data(text.utf8))
        else {
            throw .init(message: "--app: '\(text.prefix(80))' is not a JSON object")
        }
        var fields: [String: [String]] = [:]
        for key in object.keys.sorted() {
            let name = try canonical(key)
            guard fields[name] == nil else { throw .init(message: "--app: '\(key)' names a setting given twice") }
            switch object[key] {
            case .list(let list)? where name == "root" || name == "environment":
                var texts: [String] = []
                for item in list {
                    guard case .text(let text) = item else { throw .init(message: "--app: '\(key)' takes strings") }
                    texts.append(text)
                }
                fields[name] = name == "environment" ? [texts.joined(separator: ",")] : texts
            case let value?:
                guard let scalar = value.scalar else {
                    throw .init(message: "--app: '\(key)' takes a string\(name == "root" ? " or strings" : "")")
                }
                fields[name] = [scalar]
            case nil:
                continue
            }
        }
        return fields
    }

    /// A key as the one-app option it stands for: `bundle-id`, `environment`, `app-apple-id`, `catalog`, `root`.
    private static func canonical(_ key: String) throws(Arguments.UsageError) -> String {
        switch ServeConfigFile.normalized(key) {
        case "bundleid": return "bundle-id"
        case "environment", "environments": return "environment"
        case "appappleid": return "app-apple-id"
        case "catalog": return "catalog"
        case "root", "roots": return "root"
        case "apiurl": return "api-url"
        default:
            throw .init(
                message: "--app: unknown key '\(key)' (bundle-id, environment, app-apple-id, catalog, root, api-url)"
            )
        }
    }

    private static func make(_ fields: [String: [String]]) throws(Arguments.UsageError) -> ServeApp {
        func single(_ name: String) throws(Arguments.UsageError) -> String? {
            guard let values = fields[name] else { return nil }
            guard values.count == 1, let value = values.first, !value.isEmpty else {
                throw .init(message: "--app: \(name) takes one value")
            }
            return value
        }
        guard let bundleId = try single("bundle-id") else {
            throw .init(message: "--app: bundle-id=ID is required")
        }
        guard bundleId.utf8.count <= 255, !bundleId.utf8.contains(where: { $0 < 0x21 || $0 > 0x7E }) else {
            throw .init(message: "--app: '\(bundleId.prefix(80))' is not a bundle id")
        }
        guard let environmentText = try single("environment") else {
            throw .init(message: "--app \(bundleId): environment=LIST is required (Production, Sandbox, or both)")
        }
        let environments = try EnvironmentList.parse(environmentText, allowed: [.production, .sandbox, .localTesting])
        var appAppleId: Int64?
        if let text = try single("app-apple-id") {
            guard let value = Int64(text), value > 0 else {
                throw .init(message: "--app \(bundleId): app-apple-id must be a positive integer, not '\(text)'")
            }
            appAppleId = value
        }
        return ServeApp(
            bundleId: bundleId,
            environments: environments,
            appAppleId: appAppleId,
            catalog: try single("catalog"),
            roots: fields["root"] ?? [],
            apiURL: try single("api-url")
        )
    }

    /// The verifier of this app's signed data: its bundle id, environments, App Apple ID and roots.
    func verifier() throws(Arguments.UsageError) -> AppStoreSignedDataVerifier {
        var configuration = AppStoreSignedDataVerifier.Configuration(
            bundleId: bundleId,
            environments: Set(environments)
        )
        configuration.acceptsXcodeSignedData = environments.contains(.localTesting)
        var certificates: [X509Certificate] = []
        for path in roots {
            certificates.append(try VerifyCommand.Settings.loadCertificate(path))
        }
        configuration.rootCertificates = certificates
        configuration.appAppleId = appAppleId
        if configuration.environments.contains(.production), appAppleId == nil {
            throw .init(
                message: "--app \(bundleId): app-apple-id=N is required to verify Production data (App Store "
                    + "Connect, App Information)"
            )
        }
        do {
            return try AppStoreSignedDataVerifier(configuration: configuration)
        } catch {
            throw .init(message: "--app \(bundleId): \((error as? IAPError)?.message ?? "\(error)")")
        }
    }

    /// This app's catalog, read from its file.
    ///
    /// - Throws: A usage error when the app names no catalog or it cannot be read.
    func loadCatalog() throws -> StaticProductCatalog {
        guard let catalog else {
            throw Arguments.UsageError(
                message: "--app \(bundleId): catalog=FILE is required: on a server of several apps each app delivers "
                    + "by its own catalog, so that no purchase is granted by guess"
            )
        }
        guard FileManager.default.isReadableFile(atPath: catalog) else {
            throw Arguments.UsageError(message: "--app \(bundleId): cannot read the catalog \(catalog)")
        }
        let loaded = try StaticProductCatalog(contentsOf: URL(fileURLWithPath: catalog))
        for warning in loaded.warnings {
            Output.error("note: \(catalog): \(warning)")
        }
        return loaded
    }
}
