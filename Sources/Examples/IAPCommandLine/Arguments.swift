import Foundation

/// A small, strict command-line parser: `--name value` (or `--name=value`) options, repeatable where asked,
/// `--flag` switches and positional arguments, with usage errors that name the problem.
///
/// Commands do not call it directly: ``CommandSpec/parse(_:)`` parses against the options a command declares,
/// answers `--help` and `-h`, and reports usage errors.
public struct Arguments: Sendable {
    /// A problem with the command line: what ``CommandSpec/fail(_:)`` reports in one line, with exit status 2.
    public struct UsageError: Error, Sendable {
        /// What is wrong, as the user reads it (`--runs must be a whole number between 1 and 1000`).
        public let message: String

        /// A usage error.
        ///
        /// - Parameter message: What is wrong, naming the option as the user typed it.
        public init(message: String) {
            self.message = message
        }
    }

    /// The values of each option that takes one, by name (without the leading `--`), in the order given.
    public private(set) var options: [String: [String]] = [:]
    /// The switches given, by name.
    public private(set) var flags: Set<String> = []
    /// The arguments that are not options, in order (everything after `--`, and `-` for standard input).
    public private(set) var positionals: [String] = []
    /// Whether `--help` or `-h` was given (before any `--`).
    public private(set) var helpRequested = false
    /// The first thing wrong with the arguments, if any; scanning goes on past it so that `--help` anywhere wins.
    public private(set) var problem: UsageError?
    /// The names each option that has aliases was given under (`api-url` → `base-url`), in order.
    private var spellings: [String: [String]] = [:]

    /// Scans `arguments` against the options that take a value and the flags; never fails, but records the
    /// first problem in ``problem`` (``CommandSpec/parse(_:)`` reports it).
    ///
    /// An alias (`--base-url` for `--api-url`) is read as its option: the value is filed under the option's name,
    /// so giving both is giving the option twice.
    ///
    /// - Parameters:
    ///   - arguments: The command line after the command's words.
    ///   - valued: The names of the options that take a value.
    ///   - known: The names of the switches.
    ///   - aliases: Other names of options, each to the option's name.
    public init(
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
    ///
    /// - Parameter name: The option's name, without the leading `--`.
    /// - Returns: The option as the user typed it, with its `--`.
    public func spelling(_ name: String) -> String {
        "--" + (spellings[name]?.first ?? name)
    }

    /// The single value of an option; a repeated single-value option is a usage error.
    ///
    /// - Parameter name: The option's name, without the leading `--`.
    /// - Returns: Its value, or `nil` when it was not given.
    /// - Throws: A usage error when it was given more than once (or under two of its names).
    public func value(_ name: String) throws(UsageError) -> String? {
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
    ///
    /// - Parameter name: The option's name, without the leading `--`.
    /// - Returns: Its values in the order given; empty when it was not given.
    public func values(_ name: String) -> [String] {
        options[name] ?? []
    }

    /// Whether a switch was given.
    ///
    /// - Parameter flag: The switch's name, without the leading `--`.
    /// - Returns: `true` when it was given.
    public func has(_ flag: String) -> Bool {
        flags.contains(flag)
    }

    /// At most one positional argument.
    ///
    /// - Returns: The positional argument, or `nil` when there is none.
    /// - Throws: A usage error when there is more than one.
    public func singlePositional() throws(UsageError) -> String? {
        guard positionals.count <= 1 else {
            throw UsageError(
                message: "expected at most one input, got \(positionals.count): \(positionals.joined(separator: " "))"
            )
        }
        return positionals.first
    }

    /// No positional argument.
    ///
    /// - Throws: A usage error that names the first positional argument, when there is one.
    public func noPositionals() throws(UsageError) {
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
    public static func shown(url text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.range(of: "://").map(\.upperBound) ?? text.startIndex
        guard start <= at else { return text }
        return String(text[..<start]) + "***" + String(text[at...])
    }
}
