/// A small, strict command-line parser: `--name value` options (repeatable where asked), `--flag`
/// switches and positional arguments, with usage errors that name the problem.
struct Arguments {
    struct UsageError: Error {
        let message: String
    }

    private(set) var options: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    /// Parses `arguments` against the options that take a value and the flags.
    init(_ arguments: [String], options valued: Set<String>, flags known: Set<String>) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("--") {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if valued.contains(name) {
                if let inlineValue {
                    options[name, default: []].append(inlineValue)
                } else {
                    guard index < arguments.count else {
                        throw UsageError(message: "--\(name) needs a value")
                    }
                    options[name, default: []].append(arguments[index])
                    index += 1
                }
            } else if known.contains(name) {
                guard inlineValue == nil else {
                    throw UsageError(message: "--\(name) takes no value")
                }
                flags.insert(name)
            } else {
                throw UsageError(message: "unknown option --\(name)")
            }
        }
    }

    /// The single value of an option; a repeated single-value option is a usage error.
    func value(_ name: String) throws(UsageError) -> String? {
        guard let values = options[name] else { return nil }
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
}

extension Arguments {
    /// Parses a command's arguments the way every `iap` command does: `--help` prints the usage and exits 0,
    /// a usage error prints it and exits 2.
    static func forCommand(_ arguments: [String], options: Set<String>, flags: Set<String>, usage: String) -> Arguments
    {
        do {
            let parsed = try Arguments(arguments, options: options, flags: flags.union(["help"]))
            if parsed.has("help") {
                Output.line(usage)
                terminate(.success)
            }
            return parsed
        } catch {
            exitWithUsage(error, usage: usage)
        }
    }
}

/// Reports a usage error with the command's usage, and exits 2.
func exitWithUsage(_ error: Arguments.UsageError, usage: String) -> Never {
    Output.error("error: usage: \(error.message)")
    Output.error(usage)
    terminate(.usage)
}
