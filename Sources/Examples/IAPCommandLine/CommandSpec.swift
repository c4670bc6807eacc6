import Foundation

/// What a command of `iap` or `iap-bench` accepts and how it explains itself: the options the parser knows, and the
/// usage that `--help` prints.
///
/// A command with ``subcommands`` is a group (`iap ledger`, `iap api`, ...): ``subcommand(_:)`` picks the
/// subcommand, and the group's `--help` lists them. Every command and subcommand answers `--help` and `-h` with
/// its own usage on standard output and exit status 0; a usage error is one line on standard error that names
/// the problem and the `--help` to read, with exit status 2.
public struct CommandSpec: Sendable {
    /// One option or switch.
    public struct Option: Sendable {
        /// The name, without the leading `--`.
        public let name: String
        /// What its value is called in the usage (`DIR`, `N`, ...); `nil` for a switch.
        public let value: String?
        /// One line: what it does.
        public let help: String
        /// Whether it may be given more than once.
        public let repeatable: Bool
        /// Other names that mean the same option (`base-url` for `api-url`), without the leading `--`: the parser
        /// files a value given under an alias under ``name``, and the usage names the aliases beside the help.
        public var aliases: [String] = []

        /// An option that takes a value.
        ///
        /// - Parameters:
        ///   - name: Its name, without the leading `--`.
        ///   - placeholder: What its value is called in the usage (`DIR`).
        ///   - help: One line: what it does.
        ///   - repeatable: Whether it may be given more than once.
        ///   - aliases: Other names of the same option, without the leading `--`.
        /// - Returns: The option.
        public static func value(
            _ name: String,
            _ placeholder: String,
            _ help: String,
            repeatable: Bool = false,
            aliases: [String] = []
        ) -> Option {
            Option(name: name, value: placeholder, help: help, repeatable: repeatable, aliases: aliases)
        }

        /// A switch.
        ///
        /// - Parameters:
        ///   - name: Its name, without the leading `--`.
        ///   - help: One line: what it does.
        /// - Returns: The switch.
        public static func flag(_ name: String, _ help: String) -> Option {
            Option(name: name, value: nil, help: help, repeatable: false)
        }

        /// The help the usage prints: the line, then what may be given more than once and the aliases.
        public var fullHelp: String {
            help + (repeatable ? " (repeatable)" : "")
                + (aliases.isEmpty ? "" : " (alias: \(aliases.map { "--\($0)" }.joined(separator: ", ")))")
        }

        /// How the usage shows it: `--data DIR`.
        public var label: String {
            "--\(name)" + (value.map { " \($0)" } ?? "")
        }
    }

    /// The executable that runs it: `iap` or `iap-bench`.
    public let program: String
    /// The words after the program that name it: `"ledger history"`; empty for the tool itself.
    public let name: String
    /// One line, for the list of the group it belongs to.
    public let summary: String
    /// The forms of the command line, each without the leading `iap <name>`; a line that starts with a space
    /// goes on with the form above it.
    public var synopsis: [String] = []
    /// What it does, as paragraphs; the summary when empty.
    public var discussion: String = ""
    /// Its options, in the order the usage lists them.
    public var options: [Option] = []
    /// Its subcommands, when it is a group.
    public var subcommands: [CommandSpec] = []
    /// Command lines to try.
    public var examples: [String] = []

    /// A command.
    ///
    /// - Parameters:
    ///   - program: The executable that runs it (default `iap`).
    ///   - name: The words after the program that name it; empty for the program itself.
    ///   - summary: One line, for the list of the group it belongs to.
    ///   - synopsis: The forms of the command line, without the leading program and name.
    ///   - discussion: What it does, as paragraphs; the summary when empty.
    ///   - options: Its options, in the order the usage lists them.
    ///   - subcommands: Its subcommands, when it is a group.
    ///   - examples: Command lines to try.
    public init(
        program: String = "iap",
        name: String,
        summary: String,
        synopsis: [String] = [],
        discussion: String = "",
        options: [Option] = [],
        subcommands: [CommandSpec] = [],
        examples: [String] = []
    ) {
        self.program = program
        self.name = name
        self.summary = summary
        self.synopsis = synopsis
        self.discussion = discussion
        self.options = options
        self.subcommands = subcommands
        self.examples = examples
    }

    /// The last word of the name: what selects it in its group.
    public var word: String {
        name.split(separator: " ").last.map(String.init) ?? name
    }

    /// The command line that prints this usage.
    public var helpCommand: String {
        ([program] + (name.isEmpty ? [] : [name]) + ["--help"]).joined(separator: " ")
    }

