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
        guard parts.count == 3, let bytes = Base64.decodeURL(parts[1]) else {
            throw IAPError(.malformedSignedData, "the signed \(what) is not a compact JWS")
        }
        do {
            return try AppStoreJSON.makeDecoder().decode(Payload.self, from: Data(bytes))
        } catch {
            throw IAPError(.malformedSignedData, "the payload of the signed \(what) does not decode: \(error)")
        }
    }
}
