import Foundation
import IAPCommandLine

/// `iap serve --config FILE.json`: the same settings as the options, as one JSON object whose keys are the option
/// names without their dashes (`"bundle-id"`; `"bundleId"` and `"bundleid"` name it too, and an alias names its
/// option: `"base-url"` is `"api-url"`).
///
/// ```json
/// {"port": 8080, "data": "/var/lib/iap", "bundle-id": "com.example.app", "environment": ["Production", "Sandbox"],
///  "app-apple-id": 1234567890, "ledger-only": true, "user-jwt-secret-file": "/etc/iap/user-jwt.secret",
///  "service-token-file": "/etc/iap/service.token"}
/// ```
///
/// A value is a string or a number; a switch (`ledger-only`) is `true` or `false`; `root` takes a string or an array
/// of strings, `environment` a list string or an array. An option given on the command line wins over the file, and
/// so does a group: `--database` on the command line sets aside the file's `data`, `--grant-url` its `ledger-only`.
/// `apps` is an array of app objects (`{"bundleId", "appAppleId", "environments", "catalog", "roots"}`), one `--app`
/// each, for a server of several apps. Unknown keys are refused, and so are secrets: the file names the files that hold them (`user-jwt-secret-file`,
/// `service-token-file`, `grant-secret-file`, `auth-key`), or they come from the environment.
enum ServeConfigFile {
    /// Options that replace each other: one given on the command line sets the file's others aside.
    static let groups: [[String]] = [
        ["data", "database", "schema"],
        ["grant-url", "grant-secret-file", "ledger-only"],
    ]

    /// The command-line arguments a configuration file stands for, less what the command line gives itself.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - options: The options of `iap serve`.
    ///   - given: The command line as parsed.
    /// - Returns: The arguments to put before the command line's.
    /// - Throws: A usage error naming the file and the key that is wrong.
    static func arguments(
        _ path: String,
        options: [CommandSpec.Option],
        given: Arguments
    ) throws(Arguments.UsageError) -> [String] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .init(message: "cannot read --config \(path): \(error.localizedDescription)")
        }
        guard let object = try? JSONDecoder().decode([String: Value].self, from: data) else {
            throw .init(message: "--config \(path) is not a JSON object")
        }
        // An option's aliases name it too ("base-url" for "api-url").
        let known = Dictionary(
            options.filter { $0.name != "config" }.flatMap { option in
                ([option.name] + option.aliases).map { (normalized($0), option) }
            },
            uniquingKeysWith: { first, _ in first }
        )
        var seen: [String: String] = [:]
        var arguments: [String] = []
        for key in object.keys.sorted() {
            if normalized(key) == "apps" {
                guard seen["app"] == nil else {
                    throw .init(message: "--config \(path): '\(key)' and '\(seen["app"] ?? "")' name the same setting")
                }
                seen["app"] = key
                if !isGiven("app", on: given) {
                    arguments += try apps(in: data, key: key, path: path)
                }
                continue
            }
            guard let option = known[normalized(key)] else {
                if ["secret", "token", "password"].contains(where: { key.lowercased().contains($0) }) {
                    throw .init(
                        message: "--config \(path): '\(key)' is not a setting; secrets are never in the configuration: "
                            + "name the file that holds one (user-jwt-secret-file, service-token-file, "
                            + "grant-secret-file) or set IAP_USER_JWT_SECRET, IAP_SERVICE_TOKEN, IAP_GRANT_SECRET"
                    )
                }
                throw .init(message: "--config \(path): unknown key '\(key)'")
            }
            if let other = seen[option.name] {
                throw .init(message: "--config \(path): '\(key)' and '\(other)' name the same setting")
            }
            seen[option.name] = key
            if isGiven(option.name, on: given) {
                continue
            }
            arguments += try values(of: object[key], key: key, option: option, path: path)
        }
        return arguments
    }

    /// The `--app` arguments of the file's `apps`: one JSON object per app, handed to ``ServeApp/parse(_:)`` as it is.
    private static func apps(in data: Data, key: String, path: String) throws(Arguments.UsageError) -> [String] {
        let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        guard let list = document?[key] as? [Any], !list.isEmpty else {
            throw .init(message: "--config \(path): '\(key)' takes an array of app objects")
        }
        var arguments: [String] = []
        for item in list {
            guard item is [String: Any],
                let encoded = try? JSONSerialization.data(withJSONObject: item, options: [.sortedKeys])
            else {
                throw .init(
                    message: "--config \(path): each of '\(key)' is an object such as {\"bundleId\": \"...\", "
                        + "\"environments\": [\"Production\"], \"appAppleId\": 1234567890, \"catalog\": \"PATH\"}"
                )
            }
            arguments += ["--app", String(decoding: encoded, as: UTF8.self)]
        }
        return arguments
    }

    /// Whether the command line gives an option, or another of its group.
    private static func isGiven(_ name: String, on given: Arguments) -> Bool {
        let group = groups.first { $0.contains(name) } ?? [name]
        return group.contains { given.options[$0] != nil || given.has($0) }
    }

    /// A JSON value of the file.
    enum Value: Decodable {
        case flag(Bool)
        case text(String)
        case number(Double)
        case list([Value])
        case other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .flag(flag)
            } else if let text = try? container.decode(String.self) {
                self = .text(text)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else if let list = try? container.decode([Value].self) {
                self = .list(list)
            } else {
                self = .other
            }
        }

        /// A string, or a whole number written without a fraction; `nil` for anything else.
        var scalar: String? {
            switch self {
            case .text(let text):
                return text
            case .number(let number) where number.isFinite:
                return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : "\(number)"
            default:
                return nil
            }
        }
    }

    /// The arguments of one key's value.
    private static func values(
        of value: Value?,
        key: String,
        option: CommandSpec.Option,
        path: String
    ) throws(Arguments.UsageError) -> [String] {
        func wrong(_ expected: String) -> Arguments.UsageError {
            .init(message: "--config \(path): '\(key)' takes \(expected)")
        }
        guard option.value != nil else {
            guard case .flag(let flag)? = value else { throw wrong("true or false") }
            return flag ? ["--\(option.name)"] : []
        }
        if case .list(let list)? = value {
            guard option.repeatable || option.name == "environment" else { throw wrong("one value") }
            var texts: [String] = []
            for item in list {
                guard let text = item.scalar else { throw wrong("strings") }
                texts.append(text)
            }
            guard !texts.isEmpty else { throw wrong("at least one value") }
            if option.name == "environment" {
                return ["--environment", texts.joined(separator: ",")]
            }
            return texts.flatMap { ["--\(option.name)", $0] }
        }
        guard let text = value?.scalar else { throw wrong("a string or a number") }
        return ["--\(option.name)", text]
    }

    /// A key as it is compared: lower case, without dashes.
    static func normalized(_ key: String) -> String {
        key.lowercased().filter { $0 != "-" }
    }
}
