import Foundation
import IAPCore

/// Appends each fulfillment call to a file, durably, for the crash test: which idempotency keys were handed
/// to the hook, and how often.
final class GrantLog: Sendable {
    /// The log, private (0600) and never reached through a link.
    private let file: SystemFile

    init(path: String) throws {
        do {
            file = try SystemFile.open(path, flags: O_WRONLY | O_CREAT | O_APPEND)
        } catch let error as IAPError {
            throw Arguments.UsageError(message: "cannot open --grant-log \(path): \(error.message)")
        }
    }

    func append(_ line: String) throws {
        do {
            try file.write(Array((line + "\n").utf8))
            try file.sync()
        } catch {
            throw IAPError(.fulfillmentFailed, "the grant log could not be written")
        }
    }
}