    /// The text `--help` prints.
    public var usage: String {
        let command = ([program] + (name.isEmpty ? [] : [name])).joined(separator: " ")
        var lines: [String] = []
        // A line that starts with a space goes on with the form above it.
        var forms: [String] = []
        for line in synopsis {
            if line.hasPrefix(" "), let last = forms.popLast() {
                forms.append(last + line)
            } else {
                forms.append(line)
            }
        }
        if forms.isEmpty {
            forms = [subcommands.isEmpty ? "[options]" : "<command> [options]"]
        }
        let continuation = String(repeating: " ", count: 8 + command.count)
        for (index, form) in forms.enumerated() {
            // A long form is broken between options, never inside one.
            let head = (index == 0 ? "usage: " : "       ") + command + " "
            let parts = Self.words(of: form)
            var line = head
            for part in parts {
                if line.count > head.count, line.count + 1 + part.count > 100 {
                    lines.append(line)
                    line = continuation
                }
                line += (line.count > head.count && line != continuation ? " " : "") + part
            }
            lines.append(line.count > head.count ? line : String(head.dropLast()))
        }
        lines.append("")
        lines.append(discussion.isEmpty ? summary.prefix(1).uppercased() + summary.dropFirst() + "." : discussion)
        if !subcommands.isEmpty {
            lines.append("")
            lines.append("commands:")
            let width = (subcommands.map(\.word.count).max() ?? 0) + 2
            for subcommand in subcommands {
                lines.append(
                    "  " + subcommand.word.padding(toLength: width, withPad: " ", startingAt: 0) + subcommand.summary
                )
            }
        }
        let listed =
            options.map { ($0.label, $0.fullHelp) } + [
                ("-h, --help", "print this help and exit")
            ]
        lines.append("")
        lines.append("options:")
        let width = min((listed.map(\.0.count).max() ?? 0) + 2, 30)
        let indent = String(repeating: " ", count: width + 2)
        for (label, help) in listed {
            var wrapped = Self.wrap(help, width: max(40, 100 - indent.count))
            if label.count + 2 > width {
                lines.append("  " + label)
            } else {
                lines.append("  " + label.padding(toLength: width, withPad: " ", startingAt: 0) + wrapped.removeFirst())
            }
            lines += wrapped.map { indent + $0 }
        }
        if !subcommands.isEmpty {
            lines.append("")
            lines.append("Run '\(command) <command> --help' for a command's options.")
        }
        if !examples.isEmpty {
            lines.append("")
            lines.append(examples.count == 1 ? "example:" : "examples:")
            for example in examples {
                // A long command line goes on over several, as a shell reads it.
                let parts = Self.wrap(example, width: 94)
                for (index, part) in parts.enumerated() {
                    lines.append((index == 0 ? "  " : "      ") + part + (index < parts.count - 1 ? " \\" : ""))
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The words of a usage form: split at spaces outside brackets, so that `[--root FILE.der]...` stays whole.
    static func words(of form: String) -> [String] {
        var words: [String] = []
        var word = ""
        var depth = 0
        for character in form {
            switch character {
            case "[", "(": depth += 1
            case "]", ")": depth -= 1
            default: break
            }
            if character == " ", depth == 0 {
                if !word.isEmpty {
                    words.append(word)
                }
                word = ""
            } else {
                word.append(character)
            }
        }
        if !word.isEmpty {
            words.append(word)
        }
        // An option stays with its value: `--user ID`.
        var joined: [String] = []
        for word in words {
            if let last = joined.last, last.hasPrefix("--"), !last.contains(" "), let first = word.first,
                first.isUppercase || first.isNumber
            {
                joined[joined.count - 1] += " " + word
            } else {
                joined.append(word)
            }
        }
        return joined
    }

    /// A line of text broken at spaces into lines of at most `width` characters (a longer word stands alone).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        lines.append(line)
        return lines
    }

    /// Parses a command's arguments against its options: `--help` or `-h` prints the usage and exits 0, a usage
    /// error exits 2 (see ``fail(_:)``).
    ///
    /// - Parameter arguments: The command line after the command's words.
    /// - Returns: The parsed arguments, free of usage errors.
    public func parse(_ arguments: [String]) -> Arguments {
        let parsed = Arguments(
            scanning: arguments,
            options: Set(options.filter { $0.value != nil }.map(\.name)),
            flags: Set(options.filter { $0.value == nil }.map(\.name)),
            aliases: Dictionary(
                options.flatMap { option in option.aliases.map { ($0, option.name) } },
                uniquingKeysWith: { first, _ in first }
            )
        )
        if parsed.helpRequested {
            printUsage()
        }
        if let problem = parsed.problem {
            fail(problem)
        }
        return parsed
    }

    /// Picks a group's subcommand from the first argument, and returns it with the rest.
    ///
    /// With no argument, prints the group's usage on standard error and exits 2; `--help`, `-h` or `help`
    /// prints it on standard output and exits 0 (`help WORD...` prints a subcommand's); an unknown subcommand
    /// is a usage error.
    ///
    /// - Parameter arguments: The command line after the group's words.
    /// - Returns: The subcommand's spec and the arguments after its word.
    public func subcommand(_ arguments: [String]) -> (CommandSpec, [String]) {
        guard let first = arguments.first else {
            Output.error(usage)
            terminate(.usage)
        }
        if first == "help" {
            var spec = self
            for word in arguments.dropFirst() {
                guard let next = spec.subcommands.first(where: { $0.word == word }) else {
                    spec.fail(.init(message: "no command '\(word)'"))
                }
                spec = next
            }
            spec.printUsage()
        }
        if first == "--help" || first == "-h" {
            printUsage()
        }
        guard let subcommand = subcommands.first(where: { $0.word == first }) else {
            if first.hasPrefix("-") {
                fail(.init(message: "unknown option \(first); a command comes first"))
            }
            let noun = name.isEmpty ? "command" : "\(name) command"
            fail(.init(message: "unknown \(noun) '\(first)'"))
        }
        return (subcommand, Array(arguments.dropFirst()))
    }

    /// Prints the usage on standard output and exits 0.
    public func printUsage() -> Never {
        Output.line(usage)
        terminate(.success)
    }

    /// Reports a usage error in one line, `error: usage: <problem> (see iap <command> --help)`, and exits 2.
    ///
    /// - Parameter error: The problem.
    public func fail(_ error: Arguments.UsageError) -> Never {
        Output.error("error: usage: \(error.message) (see \(helpCommand))")
        terminate(.usage)
    }
}
