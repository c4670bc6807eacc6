internal import CIAPOpenSSL
import IAPCore

/// The entries OpenSSL left on the calling thread's error queue after a failed call.
///
/// OpenSSL keeps its error queue per thread (`ERR_get_error(3)`), so the queue must be read straight after the
/// failing call, on the same thread, with no suspension point in between. ``drain(after:)`` reads and empties it.
struct OpenSSLError: Error, Sendable, CustomStringConvertible {
    /// The OpenSSL function that failed, such as `"d2i_X509"`.
    let operation: String
    /// OpenSSL's error strings, oldest first (`error:0680007B:asn1 encoding routines::header too long`).
    let reasons: [String]

    var description: String {
        reasons.isEmpty ? "\(operation) failed" : "\(operation) failed: \(reasons.joined(separator: "; "))"
    }

    /// Reads and empties the calling thread's OpenSSL error queue.
    ///
    /// - Parameter operation: The OpenSSL function that just failed.
    /// - Returns: The failure with every queued reason.
    static func drain(after operation: String) -> OpenSSLError {
        var reasons: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while true {
            let code = ERR_get_error()
            if code == 0 {
                break
            }
            if reasons.count < 8 {
                ERR_error_string_n(code, &buffer, buffer.count)
                let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
                reasons.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        return OpenSSLError(operation: operation, reasons: reasons)
    }
}

extension IAPError {
    /// Creates an error for a failed OpenSSL call, draining the calling thread's error queue into it.
    ///
    /// Call this straight after the failing call, before anything else can touch the queue.
    ///
    /// - Parameters:
    ///   - code: The error code.
    ///   - message: What the caller was trying to do.
    ///   - operation: The OpenSSL function that failed.
    /// - Returns: An error whose message ends with OpenSSL's own reasons and whose `underlying` is the
    ///   ``OpenSSLError``.
    static func openSSL(_ code: Code, _ message: String, operation: String) -> IAPError {
        let error = OpenSSLError.drain(after: operation)
        return IAPError(code, "\(message): \(error)", underlying: error)
    }
}
