import Foundation
import IAPCore

/// Reads the payload of a compact JWS the emulator signed itself, without checking the signature.
enum EmulatorJWS {
    /// The decoded payload segment, or `nil` when the text is not a compact JWS.
    ///
    /// - Parameter token: A compact JWS.
    /// - Returns: The payload bytes (JSON).
    static func payload(of token: String) -> Data? {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else { return nil }
        return Base64.decodeURL(segments[1]).map { Data($0) }
    }
}
