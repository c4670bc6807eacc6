import Foundation
import IAPCore

/// Appends each fulfillment call to a file, durably, for the crash test: which idempotency keys were handed
/// to the hook, and how often.
final class GrantLog: Sendable {
    let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw Arguments.UsageError(message: "cannot open --grant-log \(path): \(String(cString: strerror(errno)))")
        }
    }

    func append(_ line: String) throws {
        let bytes = Array((line + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else {
            throw IAPError(.fulfillmentFailed, "the grant log could not be written")
        }
    }
}
