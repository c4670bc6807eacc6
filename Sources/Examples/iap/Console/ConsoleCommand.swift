import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPPurchaseServer

/// `iap console`: the operators of the console `iap serve` serves.
enum ConsoleCommand {
    static let addOperator = CommandSpec(
        name: "console add-operator",
        summary: "add an operator of the console, or give one a new role and password",
        synopsis: ["NAME --role viewer|support|admin --operators-file FILE"],
        discussion: """
            Reads the operator's password as one line from standard input (never from the command line; no
            terminal needed, nothing asked twice), at least \(ConsoleOperators.minimumPasswordLength) characters, and
            writes it to the operators file as a PBKDF2-HMAC-SHA256 hash (\(ConsoleOperators.iterations) iterations,
            a random salt of its own), replacing the file whole and privately (0600): a crash leaves the old file or
            the new one. The file is created when missing; an operator of the same name gets the new role and
            password. A name is 1 to \(ConsoleOperators.maximumNameLength) letters, digits, '.', '_', '-' or '@'.

            Roles: viewer looks only; support also redelivers and retries; admin also gives dead letters up.
            Prints 'added NAME (ROLE)' or 'updated NAME (ROLE)'. Exit status: 0, 1 when the file cannot be read or
            written, 2 usage error.
            """,
        options: [
            .value("role", "ROLE", "viewer, support or admin (required)"),
            .value("operators-file", "FILE", "the operators file, 0600 (required)"),
        ],
        examples: [
            "printf '%s\\n' \"$PASSWORD\" | iap console add-operator carol --role support --operators-file ops.json"
        ]
    )

    static let spec = CommandSpec(
        name: "console",
        summary: "the console's operators: add-operator",
        synopsis: ["add-operator NAME --role ROLE --operators-file FILE"],
        discussion: """
            The operators who sign in to the console of 'iap serve', each with a name, a role and a password kept as
            a slow, salted hash in a private operators file.
            """,
        subcommands: [addOperator],
        examples: ["iap console add-operator --help"]
    )

    static func run(_ arguments: [String]) async -> Never {
        let (_, rest) = spec.subcommand(arguments)
        do {
            terminate(try add(rest))
        } catch let error as Arguments.UsageError {
            addOperator.fail(error)
        } catch {
            let failure = IAPError.wrapping(error, as: .internalError, "the console command failed")
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            terminate(.rejected)
        }
    }

    private static func add(_ arguments: [String]) throws -> ExitCode {
        let parsed = addOperator.parse(arguments)
        guard parsed.positionals.count == 1, let name = parsed.positionals.first else {
            throw Arguments.UsageError(message: "give the operator's name, once")
        }
        guard ConsoleOperators.isValid(name: name) else {
            throw Arguments.UsageError(
                message: "an operator's name is 1 to \(ConsoleOperators.maximumNameLength) letters, digits, '.', '_', "
                    + "'-' or '@'"
            )
        }
        guard let roleText = try parsed.value("role") else {
            throw Arguments.UsageError(message: "--role viewer|support|admin is required")
        }
        guard let role = ConsoleRole(rawValue: roleText) else {
            throw Arguments.UsageError(message: "--role must be viewer, support or admin, not '\(roleText)'")
        }
        guard let path = try parsed.value("operators-file") else {
            throw Arguments.UsageError(message: "--operators-file FILE is required")
        }
        guard var line = readLine(strippingNewline: true) else {
            throw Arguments.UsageError(message: "no password on standard input: give it as one line")
        }
        if line.hasSuffix("\r") {
            line.removeLast()
        }
        guard line.count >= ConsoleOperators.minimumPasswordLength else {
            throw Arguments.UsageError(
                message: "the password on standard input has fewer than \(ConsoleOperators.minimumPasswordLength) "
                    + "characters"
            )
        }
        let file = URL(fileURLWithPath: path)
        var operators =
            FileManager.default.fileExists(atPath: path)
            ? try ConsoleOperators(contentsOf: file, derivation: PBKDF2HMACSHA256())
            : ConsoleOperators(derivation: PBKDF2HMACSHA256())
        let existed = try operators.set(name: name, role: role, password: line)
        try operators.write(to: file)
        Output.line("\(existed ? "updated" : "added") \(name) (\(role.rawValue))")
        return .success
    }
}
