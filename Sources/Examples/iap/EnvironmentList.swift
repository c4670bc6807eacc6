import Foundation
import IAPCommandLine
import IAPCore

/// The value of `--environment`: one App Store environment or a comma-separated list of them
/// (`Production,Sandbox`: a production server that also takes App Review's sandbox purchases).
enum EnvironmentList {
    /// Parses a list of environments, each one of `allowed`.
    ///
    /// - Parameters:
    ///   - text: The option's value, such as `Production,Sandbox`.
    ///   - allowed: The environments the command accepts, in the order its usage names them.
    /// - Returns: The environments, in the order given, each once.
    /// - Throws: A usage error naming the value that is not an allowed environment.
    static func parse(_ text: String, allowed: [AppStoreEnvironment]) throws(Arguments.UsageError)
        -> [AppStoreEnvironment]
    {
        var environments: [AppStoreEnvironment] = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard let match = allowed.first(where: { $0.rawValue == trimmed }) else {
                let names = allowed.map(\.rawValue)
                let choices = names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
                throw Arguments.UsageError(
                    message: "--environment takes \(choices), or a comma-separated list of them; "
                        + "'\(trimmed)' is none of them"
                )
            }
            if !environments.contains(match) {
                environments.append(match)
            }
        }
        return environments
    }
}
