import Foundation

/// A small, strict command-line parser: `--name value` (or `--name=value`) options, repeatable where asked,
/// `--flag` switches and positional arguments, with usage errors that name the problem.
///
/// Commands do not call it directly: ``CommandSpec/parse(_:)`` parses against the options a command declares,
/// answers `--help` and `-h`, and reports usage errors.
struct Arguments {
    struct UsageError: Error {
        let message: String
    }

    private(set) var options: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []
    /// Whether `--help` or `-h` was given (before any `--`).
    private(set) var helpRequested = false
    /// The first thing wrong with the arguments, if any; scanning goes on past it so that `--help` anywhere wins.
    private(set) var problem: UsageError?
    /// The names each option that has aliases was given under (`api-url` → `base-url`), in order.
    private var spellings: [String: [String]] = [:]

    /// Scans `arguments` against the options that take a value and the flags; never fails, but records the
    /// first problem in ``problem`` (``CommandSpec/parse(_:)`` reports it).
    ///
    /// An alias (`--base-url` for `--api-url`) is read as its option: the value is filed under the option's name,
    /// so giving both is giving the option twice.
    init(
        scanning arguments: [String],
        options valued: Set<String>,
        flags known: Set<String>,
        aliases: [String: String] = [:]
    ) {
        var index = 0
        var onlyPositionals = false
        func note(_ message: String) {
            if problem == nil {
                problem = UsageError(message: message)
            }
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument == "-h" || argument == "--help" {
                helpRequested = true
                continue
            }
            guard argument.hasPrefix("--") else {
                note("unknown option \(argument)")
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            // A message names the option as it was typed.
            let typed = name
            if let canonical = aliases[name] ?? (aliases.values.contains(name) ? name : nil) {
                if spellings[canonical]?.contains(name) != true {
                    spellings[canonical, default: []].append(name)
                }
                name = canonical
            }
            if valued.contains(name) {
                if let inlineValue {
                    options[name, default: []].append(inlineValue)
                } else if index < arguments.count {
                    options[name, default: []].append(arguments[index])
                    index += 1
                } else {
                    note("--\(typed) needs a value")
                }
            } else if known.contains(name) {
                if inlineValue != nil {
                    note("--\(typed) takes no value")
                }
                flags.insert(name)
            } else {
                note("unknown option --\(typed)")
            }
        }
    }

    /// How a message names an option: `--api-url`, or the alias it was given under (`--base-url`).
    func spelling(_ name: String) -> String {
        "--" + (spellings[name]?.first ?? name)
    }

    /// The single value of an option; a repeated single-value option is a usage error.
    func value(_ name: String) throws(UsageError) -> String? {
        guard let values = options[name] else { return nil }
        if let names = spellings[name], names.count > 1 {
            throw UsageError(
                message: names.map { "--\($0)" }.joined(separator: " and ") + " name the same option: give one"
            )
        }
        guard values.count == 1, let value = values.first else {
            throw UsageError(message: "--\(name) may be given only once")
        }
        return value
    }

    /// Every value of a repeatable option.
    func values(_ name: String) -> [String] {
        options[name] ?? []
    }

    func has(_ flag: String) -> Bool {
        flags.contains(flag)
    }

    /// At most one positional argument.
    func singlePositional() throws(UsageError) -> String? {
        guard positionals.count <= 1 else {
            throw UsageError(
                message: "expected at most one input, got \(positionals.count): \(positionals.joined(separator: " "))"
            )
        }
        return positionals.first
    }

    /// No positional argument.
    func noPositionals() throws(UsageError) {
        if let first = positionals.first {
            throw UsageError(message: "unexpected argument '\(first)'")
        }
    }
}

extension Arguments {
    /// A URL given on the command line as a message may show it: without what stands before an `@` (a user and a
    /// password), which a message must never repeat.
    ///
    /// - Parameter text: The option's value.
    /// - Returns: The text, its userinfo replaced by `***`.
    static func shown(url text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.range(of: "://").map(\.upperBound) ?? text.startIndex
        guard start <= at else { return text }
        return String(text[..<start]) + "***" + String(text[at...])
    }
}
