#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// Reads the payload of a compact JWS without verifying it: only to route and display on the device. The server
/// verifies every JWS before it grants anything.
enum UnverifiedPayload {
    /// Decodes the payload of a compact JWS as `type`.
    ///
    /// - Parameters:
    ///   - type: The payload type.
    ///   - jws: The compact JWS.
    ///   - what: What the JWS should be, for the error message ("transaction", "renewal information").
    /// - Returns: The payload.
    /// - Throws: ``IAPError`` `.malformedSignedData` when it is not three base64url parts with a JSON payload of
    ///   `type`.
    static func decode<Payload: Decodable>(_ type: Payload.Type, from jws: String, what: String) throws -> Payload {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = base64URLDecode(parts[1]) else {
            throw IAPError(.malformedSignedData, "the signed \(what) is not a compact JWS")
        }
        do {
            return try AppStoreJSON.makeDecoder().decode(Payload.self, from: data)
        } catch {
            throw IAPError(.malformedSignedData, "the payload of the signed \(what) does not decode: \(error)")
        }
    }

    /// Decodes unpadded base64url; `nil` for padded or malformed text.
    static func base64URLDecode(_ text: Substring) -> Data? {
        var base64 = String(
            text.map { character -> Character in
                switch character {
                case "-": "+"
                case "_": "/"
                default: character
                }
            }
        )
        guard !base64.contains("=") else { return nil }
        let remainder = base64.utf8.count % 4
        if remainder == 1 {
            return nil
        }
        if remainder > 0 {
            base64 += String(repeating: "=", count: 4 - remainder)
        }
        return Data(base64Encoded: base64)
    }
}
